"""The security result file `<stem>_security.json` (docs/security.md describes every field),
and `security_scan`, which reads an input, scans it and writes that file.

    {"schema_version": 1, "kind": "passbench-security", "passbench_version", "created_at",
     "input": {"path", "kind", "sha256", "benchmark"},
     "tools": {"bandit", "semgrep", "codeshield"}, "ruleset_sha256", "semgrep_rules_skipped",
     "environment": {"name", "lock_sha256", "python_version"},
     "settings": {"bandit_severity"},
     "summary": {...figures (summary.py)...},
     "samples": [{"task_id", "sample_index", "language", "detector_language", "tools",
                  "status", "libs", "code_sha256", "findings": [{tool, rule, cwe, line, ...}]}]}

The file is written once, atomically, when every sample is scanned; until then the journal
beside it (`<file>.partial.jsonl`) holds what is done, and a re-run resumes from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from passbench.analysis.security.inputs import ScanInput, read_input
from passbench.analysis.security.scan import SampleScan, ScanSettings, scan_items
from passbench.analysis.security.summary import SecuritySummary, summarize
from passbench.analysis.security.tools import ENV_NAME, open_toolset
from passbench.core.errors import InputError
from passbench.core.progress import Progress
from passbench.core.samplefile import write_json_atomic
from passbench.core.version import __version__
from passbench.stages.benchmarks import DataSettings

SCHEMA_VERSION = 1
KIND = "passbench-security"


@dataclass(frozen=True)
class SecurityResult:
    """A security result file, read back."""

    path: Path
    document: dict[str, Any]
    scans: tuple[SampleScan, ...]

    @property
    def summary(self) -> SecuritySummary:
        return summarize(self.scans)

    @property
    def tools(self) -> dict[str, str]:
        return dict(self.document.get("tools", {}))

    def scans_of(self, task_id: str) -> list[SampleScan]:
        return [scan for scan in self.scans if scan.task_id == task_id]


@dataclass(frozen=True)
class ScanRun:
    """What `security_scan` did."""

    output: Path
    source: ScanInput
    result: SecurityResult
    resumed: int


def journal_path(output: Path) -> Path:
    return output.with_name(output.name + ".partial.jsonl")


def security_scan(
    path: str | Path,
    *,
    output: str | Path | None = None,
    benchmark: str | None = None,
    settings: ScanSettings | None = None,
    env_path: str | Path | None = None,
    data: DataSettings | None = None,
    progress: Progress | None = None,
) -> ScanRun:
    """Scan every sample of `path` and write the result file (default `<stem>_security.json`
    beside it)."""
    settings = settings or ScanSettings()
    source = read_input(path, benchmark=benchmark, data=data)
    tools = open_toolset(env_path)
    target = Path(output) if output is not None else source.default_output
    journal = journal_path(target)
    outcome = scan_items(source.items, tools, settings, journal=journal, progress=progress)
    document = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "passbench_version": __version__,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input": {
            "path": str(source.path),
            "kind": source.kind,
            "sha256": source.sha256,
            "benchmark": source.benchmark,
            "note": source.note,
        },
        "tools": dict(tools.versions),
        "ruleset_sha256": tools.ruleset_sha256,
        # semgrep rules this semgrep could not parse, left out (by detector language)
        "semgrep_rules_skipped": {k: list(v) for k, v in sorted(tools.skipped_rules.items())},
        "environment": {
            "name": ENV_NAME,
            "lock_sha256": tools.lock_sha256,
            "python_version": tools.python_version,
        },
        "settings": {"bandit_severity": settings.bandit_severity},
        "summary": summarize(outcome.scans).to_json(),
        "samples": [scan.to_json() for scan in outcome.scans],
    }
    write_json_atomic(target, document)
    journal.unlink(missing_ok=True)
    return ScanRun(
        output=target,
        source=source,
        result=SecurityResult(target, document, tuple(outcome.scans)),
        resumed=outcome.resumed,
    )


def load_security(path: str | Path) -> SecurityResult:
    """Read a security result file; InputError naming the file and field when it is not one."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"not a readable JSON file ({error})", path=path) from None
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise InputError(
            f'not a security result file (no "kind": "{KIND}")', path=path, field="kind"
        )
    version = document.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise InputError(
            f"schema_version {version!r} is newer than this passbench reads ({SCHEMA_VERSION})",
            path=path,
            field="schema_version",
        )
    samples = document.get("samples")
    if not isinstance(samples, list):
        raise InputError("expected a list", path=path, field="samples")
    scans = []
    for position, record in enumerate(samples):
        try:
            scans.append(SampleScan.from_json(record))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise InputError(
                f"malformed sample ({error})", path=path, field=f"samples[{position}]"
            ) from None
    return SecurityResult(path, document, tuple(scans))
