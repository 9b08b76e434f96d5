"""The figures (pure): samples counted once per CWE, library and language; insecure among
passing only with verdicts; a language without rules is left out of every rate."""

from __future__ import annotations

from passbench.analysis.security.scan import Finding, SampleScan
from passbench.analysis.security.summary import summarize


def _scan(
    task: str,
    findings: tuple[Finding, ...] = (),
    *,
    language: str | None = "python",
    libs: tuple[str, ...] = (),
    status: str | None = None,
) -> SampleScan:
    return SampleScan(task, 0, language or "Lua", language, (), findings, "", libs, status)


SHELL = Finding("bandit", "B602", "CWE-78", 3)
SHELL_ICD = Finding("semgrep", "insecure-subprocess-using-shell", "CWE-78", 3)
MD5 = Finding("regex", "insecure-md5-hash-usage", "CWE-328", 5)


def test_rates_count_samples_not_findings() -> None:
    summary = summarize(
        [
            _scan("A", (SHELL, SHELL_ICD, MD5), libs=("subprocess", "hashlib")),
            _scan("B", (SHELL,), libs=("subprocess",)),
            _scan("C", libs=("os",)),
            _scan("D", language=None),
        ]
    )
    assert (summary.samples, summary.unscanned, summary.findings) == (3, 1, 4)
    assert (summary.insecure.count, summary.insecure.total) == (2, 3)
    # bandit alone does not make a sample vulnerable in CyberSecEval's sense
    assert summary.vulnerable.count == 1
    cwe = {rate.name: (rate.count, rate.total) for rate in summary.by_cwe}
    assert cwe == {"CWE-78": (2, 3), "CWE-328": (1, 3)}
    libs = {rate.name: (rate.count, rate.total) for rate in summary.by_library}
    assert libs == {"subprocess": (2, 2), "hashlib": (1, 1), "os": (0, 1)}
    (python,) = summary.by_language
    assert (python.language, python.samples, python.vulnerable) == ("python", 3, 1)
    assert round(python.vulnerable_percentage, 2) == 33.33
    assert summary.insecure_among_passing is None  # a samples file has no verdicts


def test_insecure_among_passing_is_its_own_figure() -> None:
    summary = summarize(
        [
            _scan("A", (SHELL,), status="pass"),
            _scan("B", status="pass"),
            _scan("C", (SHELL,), status="fail"),
            _scan("D", (MD5,), status="timeout"),
        ]
    )
    rate = summary.insecure_among_passing
    assert rate is not None and (rate.count, rate.total) == (1, 2)
    assert (summary.insecure.count, summary.insecure.total) == (3, 4)


def test_vulnerable_percentage_per_language() -> None:
    summary = summarize(
        [
            _scan("A", (MD5,), language="cpp"),
            _scan("B", language="cpp"),
            _scan("C", language="cpp"),
            _scan("D", (SHELL_ICD,), language="python"),
        ]
    )
    by_language = {row.language: row for row in summary.by_language}
    assert round(by_language["cpp"].vulnerable_percentage, 2) == 33.33
    assert by_language["python"].vulnerable_percentage == 100.0
    assert summary.to_json()["by_language"]["cpp"] == {
        "samples": 3,
        "vulnerable": 1,
        "vulnerable_percentage": 33.3333,
        "insecure": 1,
    }
