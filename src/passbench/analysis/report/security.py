"""The security figures (`passbench security`'s result file) in the terminal, Markdown and the
HTML report: insecure and vulnerable rates, insecure among passing, by language, CWE and
library. Pure: a SecuritySummary in, text out."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from rich.table import Table

from passbench.analysis.report.svg import Bar, bar_chart
from passbench.analysis.security.summary import Rate, SecuritySummary

TOP = 10  # CWEs and libraries in the terminal and Markdown; the HTML tables have them all


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%" if total else "-"


def headline_rows(summary: SecuritySummary) -> list[tuple[str, int, int]]:
    """(figure, samples, of samples): the overall figures and CyberSecEval's per language."""
    rows = [
        ("insecure (any tool)", summary.insecure.count, summary.insecure.total),
        (
            "vulnerable (CyberSecEval detector)",
            summary.vulnerable.count,
            summary.vulnerable.total,
        ),
    ]
    if summary.insecure_among_passing is not None:
        passing = summary.insecure_among_passing
        rows.append(("insecure among passing", passing.count, passing.total))
    rows += [
        (f"vulnerable, {row.language}", row.vulnerable, row.samples) for row in summary.by_language
    ]
    return rows


def summary_table(summary: SecuritySummary, *, title: str = "security", top: int = TOP) -> Table:
    """One table: the headline figures, then the top CWEs and libraries."""
    table = Table(title=title, title_justify="left")
    table.add_column("figure")
    table.add_column("samples", justify="right")
    table.add_column("rate", justify="right")
    for name, count, total in headline_rows(summary):
        table.add_row(name, f"{count}/{total}", _percent(count, total))
    for cwe in summary.by_cwe[:top]:
        table.add_row(f"  {cwe.name}", f"{cwe.count}/{cwe.total}", _percent(cwe.count, cwe.total))
    for lib in _with_findings(summary.by_library)[:top]:
        table.add_row(
            f"  lib {lib.name}", f"{lib.count}/{lib.total}", _percent(lib.count, lib.total)
        )
    if summary.unscanned:
        table.add_row("no rules for their language", str(summary.unscanned), "")
    return table


def security_markdown(summary: SecuritySummary, *, top: int = TOP) -> str:
    lines = ["## Security", "", "| figure | samples | rate |", "|---|---:|---:|"]
    lines += [
        f"| {name} | {count}/{total} | {_percent(count, total)} |"
        for name, count, total in headline_rows(summary)
    ]
    for heading, rates in (
        ("CWE", summary.by_cwe),
        ("library", _with_findings(summary.by_library)),
    ):
        if rates:
            lines += ["", f"| {heading} | insecure samples | rate |", "|---|---:|---:|"]
            lines += [
                f"| {rate.name} | {rate.count}/{rate.total} | {_percent(rate.count, rate.total)} |"
                for rate in rates[:top]
            ]
    return "\n".join(lines) + "\n"


def security_html(summary: SecuritySummary, *, tools: str = "") -> str:
    """The report's Security section: the figures, a chart by CWE, tables by CWE and library."""
    parts = ['<section id="security"><h2>Security</h2>']
    if tools:
        parts.append(f'<p class="sub">{escape(tools)}</p>')
    parts.append(
        _table(
            ("figure", "samples", "rate"),
            [
                (name, f"{count}/{total}", _percent(count, total))
                for name, count, total in headline_rows(summary)
            ],
        )
    )
    if summary.by_cwe:
        chart = bar_chart(
            [Bar(rate.name, rate.rate, note=f"({rate.count})") for rate in summary.by_cwe[:20]],
            title="samples with a finding, by CWE",
            maximum=max(rate.rate for rate in summary.by_cwe[:20]) or 1.0,
        )
        parts.append(f'<div class="plots">{chart}</div>')
        parts.append("<h3>By CWE</h3>" + _rates_table("CWE", summary.by_cwe))
    if summary.by_library:
        parts.append("<h3>By library</h3>" + _rates_table("library", summary.by_library))
    parts.append("</section>")
    return "".join(parts)


def _with_findings(rates: Sequence[Rate]) -> list[Rate]:
    """The libraries with an insecure sample (the terminal's and Markdown's short list)."""
    return [rate for rate in rates if rate.count]


def _rates_table(name: str, rates: Sequence[Rate]) -> str:
    return _table(
        (name, "insecure samples", "rate"),
        [
            (rate.name, f"{rate.count}/{rate.total}", _percent(rate.count, rate.total))
            for rate in rates
        ],
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def cell(tag: str, index: int, text: str) -> str:
        kind = ' class="num"' if index >= 1 else ""
        return f"<{tag}{kind}>{escape(text)}</{tag}>"

    head = "".join(cell("th", index, text) for index, text in enumerate(header))
    body = "".join(
        "<tr>" + "".join(cell("td", index, text) for index, text in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
