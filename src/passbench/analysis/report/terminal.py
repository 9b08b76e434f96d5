"""Rich renderables for the terminal. Library code builds them; only the CLI prints them."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from passbench.analysis.report.analysis import GroupScore, Inspection, TaskDetail, TaskRow
from passbench.analysis.report.exports import interval_text, percent, summary_pairs
from passbench.analysis.report.languages import (
    RUN_HEADER,
    LanguageScore,
    RunRow,
    language_cells,
    language_header,
    run_cells,
)
from passbench.analysis.report.triage import Triage, class_line, loss_line
from passbench.stages.benchmarks.windows import WindowScore

_STATUS_STYLE = {"pass": "green", "fail": "red", "timeout": "yellow"}


def inspection_view(
    inspection: Inspection,
    tasks: Sequence[TaskRow],
    *,
    limit: int = 20,
    libraries: int = 15,
    filtered: bool = False,
) -> RenderableType:
    """Summary, failure categories, breakdowns and (up to `limit`) task rows."""
    parts: list[RenderableType] = []
    warning = inspection.summary.unsandboxed_warning
    if warning:
        parts.append(Panel(Text(warning, style="bold"), title="WARNING", style="bold red"))
    parts.append(_summary_table(inspection))
    for note in inspection.summary.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    parts.append(_failures_table(inspection))
    if inspection.triage is not None and inspection.triage.failing:
        parts.append(_triage_table(inspection.triage))
    if inspection.hard_subset is not None:
        parts.append(_groups_table("Hard subset", [inspection.hard_subset], with_interval=True))
    if inspection.by_language:
        parts.append(_groups_table("By language", inspection.by_language, with_interval=True))
    if inspection.by_domain:
        parts.append(_groups_table("By domain", inspection.by_domain, with_interval=True))
    if inspection.by_library:
        shown = inspection.by_library[:libraries] if libraries else inspection.by_library
        title = "By library"
        if len(shown) < len(inspection.by_library):
            title += f" (the {len(shown)} most used of {len(inspection.by_library)})"
        parts.append(_groups_table(title, shown, with_interval=False))
    parts.append(_tasks_table(inspection, tasks, limit, filtered))
    return Group(*parts)


def languages_view(rows: Sequence[RunRow], scores: Sequence[LanguageScore]) -> RenderableType:
    """Several runs: each with its language, then (more than one language) the breakdown."""
    runs = Table(title="Runs", title_justify="left")
    for name in RUN_HEADER:
        runs.add_column(name, justify="right" if name in ("tasks", "samples", "pass@1") else "left")
    for row in rows:
        runs.add_row(*run_cells(row))
    parts: list[RenderableType] = [runs]
    if len(scores) > 1:
        header = language_header(scores)
        table = Table(title="By language", title_justify="left")
        for index, name in enumerate(header):
            table.add_column(name, justify="left" if index < 2 else "right")
        for score in scores:
            table.add_row(*language_cells(score, header))
        parts.append(table)
    return Group(*parts)


def _summary_table(inspection: Inspection) -> Table:
    table = Table(title="Summary", show_header=False, title_justify="left", box=None)
    table.add_column(style="bold")
    table.add_column()
    for label, value in summary_pairs(inspection.summary):
        table.add_row(label, value)
    return table


def _failures_table(inspection: Inspection) -> RenderableType:
    if not inspection.failures:
        return Text("No failures.", style="green")
    table = Table(title="Failures by category", title_justify="left")
    table.add_column("category", overflow="fold")
    table.add_column("samples", justify="right", no_wrap=True)
    table.add_column("tasks", justify="right", no_wrap=True)
    table.add_column("examples")
    table.add_column("example message", overflow="ellipsis", max_width=40)
    for group in inspection.failures:
        table.add_row(
            group.label,
            str(group.samples),
            str(group.tasks),
            "\n".join(group.examples[:2]),
            group.example_message,
        )
    return table


def _triage_table(result: Triage) -> RenderableType:
    table = Table(title=f"Failures by cause ({class_line(result)})", title_justify="left")
    for name in ("class", "what", "samples", "examples"):
        table.add_column(name, justify="right" if name == "samples" else "left")
    for group in result.groups:
        table.add_row(group.cls, group.kind, str(group.samples), ", ".join(group.tasks[:3]))
    return Group(table, Text(loss_line(result)))


def _groups_table(title: str, scores: Sequence[GroupScore], *, with_interval: bool) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("name")
    table.add_column("tasks", justify="right")
    table.add_column("pass@1", justify="right")
    if with_interval:
        table.add_column("95% CI" if _all95(scores) else "CI")
    table.add_column("solved", justify="right")
    for score in scores:
        cells = [score.name, str(score.tasks), percent(score.pass_at_1)]
        if with_interval:
            cells.append(interval_text(score.interval))
        cells.append(str(score.solved))
        table.add_row(*cells)
    return table


def _all95(scores: Sequence[GroupScore]) -> bool:
    return all(s.interval is None or abs(s.interval.confidence - 0.95) < 1e-9 for s in scores)


def _tasks_table(
    inspection: Inspection, tasks: Sequence[TaskRow], limit: int, filtered: bool
) -> RenderableType:
    # Unfiltered, show the failing tasks first: they are what a reader is looking for.
    rows = list(tasks) if filtered else [row for row in tasks if row.passed < row.n]
    shown = rows[:limit] if limit else rows
    what = "matching tasks" if filtered else "failing tasks"
    title = f"{len(rows)} {what}"
    if len(shown) < len(rows):
        title += f" (first {len(shown)}; --limit 0 shows all)"
    if not rows:
        return Text(f"No {what}.")
    table = Table(title=title, title_justify="left")
    table.add_column("task", no_wrap=True)
    table.add_column("passed", justify="right", no_wrap=True)
    table.add_column("verdicts", no_wrap=True)
    table.add_column("failure", overflow="fold")
    table.add_column("message", overflow="ellipsis", max_width=44)
    for row in shown:
        verdicts = Text()
        for status in row.statuses[:20]:
            verdicts.append("●" if status == "pass" else "✗", style=_STATUS_STYLE[status])
        table.add_row(row.task_id, f"{row.passed}/{row.n}", verdicts, row.main_label, row.message)
    return table


def detail_view(detail: TaskDetail) -> RenderableType:
    """One task: every sample's verdict, failing tests, solution, canonical solution, tests."""
    row = detail.row
    parts: list[RenderableType] = [
        Text(f"{row.task_id}: {row.passed}/{row.n} samples pass", style="bold"),
        Text(
            f"libraries: {', '.join(row.libs) or 'n/a'}; domains: {', '.join(row.domains) or 'n/a'}"
        ),
    ]
    for sample in detail.samples:
        style = _STATUS_STYLE[sample.status]
        heading = f"sample {sample.index}: {sample.status}"
        if sample.label and sample.label != sample.status:
            heading += f" ({sample.label})"
        if sample.duration_s is not None:
            heading += f", {sample.duration_s:.2f} s"
        body: list[RenderableType] = []
        if sample.message:
            body.append(Text(sample.message, style=style))
        for name, text in sample.failing_tests:
            body.append(Panel(Text(text), title=name, title_align="left", border_style="red"))
        body.append(Syntax(sample.solution.rstrip() or "# (empty)", "python", line_numbers=True))
        parts.append(Panel(Group(*body), title=heading, title_align="left", border_style=style))
    if detail.canonical_solution is not None:
        parts.append(
            Panel(
                Syntax(detail.canonical_solution.rstrip(), "python", line_numbers=True),
                title="canonical solution",
                title_align="left",
            )
        )
    if detail.test is not None:
        parts.append(
            Panel(Syntax(detail.test.rstrip(), "python"), title="tests", title_align="left")
        )
    return Group(*parts)


def windows_view(scores: Sequence[WindowScore], benchmark_title: str) -> Table:
    """A dated benchmark's pass@1 by contest-date window, side by side, with counts, overall
    and per difficulty (the first column: every problem)."""
    table = Table(title=f"{benchmark_title} pass@1 by contest date", title_justify="left")
    table.add_column("")
    for score in scores:
        table.add_column(score.window.describe(), justify="right")
    table.add_row("all", *(f"{percent(s.pass_at_1, 2)} of {s.problems}" for s in scores))
    names = list(dict.fromkeys(name for s in scores for name in s.by_difficulty))
    for name in names:
        cells = []
        for score in scores:
            n, value = score.by_difficulty.get(name, (0, 0.0))
            cells.append(f"{percent(value, 2)} of {n}" if n else "-")
        table.add_row(name, *cells)
    return table
