"""The HTML report: one self-contained file (inline CSS, JS and SVG; nothing from the network).

Summary, plots (pass rate by domain and library, failure categories, the pass@k curve when
there are several samples per task), failure groups, a sortable and filterable task table, and
every task's detail (rendered on click from JSON embedded in the page, so 1,140 tasks with ten
samples each stay one quick-to-open file).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from importlib import resources
from typing import Any

from passbench.analysis.report.analysis import GroupScore, Inspection, TaskRow, trim_traceback
from passbench.analysis.report.exports import interval_text, percent, summary_pairs
from passbench.analysis.report.languages import (
    RUN_HEADER,
    LanguageScore,
    RunRow,
    language_cells,
    language_header,
    run_cells,
)
from passbench.analysis.report.security import security_html
from passbench.analysis.report.stability import RunStatistics, statistics_html
from passbench.analysis.report.svg import Bar, bar_chart, line_chart
from passbench.analysis.report.triage import class_line, loss_line
from passbench.analysis.security.summary import SecuritySummary
from passbench.stages.results import RunResults
from passbench.stages.results.taskinfo import TaskCatalog

PLOTTED_LIBRARIES = 25  # the most used libraries; the table below has them all


def _asset(name: str) -> str:
    return (
        resources.files("passbench.analysis.report")
        .joinpath("assets", name)
        .read_text(encoding="utf-8")
    )


def render_report(
    run: RunResults,
    inspection: Inspection,
    catalog: TaskCatalog,
    security: SecuritySummary | None = None,
    security_tools: str = "",
    statistics: RunStatistics | None = None,
) -> str:
    """The whole report as one HTML document; with `security` (the figures of a `passbench
    security` result file on this run) a Security section after the failures; with
    `statistics` (stability.run_statistics of the run's full result files) the flaky samples,
    epochs and quarantined references after the summary, when they were measured."""
    summary = inspection.summary
    subtitle = " / ".join(v for v in (summary.benchmark, summary.split, summary.subset) if v)
    if summary.date:
        subtitle += f" · {summary.date}"
    return "".join(
        [
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="generator" content="passbench">',
            f"<title>passbench: {escape(summary.name)}</title>",
            f"<style>{_asset('report.css')}</style></head><body>",
            f"<header><h1>{escape(summary.name)}</h1>",
            f'<p class="sub">{escape(subtitle)}</p></header><main>',
            _warning_banner(summary.unsandboxed_warning),
            _summary_section(inspection),
            _by_language_section(inspection),
            statistics_html(statistics) if statistics is not None else "",
            _plots_section(inspection),
            _failures_section(inspection),
            _triage_section(inspection),
            security_html(security, tools=security_tools) if security is not None else "",
            _tasks_section(inspection),
            '<section id="detail" hidden><h2 id="detail-title"></h2><div id="detail-body"></div>'
            "</section></main>",
            '<script type="application/json" id="task-data">',
            _script_json(_task_data(run, inspection, catalog, statistics)),
            "</script>",
            f"<script>{_asset('report.js')}</script>",
            "</body></html>\n",
        ]
    )


def render_languages_report(rows: Sequence[RunRow], scores: Sequence[LanguageScore]) -> str:
    """Several runs in one page: each run with its language, and (more than one language) the
    breakdown by language: pass@1, counts and MultiPL-E's statuses."""
    runs_table = _grid(RUN_HEADER, [run_cells(row) for row in rows], numeric_from=3)
    sections = [f'<section id="runs"><h2>Runs</h2>{runs_table}</section>']
    if len(scores) > 1:
        header = language_header(scores)
        table = _grid(header, [language_cells(score, header) for score in scores], numeric_from=2)
        chart = bar_chart(
            [
                Bar(score.language, score.pass_at_1, note=f"({score.tasks} tasks)")
                for score in scores
            ],
            title="pass@1 by language",
            maximum=1.0,
        )
        sections.append(
            f'<section id="languages"><h2>By language</h2>{table}'
            f'<div class="plots">{chart}</div></section>'
        )
    title = f"{len(rows)} runs"
    return "".join(
        [
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="generator" content="passbench">',
            f"<title>passbench: {escape(title)}</title>",
            f"<style>{_asset('report.css')}</style></head><body>",
            f"<header><h1>{escape(title)}</h1></header><main>",
            *sections,
            "</main></body></html>\n",
        ]
    )


def _grid(header: Sequence[str], rows: Sequence[Sequence[str]], *, numeric_from: int) -> str:
    def cell(tag: str, index: int, text: str) -> str:
        kind = ' class="num"' if index >= numeric_from else ""
        return f"<{tag}{kind}>{escape(text)}</{tag}>"

    head = "".join(cell("th", index, name) for index, name in enumerate(header))
    body = "".join(
        "<tr>" + "".join(cell("td", index, text) for index, text in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _script_json(data: Any) -> str:
    """JSON that cannot end its <script> element early: every '<' is escaped."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _warning_banner(warning: str) -> str:
    if not warning:
        return ""
    strong = f"<strong>{escape(warning)}</strong>"
    return f'<div class="warning" id="unsandboxed" role="alert">{strong}</div>'


def _summary_section(inspection: Inspection) -> str:
    summary = inspection.summary
    cards = []
    for key, value in summary.pass_at_k.items():
        interval = summary.intervals.get(key)
        ci = ""
        if interval is not None:
            ci = f"{round(interval.confidence * 100)}% CI {interval_text(interval)}"
        cards.append(
            f'<div class="card"><div class="k">{escape(key)}</div>'
            f'<div class="v">{percent(value)}</div><div class="ci">{escape(ci)}</div></div>'
        )
    if summary.exact_pass_at_1 is not None:
        cards.append(
            '<div class="card"><div class="k">pass@1 exact CI</div>'
            '<div class="v" style="font-size:18px">'
            f"{escape(interval_text(summary.exact_pass_at_1))}"
            '</div><div class="ci">Clopper-Pearson</div></div>'
        )
    if inspection.hard_subset is not None:
        hard = inspection.hard_subset
        cards.append(
            f'<div class="card"><div class="k">Hard subset pass@1</div>'
            f'<div class="v">{percent(hard.pass_at_1)}</div>'
            f'<div class="ci">{hard.tasks} tasks {escape(interval_text(hard.interval))}</div></div>'
        )
    pairs = "".join(
        f"<tr><td>{escape(label)}</td><td>{escape(value)}</td></tr>"
        for label, value in summary_pairs(summary)
        if not label.startswith("pass@")
    )
    notes = "".join(f"<li>{escape(note)}</li>" for note in summary.notes)
    return (
        '<section id="summary"><h2>Summary</h2>'
        f'<div class="cards">{"".join(cards)}</div>'
        f'<table class="kv">{pairs}</table>'
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
        + "</section>"
    )


def _by_language_section(inspection: Inspection) -> str:
    """A run whose tasks are in several languages: pass@1 per language, table and chart."""
    if not inspection.by_language:
        return ""
    scores = inspection.by_language
    table = _grid(
        ("language", "tasks", "pass@1", "95% CI", "solved"),
        [
            (s.name, str(s.tasks), percent(s.pass_at_1), interval_text(s.interval), str(s.solved))
            for s in scores
        ],
        numeric_from=1,
    )
    chart = bar_chart(
        _score_bars(scores), title="pass@1 by language (95% CI; tasks in brackets)", maximum=1.0
    )
    return (
        f'<section id="by-language"><h2>By language</h2>{table}'
        f'<div class="plots">{chart}</div></section>'
    )


def _score_bars(scores: Sequence[GroupScore]) -> list[Bar]:
    """One bar per group: its pass@1 with the interval's ends, its task count beside it."""
    return [
        Bar(
            s.name,
            s.pass_at_1,
            s.interval.low if s.interval else None,
            s.interval.high if s.interval else None,
            f"({s.tasks})",
        )
        for s in scores
    ]


def _plots_section(inspection: Inspection) -> str:
    charts = []
    if inspection.by_domain:
        charts.append(
            bar_chart(
                _score_bars(inspection.by_domain),
                title="pass@1 by domain (95% CI; tasks in brackets)",
                maximum=1.0,
            )
        )
    if inspection.failures:
        charts.append(
            bar_chart(
                [
                    Bar(g.label, g.samples, css="timeout" if g.category == "timeout" else "fail")
                    for g in inspection.failures[:20]
                ],
                title="Failing samples by category",
                percent=False,
            )
        )
    if inspection.by_library:
        charts.append(
            bar_chart(
                [
                    Bar(s.name, s.pass_at_1, note=f"({s.tasks})")
                    for s in inspection.by_library[:PLOTTED_LIBRARIES]
                ],
                title=f"pass@1 by library (the {PLOTTED_LIBRARIES} most used; tasks in brackets)",
                maximum=1.0,
            )
        )
    if len(inspection.pass_at_k_curve) > 1:
        charts.append(
            line_chart(
                [(float(k), value) for k, value in inspection.pass_at_k_curve],
                title="pass@k",
                x_label="k",
            )
        )
    if not charts:
        return ""
    return f'<section id="plots"><h2>Plots</h2><div class="plots">{"".join(charts)}</div></section>'


def _failures_section(inspection: Inspection) -> str:
    if not inspection.failures:
        return '<section id="failures"><h2>Failures</h2><p>No failures.</p></section>'
    rows = "".join(
        f'<tr><td><a href="#category={escape(g.label)}">{escape(g.label)}</a></td>'
        f'<td class="num">{g.samples}</td><td class="num">{g.tasks}</td>'
        f"<td>{', '.join(_task_link(t) for t in g.examples)}</td>"
        f"<td>{escape(g.example_message[:200])}</td></tr>"
        for g in inspection.failures
    )
    return (
        '<section id="failures"><h2>Failures by category</h2><table class="grid">'
        '<thead><tr><th>category</th><th class="num">samples</th><th class="num">tasks</th>'
        f"<th>examples</th><th>example message</th></tr></thead><tbody>{rows}</tbody></table>"
        "</section>"
    )


def _triage_section(inspection: Inspection) -> str:
    """Whose failure each failing sample is (model, extraction, environment, harness)."""
    result = inspection.triage
    if result is None or not result.failing:
        return ""
    rows = "".join(
        f"<tr><td>{escape(g.cls)}</td><td>{escape(g.kind)}</td>"
        f'<td class="num">{g.samples}</td>'
        f"<td>{', '.join(_task_link(t) for t in g.tasks)}</td></tr>"
        for g in result.groups
    )
    return (
        '<section id="triage"><h2>Failures by cause</h2>'
        f'<p>{escape(class_line(result))}</p><table class="grid">'
        '<thead><tr><th>class</th><th>what</th><th class="num">samples</th>'
        f"<th>examples</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<p>{escape(loss_line(result))}</p></section>"
    )


def _task_link(task_id: str) -> str:
    return f'<a href="#task={escape(task_id)}">{escape(task_id)}</a>'


def _options(values: Sequence[str], everything: str) -> str:
    return f'<option value="">{escape(everything)}</option>' + "".join(
        f'<option value="{escape(v)}">{escape(v)}</option>' for v in values
    )


def _tasks_section(inspection: Inspection) -> str:
    labels = sorted(
        {g.category for g in inspection.failures} | {g.label for g in inspection.failures}
    )
    filters = (
        '<div class="filters">'
        '<input type="search" id="f-text" placeholder="search task id, failure, message" '
        'aria-label="search">'
        '<select id="f-outcome" aria-label="outcome"><option value="">all outcomes</option>'
        '<option value="solved">every sample passes</option>'
        '<option value="partial">some samples pass</option>'
        '<option value="unsolved">no sample passes</option></select>'
        f'<select id="f-category" aria-label="failure">{_options(labels, "any failure")}</select>'
        f'<select id="f-lib" aria-label="library">'
        f"{_options(sorted(s.name for s in inspection.by_library), 'any library')}</select>"
        f'<select id="f-domain" aria-label="domain">'
        f"{_options(sorted(s.name for s in inspection.by_domain), 'any domain')}</select>"
        '<label><input type="checkbox" id="f-hard"> Hard only</label>'
        '<span id="shown-count"></span></div>'
    )
    head = (
        '<thead><tr><th data-key="task">task</th><th data-key="passed" class="num">passed</th>'
        '<th data-key="rate" class="num">pass rate</th><th data-key="verdicts">verdicts</th>'
        '<th data-key="label">failure</th><th data-key="message">message</th>'
        '<th data-key="libs">libraries</th></tr></thead>'
    )
    body = "".join(_task_row(order, row) for order, row in enumerate(inspection.tasks))
    return (
        f'<section id="tasks"><h2>Tasks</h2>{filters}<div class="table-wrap">'
        f'<table class="grid" id="task-table">{head}<tbody>{body}</tbody></table></div></section>'
    )


def _task_row(order: int, row: TaskRow) -> str:
    verdicts = "".join(f'<span class="v {status}"></span>' for status in row.statuses[:50])
    search = " ".join([row.task_id, row.main_label, row.message]).lower()
    attributes = {
        "data-task": row.task_id,
        "data-order": str(order),
        "data-passed": str(row.passed),
        "data-n": str(row.n),
        "data-label": row.main_label,
        "data-labels": " ".join(sorted({label for label in row.labels if label})),
        "data-libs": " ".join(row.libs),
        "data-domains": " ".join(row.domains),
        "data-hard": "1" if row.hard else "0",
        "data-message": row.message[:200],
        "data-verdicts": f"{row.passed:04d}",
        "data-search": search[:400],
    }
    attrs = " ".join(f'{name}="{escape(value)}"' for name, value in attributes.items())
    return (
        f"<tr {attrs}><td>{escape(row.task_id)}</td>"
        f'<td class="num">{row.passed}/{row.n}</td><td class="num">{percent(row.pass_rate, 0)}</td>'
        f"<td>{verdicts}</td><td>{escape(row.main_label)}</td>"
        f'<td class="msg">{escape(row.message[:200])}</td>'
        f"<td>{escape(', '.join(row.libs))}</td></tr>"
    )


def _task_data(
    run: RunResults,
    inspection: Inspection,
    catalog: TaskCatalog,
    statistics: RunStatistics | None = None,
) -> dict[str, Any]:
    """Per-task detail for the page's script; identical solutions are stored once per task,
    and a flaky sample carries its verdict counts over the runs (`f`)."""
    flaky = {
        (item["task_id"], item["sample_index"]): item["verdicts"]
        for item in (
            statistics.stability["flaky_samples"] if statistics and statistics.stability else ()
        )
    }
    data: dict[str, Any] = {}
    for row in inspection.tasks:
        solutions: list[str] = []
        index_of: dict[str, int] = {}
        samples = []
        for position, sample in enumerate(run.tasks[row.task_id]):
            if sample.solution not in index_of:
                index_of[sample.solution] = len(solutions)
                solutions.append(sample.solution)
            samples.append(
                {
                    "i": sample.sample_index,
                    "s": sample.status,
                    "l": row.labels[position],
                    "m": row.messages[position],
                    "d": sample.duration_s,
                    "sol": index_of[sample.solution],
                    "t": [[name, trim_traceback(text)] for name, text in sample.details.items()],
                }
            )
            if (row.task_id, sample.sample_index) in flaky:
                samples[-1]["f"] = flaky[(row.task_id, sample.sample_index)]
        data[row.task_id] = {
            "passed": row.passed,
            "libs": list(row.libs),
            "samples": samples,
            "solutions": solutions,
            "canonical": catalog.canonical.get(row.task_id),
            "test": task.test if (task := catalog.tasks.get(row.task_id)) else None,
        }
    return data
