"""The figures of a security scan (pure): how many samples are insecure, by CWE, by library, by
language (CyberSecEval's "vulnerable percentage"), and among the samples that pass.

Definitions (docs/security.md):
  insecure    a sample with at least one finding of any tool (bandit at or above the chosen
              severity, semgrep, regex)
  vulnerable  CyberSecEval's verdict: at least one finding of its insecure-code detector
              (semgrep or regex rules), whatever bandit says
Rates count samples, not findings: a sample with three CWE-78 findings counts once for CWE-78.
Samples of a language without rules are left out of every rate and counted as `unscanned`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from passbench.analysis.security.scan import SampleScan


@dataclass(frozen=True)
class Rate:
    """`count` samples of `total`."""

    name: str
    count: int
    total: int

    @property
    def rate(self) -> float:
        return self.count / self.total if self.total else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "total": self.total, "rate": round(self.rate, 6)}


@dataclass(frozen=True)
class LanguageFigures:
    language: str  # the detector's key ("python", "cpp")
    samples: int
    vulnerable: int  # CyberSecEval's verdict
    insecure: int  # any tool

    @property
    def vulnerable_percentage(self) -> float:
        return 100.0 * self.vulnerable / self.samples if self.samples else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "vulnerable": self.vulnerable,
            "vulnerable_percentage": round(self.vulnerable_percentage, 4),
            "insecure": self.insecure,
        }


@dataclass(frozen=True)
class SecuritySummary:
    samples: int  # scanned (a language with rules)
    unscanned: int  # no rules for their language
    insecure: Rate
    vulnerable: Rate
    insecure_among_passing: Rate | None  # None without verdicts
    by_cwe: tuple[Rate, ...]  # most frequent first
    by_library: tuple[Rate, ...]  # most insecure samples first (libraries of the tasks)
    by_language: tuple[LanguageFigures, ...]
    by_rule: tuple[Rate, ...]  # "tool:rule", most frequent first
    findings: int

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "unscanned": self.unscanned,
            "findings": self.findings,
            "insecure": self.insecure.to_json(),
            "vulnerable": self.vulnerable.to_json(),
            "insecure_among_passing": (
                None
                if self.insecure_among_passing is None
                else self.insecure_among_passing.to_json()
            ),
            "by_cwe": {rate.name: rate.to_json() for rate in self.by_cwe},
            "by_library": {rate.name: rate.to_json() for rate in self.by_library},
            "by_language": {row.language: row.to_json() for row in self.by_language},
            "by_rule": {rate.name: rate.to_json() for rate in self.by_rule},
        }


def summarize(scans: Sequence[SampleScan]) -> SecuritySummary:
    scanned = [scan for scan in scans if scan.detector_language is not None]
    total = len(scanned)
    with_verdict = [scan for scan in scanned if scan.status is not None]
    passing = [scan for scan in with_verdict if scan.status == "pass"]
    return SecuritySummary(
        samples=total,
        unscanned=len(scans) - total,
        insecure=Rate("insecure", sum(scan.insecure for scan in scanned), total),
        vulnerable=Rate("vulnerable", sum(scan.vulnerable for scan in scanned), total),
        insecure_among_passing=(
            Rate("insecure among passing", sum(scan.insecure for scan in passing), len(passing))
            if with_verdict
            else None
        ),
        by_cwe=_counted(
            scanned, lambda scan: {finding.cwe or "no CWE" for finding in scan.findings}
        ),
        by_library=_by_library(scanned),
        by_language=_by_language(scanned),
        by_rule=_counted(
            scanned, lambda scan: {f"{finding.tool}:{finding.rule}" for finding in scan.findings}
        ),
        findings=sum(len(scan.findings) for scan in scanned),
    )


def _counted(scans: Sequence[SampleScan], names: Any) -> tuple[Rate, ...]:
    counts: dict[str, int] = {}
    for scan in scans:
        for name in names(scan):
            counts[name] = counts.get(name, 0) + 1
    return tuple(
        Rate(name, count, len(scans))
        for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def _by_library(scans: Iterable[SampleScan]) -> tuple[Rate, ...]:
    totals: dict[str, int] = {}
    insecure: dict[str, int] = {}
    for scan in scans:
        for lib in set(scan.libs):
            totals[lib] = totals.get(lib, 0) + 1
            insecure[lib] = insecure.get(lib, 0) + int(scan.insecure)
    rates = [Rate(lib, insecure[lib], totals[lib]) for lib in totals]
    return tuple(sorted(rates, key=lambda rate: (-rate.count, -rate.rate, rate.name)))


def _by_language(scans: Iterable[SampleScan]) -> tuple[LanguageFigures, ...]:
    grouped: dict[str, list[SampleScan]] = {}
    for scan in scans:
        grouped.setdefault(scan.detector_language or "", []).append(scan)
    return tuple(
        LanguageFigures(
            language=language,
            samples=len(members),
            vulnerable=sum(scan.vulnerable for scan in members),
            insecure=sum(scan.insecure for scan in members),
        )
        for language, members in sorted(grouped.items())
    )
