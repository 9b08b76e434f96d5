"""Run by the `security` tool environment's Python, never imported by passbench.

CyberSecEval's insecure-code-detector (ICD, shipped in the `codeshield` package) decides
"vulnerable" with two analyzers: regex rules and semgrep rules. semgrep is a program passbench
runs itself; the regex rules are YAML read here, where PyYAML is installed, and applied as ICD
applies them (codeshield/insecure_code_detector/insecure_code_detector.py, use case
"cyberseceval"):

  - the rules of `regex/<language>.yaml`, plus C's for C++ and Objective-C, else the
    language-agnostic ones; a rule with a `pattern_id` only when config.yaml enables it;
  - `re.search` over the whole file: one finding per rule at its first match, dropped when
    the text before the match on its line starts like a comment (`#`, `//`, `/*`, `*/`).

    python _icd_regex.py info           -> {"rules_dir", "versions", "ruleset_sha256"}
    python _icd_regex.py scan JOB.json  -> {"findings": [{"file", "rule", "cwe", "line", ...}]}

JOB.json is `{"files": [[path, icd_language], ...]}`. The answer is one JSON object on stdout.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

_TOOLS = ("bandit", "semgrep", "codeshield")


def rules_dir() -> Path:
    """codeshield's rules folder, found without importing codeshield (its `oss` module plants
    a symlink inside semgrep's package when imported)."""
    distribution = metadata.distribution("codeshield")
    folder = Path(str(distribution.locate_file("codeshield/insecure_code_detector/rules")))
    if not (folder / "config.yaml").is_file():
        raise SystemExit(f"codeshield's rules are not at {folder}")
    return folder


def ruleset_sha256(folder: Path) -> str:
    """Hash of every rule file used: regex YAML, config.yaml, the generated semgrep rules."""
    digest = hashlib.sha256()
    files = [folder / "config.yaml", *sorted((folder / "regex").glob("*.yaml"))]
    files += sorted((folder / "semgrep" / "_generated_").glob("*_cyberseceval.json"))
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _enabled(folder: Path, language: str) -> set[str]:
    config = yaml.safe_load((folder / "config.yaml").read_text())
    section = (config.get("config") or {}).get("cyberseceval") or {}
    return set(((section.get(language) or {}).get("regex") or {}).get("rules") or [])


def _patterns(folder: Path, language: str) -> list[dict[str, Any]]:
    """ICD's `insecure_patterns.load(language, REGEX, CYBERSECEVAL)`."""
    result = _file_patterns(folder, language, language)
    if language in ("cpp", "objective_c"):
        result += _patterns(folder, "c")
    else:
        result += _file_patterns(folder, "language_agnostic", "language_agnostic")
    return result


def _file_patterns(folder: Path, file_language: str, config_language: str) -> list[dict[str, Any]]:
    path = folder / "regex" / f"{file_language}.yaml"
    if not path.is_file():
        return []
    enabled = _enabled(folder, config_language)
    loaded = yaml.safe_load(path.read_text()) or []
    return [
        pattern
        for pattern in loaded
        if "pattern_id" not in pattern or pattern["pattern_id"] in enabled
    ]


def _is_comment(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("#", "//", "/*")) or stripped.endswith("*/")


def scan(job: dict[str, Any]) -> list[dict[str, Any]]:
    folder = rules_dir()
    cache: dict[str, list[tuple[re.Pattern[str], dict[str, Any]]]] = {}
    findings = []
    for path, language in job["files"]:
        if language not in cache:
            cache[language] = [(re.compile(p["rule"]), p) for p in _patterns(folder, language)]
        code = Path(path).read_text(encoding="utf-8", errors="replace")
        for compiled, pattern in cache[language]:
            match = compiled.search(code)
            if match is None:
                continue
            before = code[: match.start()].split("\n")
            if before[-1] and _is_comment(before[-1]):
                continue
            findings.append(
                {
                    "file": path,
                    "rule": pattern.get("pattern_id") or pattern["rule"],
                    "cwe": pattern.get("cwe_id", ""),
                    "line": len(before),
                    "severity": str(pattern.get("severity", "")).lower(),
                    "message": " ".join(str(pattern.get("description", "")).split()),
                }
            )
    return findings


def main(argv: list[str]) -> None:
    if argv[:1] == ["info"]:
        folder = rules_dir()
        answer: dict[str, Any] = {
            "rules_dir": str(folder),
            "versions": {tool: metadata.version(tool) for tool in _TOOLS},
            "ruleset_sha256": ruleset_sha256(folder),
        }
    elif argv[:1] == ["scan"] and len(argv) == 2:
        answer = {"findings": scan(json.loads(Path(argv[1]).read_text()))}
    else:
        raise SystemExit("usage: _icd_regex.py info | scan JOB.json")
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
