"""Scanning samples: batches of files through every tool, a journal, findings per sample.

    [ScanItem] -> batches of `batch_size` files in a temporary folder -> tools.scan_files
               -> findings per sample -> journal line per sample (as each batch finishes)

The journal (`<output>.partial.jsonl`) makes a run resumable: a re-run with the same tools
and rules takes every sample the journal already has (same task, index and code hash) and
scans only the rest; an interrupted run loses at most the batch in flight. Pure except for
the files it writes and the tools it runs.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passbench.analysis.security.languages import EXTENSIONS, analyzers, detector_language
from passbench.analysis.security.tools import RawFinding, Toolset, scan_files
from passbench.core.progress import NullProgress, Progress

DEFAULT_BATCH_SIZE = 1000


@dataclass(frozen=True)
class ScanItem:
    """One sample to scan, with what the figures group it by."""

    task_id: str
    sample_index: int
    code: str
    language: str  # as the benchmark names it ("Python", "C++", "javascript")
    libs: tuple[str, ...] = ()
    status: str | None = None  # "pass" / "fail" / "timeout" when a results file gave it

    @property
    def key(self) -> str:
        return f"{self.task_id}#{self.sample_index}"

    @property
    def code_sha256(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Finding:
    """What a tool reported on one sample: `{tool, rule, cwe, line}` (+ severity, message)."""

    tool: str
    rule: str
    cwe: str
    line: int
    severity: str = ""
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "rule": self.rule,
            "cwe": self.cwe,
            "line": self.line,
            "severity": self.severity,
            "message": self.message,
        }


@dataclass(frozen=True)
class SampleScan:
    """One sample's findings, and which tools looked at it."""

    task_id: str
    sample_index: int
    language: str
    detector_language: str | None  # None: no rules for it, nothing scanned
    tools: tuple[str, ...]
    findings: tuple[Finding, ...]
    code_sha256: str
    libs: tuple[str, ...] = ()
    status: str | None = None

    @property
    def insecure(self) -> bool:
        """Any finding of any tool."""
        return bool(self.findings)

    @property
    def vulnerable(self) -> bool:
        """CyberSecEval's verdict: a finding of the insecure-code detector (regex/semgrep)."""
        return any(finding.tool in ("regex", "semgrep") for finding in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "sample_index": self.sample_index,
            "language": self.language,
            "detector_language": self.detector_language,
            "tools": list(self.tools),
            "status": self.status,
            "libs": list(self.libs),
            "code_sha256": self.code_sha256,
            "findings": [finding.to_json() for finding in self.findings],
        }

    @staticmethod
    def from_json(record: Mapping[str, Any]) -> SampleScan:
        return SampleScan(
            task_id=str(record["task_id"]),
            sample_index=int(record["sample_index"]),
            language=str(record["language"]),
            detector_language=record.get("detector_language"),
            tools=tuple(record.get("tools", ())),
            findings=tuple(
                Finding(
                    tool=str(item["tool"]),
                    rule=str(item["rule"]),
                    cwe=str(item.get("cwe", "")),
                    line=int(item.get("line", 0)),
                    severity=str(item.get("severity", "")),
                    message=str(item.get("message", "")),
                )
                for item in record.get("findings", ())
            ),
            code_sha256=str(record.get("code_sha256", "")),
            libs=tuple(record.get("libs", ())),
            status=record.get("status"),
        )


@dataclass(frozen=True)
class ScanSettings:
    bandit_severity: str = "medium"
    batch_size: int = DEFAULT_BATCH_SIZE
    jobs: int = 1  # semgrep's --jobs


@dataclass
class ScanOutcome:
    scans: list[SampleScan] = field(default_factory=list)
    resumed: int = 0  # samples taken from the journal


def scan_items(
    items: Sequence[ScanItem],
    tools: Toolset,
    settings: ScanSettings,
    *,
    journal: Path | None = None,
    progress: Progress | None = None,
) -> ScanOutcome:
    """Scan every item; resume from `journal` and append each finished batch to it."""
    report = progress or NullProgress()
    done = _read_journal(journal, tools, settings) if journal is not None else {}
    outcome = ScanOutcome()
    todo: list[ScanItem] = []
    by_key: dict[str, SampleScan] = {}
    for item in items:
        previous = done.get(item.key)
        if previous is not None and previous.code_sha256 == item.code_sha256:
            by_key[item.key] = previous
            outcome.resumed += 1
        else:
            todo.append(item)
    if journal is not None and not done:
        _write_journal_header(journal, tools, settings)
    report.start(len(items), "scanning samples")
    report.advance(outcome.resumed, info="resumed" if outcome.resumed else "")
    for batch in _batches(todo, settings.batch_size):
        scans = _scan_batch(batch, tools, settings)
        if journal is not None:
            with journal.open("a", encoding="utf-8") as handle:
                for scan in scans:
                    handle.write(json.dumps(scan.to_json(), ensure_ascii=False) + "\n")
        for scan in scans:
            by_key[f"{scan.task_id}#{scan.sample_index}"] = scan
        report.advance(len(batch), info=batch[-1].task_id)
    report.finish()
    outcome.scans = [by_key[item.key] for item in items]
    return outcome


def _batches(items: Sequence[ScanItem], size: int) -> Iterator[Sequence[ScanItem]]:
    for start in range(0, len(items), max(1, size)):
        yield items[start : start + max(1, size)]


def _scan_batch(
    batch: Sequence[ScanItem], tools: Toolset, settings: ScanSettings
) -> list[SampleScan]:
    with tempfile.TemporaryDirectory(prefix="passbench-security-") as temporary:
        root = Path(temporary).resolve()
        files: list[tuple[str, str]] = []
        owner: dict[str, int] = {}
        languages: list[str | None] = []
        for position, item in enumerate(batch):
            language = detector_language(item.language)
            languages.append(language)
            if language is None:
                continue
            path = root / f"s{position}{EXTENSIONS[language]}"
            path.write_text(item.code, encoding="utf-8", errors="surrogatepass")
            files.append((str(path), language))
            owner[str(path)] = position
        raw = scan_files(tools, files, bandit_severity=settings.bandit_severity, jobs=settings.jobs)
    found: dict[int, list[RawFinding]] = {}
    for finding in raw:
        owned = owner.get(finding.file)
        if owned is None:  # a tool that prints the path another way (relative, "./x.py")
            owned = owner.get(str((root / finding.file).resolve()))
        if owned is not None:
            found.setdefault(owned, []).append(finding)
    return [
        SampleScan(
            task_id=item.task_id,
            sample_index=item.sample_index,
            language=item.language,
            detector_language=language,
            tools=analyzers(language),
            findings=tuple(
                Finding(f.tool, f.rule, f.cwe, f.line, f.severity, f.message)
                for f in sorted(found.get(position, []), key=lambda f: (f.line, f.tool, f.rule))
            ),
            code_sha256=item.code_sha256,
            libs=item.libs,
            status=item.status,
        )
        for position, (item, language) in enumerate(zip(batch, languages, strict=True))
    ]


def _journal_header(tools: Toolset, settings: ScanSettings) -> dict[str, Any]:
    return {
        "journal": "passbench-security",
        "ruleset_sha256": tools.ruleset_sha256,
        "versions": dict(tools.versions),
        "bandit_severity": settings.bandit_severity,
    }


def _write_journal_header(journal: Path, tools: Toolset, settings: ScanSettings) -> None:
    journal.write_text(json.dumps(_journal_header(tools, settings)) + "\n", encoding="utf-8")


def _read_journal(journal: Path, tools: Toolset, settings: ScanSettings) -> dict[str, SampleScan]:
    """The samples a previous run finished with the same tools, rules and settings; {} when
    there is no journal or it was written by other ones (it is then started afresh). A last
    line cut short by an interruption is ignored."""
    if not journal.is_file():
        return {}
    text = journal.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):  # cut short: drop the partial line, so appends
        text = text[: text.rfind("\n") + 1]  # start on a line of their own
        journal.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    try:
        header = json.loads(lines[0]) if lines else None
    except json.JSONDecodeError:
        header = None
    if header != _journal_header(tools, settings):
        return {}
    done: dict[str, SampleScan] = {}
    for line in lines[1:]:
        try:
            scan = SampleScan.from_json(json.loads(line))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
        done[f"{scan.task_id}#{scan.sample_index}"] = scan
    return done
