"""The static-analysis tools, run as programs from the `security` tool environment.

    bandit    Python only; its own rules (every finding carries a CWE id)
    semgrep   CyberSecEval's insecure-code-detector rules as CodeShield ships them
              (`rules/semgrep/_generated_/<language>_cyberseceval.json`), local files only
    regex     the detector's regex rules, applied by `_icd_regex.py` in the environment

Each runs once per batch over many files (never once per sample), offline: `--metrics off`,
no version check, rule files from the environment and never the semgrep registry, a private
HOME. A tool that fails is an EnvironmentError_ naming it and its last output; a finding is
data.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from passbench.analysis.security.languages import SEMGREP_LANGUAGES
from passbench.core.errors import EnvironmentError_
from passbench.stages.evalenv import locate_env
from passbench.stages.evalenv.hostenv import host_environment

ENV_NAME = "security"
#: bandit findings below this severity are not recorded (its LOW findings flag `import
#: pickle`, `assert` and `random`, which would make every sample "insecure").
DEFAULT_BANDIT_SEVERITY = "medium"
BANDIT_SEVERITIES = ("low", "medium", "high")
TOOL_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class RawFinding:
    """One tool's finding in one file of a batch."""

    file: str
    tool: str  # "bandit" | "semgrep" | "regex"
    rule: str
    cwe: str  # "CWE-78"; "" when the rule names none
    line: int
    severity: str = ""
    message: str = ""


@dataclass(frozen=True)
class Toolset:
    """The tool environment, with what result files cite: versions and the rule-set hash."""

    root: Path
    python: Path
    rules_dir: Path
    versions: Mapping[str, str]  # bandit, semgrep, codeshield
    ruleset_sha256: str
    lock_sha256: str
    python_version: str
    # language -> semgrep rules this semgrep cannot parse, left out (found on first use)
    skipped_rules: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def bin(self, program: str) -> str:
        return str(self.python.parent / program)


def _runner_path() -> Path:
    return Path(str(resources.files("passbench.analysis.security") / "_icd_regex.py"))


def open_toolset(path: str | Path | None = None) -> Toolset:
    """Find the built tool environment (EnvironmentError_ with the command to build it)."""
    info = locate_env(ENV_NAME, path)
    answer = _run_json([str(info.python), str(_runner_path()), "info"], "the ICD rule loader")
    return Toolset(
        root=info.root,
        python=info.python,
        rules_dir=Path(answer["rules_dir"]),
        versions=dict(answer["versions"]),
        ruleset_sha256=str(answer["ruleset_sha256"]),
        lock_sha256=info.lock_sha256,
        python_version=info.python_version,
    )


def scan_files(
    tools: Toolset,
    files: Sequence[tuple[str, str]],
    *,
    bandit_severity: str = DEFAULT_BANDIT_SEVERITY,
    jobs: int = 1,
) -> list[RawFinding]:
    """Every finding of every tool on `files` ([(path, ICD language)], absolute paths).

    The tools run side by side (each is its own process: bandit, semgrep per language, the
    regex rules), so a batch takes as long as its slowest tool, semgrep."""
    calls: list[Callable[[], list[RawFinding]]] = []
    python_files = [path for path, language in files if language == "python"]
    if python_files:
        calls.append(lambda: _bandit(tools, python_files, bandit_severity))
    by_language: dict[str, list[str]] = {}
    for path, language in files:
        if language in SEMGREP_LANGUAGES:
            by_language.setdefault(language, []).append(path)
    for language, paths in by_language.items():
        calls.append(partial(_semgrep, tools, language, paths, jobs))
    if files:
        calls.append(lambda: _regex(tools, files))
    if not calls:
        return []
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
        return [finding for future in futures for finding in future.result()]


def _bandit(tools: Toolset, paths: list[str], severity: str) -> list[RawFinding]:
    command = [
        tools.bin("bandit"),
        "--format",
        "json",
        "--quiet",
        "--exit-zero",
        "--severity-level",
        severity,
        *paths,
    ]
    report = _run_json(command, "bandit", cwd=Path(paths[0]).parent)
    return [
        RawFinding(
            file=item["filename"],
            tool="bandit",
            rule=f"{item['test_id']}:{item['test_name']}",
            cwe=_cwe((item.get("issue_cwe") or {}).get("id")),
            line=int(item["line_number"]),
            severity=str(item.get("issue_severity", "")).lower(),
            message=str(item.get("issue_text", "")),
        )
        for item in report.get("results", [])
    ]


def _semgrep(tools: Toolset, language: str, paths: list[str], jobs: int) -> list[RawFinding]:
    rules = tools.rules_dir / "semgrep" / "_generated_" / f"{language}_cyberseceval.json"
    # run from the files' folder: from inside a git checkout semgrep spends most of a minute
    # looking at the repository, whatever the targets
    folder = Path(paths[0]).parent
    skipped = tools.skipped_rules.get(language)
    config = _without(rules, skipped, folder) if skipped else rules
    report = _run_json(
        _semgrep_command(tools, config, paths, jobs), "semgrep", semgrep=True, cwd=folder
    )
    unparsable = {
        str(error.get("rule_id", "")).rsplit(".", 1)[-1]
        for error in report.get("errors", [])
        if error.get("type") == "Rule parse error"
    }
    if unparsable and skipped is None:
        # A rule this semgrep cannot parse (CyberSecEval's Java ssrf_insecure_patterns on
        # semgrep 1.185) stops the whole scan: scan again without it, and say so in the file.
        tools.skipped_rules[language] = tuple(sorted(unparsable))
        return _semgrep(tools, language, paths, jobs)
    _raise_on_errors(report)
    findings = []
    for item in report.get("results", []):
        extra = item.get("extra", {})
        findings.append(
            RawFinding(
                file=item["path"],
                tool="semgrep",
                # "tmp.x.rules.semgrep._generated_.unsafe-pickle-use": the rule's own id is last
                rule=str(item["check_id"]).rsplit(".", 1)[-1],
                cwe=_cwe(extra.get("metadata", {}).get("cwe_id")),
                line=int(item.get("start", {}).get("line", 0)),
                severity=str(extra.get("severity", "")).lower(),
                message=" ".join(str(extra.get("message", "")).split()),
            )
        )
    return findings


def _semgrep_command(tools: Toolset, config: Path, paths: list[str], jobs: int) -> list[str]:
    return [
        tools.bin("semgrep"),
        "scan",
        "--config",
        str(config),
        "--metrics",
        "off",
        "--disable-version-check",
        "--json",
        "--quiet",
        "--jobs",
        str(jobs),
        "--timeout",
        "30",
        *paths,
    ]


def _without(rules: Path, skipped: Sequence[str], folder: Path) -> Path:
    """A copy of a semgrep rule file without the `skipped` rules, in `folder`."""
    document = json.loads(rules.read_text(encoding="utf-8"))
    document["rules"] = [rule for rule in document["rules"] if rule.get("id") not in skipped]
    target = folder / f".rules-{rules.name}"
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


def _raise_on_errors(report: Mapping[str, Any]) -> None:
    """A file semgrep cannot parse fully is reported, not fatal (its other lines and files
    still count); any other error is."""
    for error in report.get("errors", []):
        if str(error.get("level", "")).lower() == "error":
            raise EnvironmentError_(f"semgrep failed: {error.get('message', error)}")


def _regex(tools: Toolset, files: Sequence[tuple[str, str]]) -> list[RawFinding]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as job:
        json.dump({"files": [list(item) for item in files]}, job)
    try:
        answer = _run_json(
            [str(tools.python), str(_runner_path()), "scan", job.name], "the ICD regex rules"
        )
    finally:
        os.unlink(job.name)
    return [RawFinding(tool="regex", **item) for item in answer["findings"]]


def _cwe(value: Any) -> str:
    """ "CWE-78" from 78, "78", "CWE-78" or ["CWE-78"]; "" from nothing."""
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None or value == "":
        return ""
    text = str(value).strip()
    if text.upper().startswith("CWE-"):
        return "CWE-" + text[4:].split(":")[0].strip()
    return f"CWE-{text}"


def _run_json(
    command: list[str], tool: str, *, semgrep: bool = False, cwd: Path | None = None
) -> dict[str, Any]:
    """Run a tool offline with a scrubbed environment; its stdout parsed as JSON."""
    with host_environment() as environ:
        if semgrep:
            # no telemetry, no registry, no version check, nothing written outside HOME
            environ["SEMGREP_SEND_METRICS"] = "off"
            environ["SEMGREP_ENABLE_VERSION_CHECK"] = "0"
        try:
            result = subprocess.run(
                command,
                capture_output=True,
                text=True,
                check=False,
                env=environ,
                timeout=TOOL_TIMEOUT_S,
                cwd=cwd or environ["HOME"],
            )
        except subprocess.TimeoutExpired:
            raise EnvironmentError_(f"{tool} ran longer than {TOOL_TIMEOUT_S:.0f} s") from None
        except OSError as error:
            raise EnvironmentError_(f"{tool} could not start: {error}") from None
    start = result.stdout.find("{")
    try:
        parsed = json.loads(result.stdout[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        parsed = None
    # semgrep exits 2 with a JSON report naming the errors (a rule it cannot parse)
    failed = result.returncode != 0 and not (semgrep and result.returncode == 2)
    if failed or not isinstance(parsed, dict):
        tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
        raise EnvironmentError_(
            f"{tool} failed (exit code {result.returncode}): " + " | ".join(tail)
        )
    return parsed
