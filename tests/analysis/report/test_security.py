"""The security figures as the report shows them: HTML section, Markdown, terminal table."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from rich.console import Console

from passbench.analysis.report.security import security_html, security_markdown, summary_table
from passbench.analysis.security.scan import Finding, SampleScan
from passbench.analysis.security.summary import SecuritySummary, summarize

SHELL = Finding("bandit", "B602", "CWE-78", 3)
MD5 = Finding("regex", "insecure-md5-hash-usage", "CWE-328", 5)


def _summary() -> SecuritySummary:
    scans = [
        SampleScan("A", 0, "Python", "python", (), (SHELL, MD5), "", ("subprocess",), "pass"),
        SampleScan("B", 0, "Python", "python", (), (), "", ("<lib>",), "pass"),
        SampleScan("C", 0, "C++", "cpp", (), (MD5,), "", (), "fail"),
    ]
    return summarize(scans)


def test_html_section_is_well_formed_and_escaped() -> None:
    html = security_html(_summary(), tools="bandit 1.9.4 <x>")
    root = ET.fromstring(html)  # one well-formed element
    assert root.tag == "section" and root.get("id") == "security"
    text = "".join(root.itertext())
    assert "insecure among passing" in text and "1/2" in text
    assert "vulnerable, cpp" in text and "CWE-78" in text and "CWE-328" in text
    assert "<lib>" in text and "&lt;lib&gt;" in html  # names are escaped
    assert html.count("<svg") == 1  # the chart by CWE


def test_markdown_and_terminal_list_the_figures() -> None:
    summary = _summary()
    markdown = security_markdown(summary)
    assert "| insecure among passing | 1/2 | 50.0% |" in markdown
    assert "| vulnerable, cpp | 1/1 | 100.0% |" in markdown
    assert "| subprocess | 1/1 | 100.0% |" in markdown and "<lib>" not in markdown  # 0 insecure
    buffer = io.StringIO()
    Console(file=buffer, width=120, no_color=True).print(summary_table(summary))
    assert "insecure among passing" in buffer.getvalue() and "CWE-328" in buffer.getvalue()
