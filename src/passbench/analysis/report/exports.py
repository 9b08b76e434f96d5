"""Machine-readable and plain-text exports of an Inspection: JSON, CSV, Markdown."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from passbench.analysis.report.analysis import GroupScore, Inspection, Summary, TaskDetail, TaskRow
from passbench.analysis.report.languages import (
    RUN_HEADER,
    LanguageScore,
    RunRow,
    language_cells,
    language_header,
    run_cells,
)
from passbench.analysis.report.triage import class_line, loss_line, triage_dict
from passbench.core.scoring import Interval

INSPECT_SCHEMA_VERSION = 1


def _number(value: float | None) -> float | None:
    """JSON has no NaN: an undefined statistic is null."""
    if value is None or math.isnan(value):
        return None
    return value


def interval_dict(interval: Interval | None) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "low": _number(interval.low),
        "high": _number(interval.high),
        "method": interval.method,
        "confidence": interval.confidence,
        "resamples": interval.resamples or None,
        "seed": interval.seed,
        "engine": interval.engine or None,
    }


def summary_dict(summary: Summary) -> dict[str, Any]:
    return {
        "name": summary.name,
        "path": summary.path,
        "origin": summary.origin,
        "benchmark": summary.benchmark,
        "split": summary.split,
        "subset": summary.subset,
        "calibrated": summary.calibrated,
        "dataset_version": summary.dataset_version,
        "dataset_sha256": summary.dataset_sha256,
        "isolation": summary.isolation,
        "unsandboxed": summary.unsandboxed,
        "passbench_version": summary.passbench_version,
        "evalenv": dict(summary.evalenv) if summary.evalenv else None,
        "date": summary.date,
        "n_tasks": summary.n_tasks,
        "samples_per_task": {str(n): count for n, count in summary.samples_per_task.items()},
        "pass_at_k": {key: _number(value) for key, value in summary.pass_at_k.items()},
        "security_scores": {key: _number(v) for key, v in summary.security_scores.items()},
        "pass_rates_by_try": {f"pass_rate_{t}": v for t, v in summary.try_pass_rates.items()},
        "ci": {key: interval_dict(interval) for key, interval in summary.intervals.items()},
        "pass_at_1_exact_ci": interval_dict(summary.exact_pass_at_1),
        "tasks_solved": summary.tasks_solved,
        "missing_tasks": list(summary.missing_tasks),
        "unknown_tasks": list(summary.unknown_tasks),
        "gt_pass_rate": summary.gt_pass_rate,
        "gt_failed_tasks": list(summary.gt_failed_tasks),
        "stored_pass_at_k": dict(summary.stored_pass_at_k),
        "categories_from": summary.categories_from,
        "notes": list(summary.notes),
        "environment_gaps": dict(summary.environment_gaps),
    }


def group_dict(score: GroupScore) -> dict[str, Any]:
    return {
        "name": score.name,
        "tasks": score.tasks,
        "pass_at_1": score.pass_at_1,
        "solved": score.solved,
        "ci": interval_dict(score.interval),
    }


def task_dict(row: TaskRow) -> dict[str, Any]:
    return {
        "task_id": row.task_id,
        "n": row.n,
        "passed": row.passed,
        "pass_rate": row.pass_rate,
        "statuses": list(row.statuses),
        "labels": list(row.labels),
        "main_label": row.main_label or None,
        "message": row.message,
        "libs": list(row.libs),
        "domains": list(row.domains),
        "hard": row.hard,
    }


def inspection_dict(
    inspection: Inspection, tasks: Sequence[TaskRow] | None = None
) -> dict[str, Any]:
    """The whole inspection as JSON-ready data; `tasks` narrows the task list (filters)."""
    return {
        "schema_version": INSPECT_SCHEMA_VERSION,
        "summary": summary_dict(inspection.summary),
        "failures": [
            {
                "label": group.label,
                "category": group.category,
                "exception_type": group.exception_type,
                "samples": group.samples,
                "tasks": group.tasks,
                "examples": list(group.examples),
                "example_message": group.example_message,
            }
            for group in inspection.failures
        ],
        "by_language": [group_dict(score) for score in inspection.by_language],
        "by_domain": [group_dict(score) for score in inspection.by_domain],
        "by_library": [group_dict(score) for score in inspection.by_library],
        "hard_subset": group_dict(inspection.hard_subset) if inspection.hard_subset else None,
        "pass_at_k_curve": [[k, value] for k, value in inspection.pass_at_k_curve],
        "tasks": [task_dict(row) for row in (inspection.tasks if tasks is None else tasks)],
        "triage": triage_dict(inspection.triage) if inspection.triage else None,
    }


def detail_dict(detail: TaskDetail) -> dict[str, Any]:
    return {
        **task_dict(detail.row),
        "entry_point": detail.entry_point,
        "canonical_solution": detail.canonical_solution,
        "test": detail.test,
        "samples": [
            {
                "index": sample.index,
                "status": sample.status,
                "label": sample.label or None,
                "message": sample.message,
                "duration_s": sample.duration_s,
                "solution": sample.solution,
                "failing_tests": {name: text for name, text in sample.failing_tests},
            }
            for sample in detail.samples
        ],
    }


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


CSV_COLUMNS = (
    "task_id",
    "n",
    "passed",
    "pass_rate",
    "statuses",
    "main_label",
    "message",
    "libs",
    "domains",
    "hard",
)


def tasks_csv(rows: Sequence[TaskRow]) -> str:
    """One line per task; lists are joined with ';' so each cell stays one value."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                row.task_id,
                row.n,
                row.passed,
                f"{row.pass_rate:.6g}",
                ";".join(row.statuses),
                row.main_label,
                row.message,
                ";".join(row.libs),
                ";".join(row.domains),
                "true" if row.hard else "false",
            ]
        )
    return buffer.getvalue()


def percent(value: float | None, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{100 * value:.{digits}f}%"


def interval_text(interval: Interval | None) -> str:
    if interval is None or math.isnan(interval.low):
        return ""
    return f"[{percent(interval.low)}, {percent(interval.high)}]"


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    return lines


def languages_markdown(rows: Sequence[RunRow], scores: Sequence[LanguageScore]) -> str:
    """Several runs as Markdown: the runs with their language, then the breakdown by language
    (when there is more than one)."""
    lines = ["# Runs", ""]
    lines += _md_table(RUN_HEADER, [run_cells(row) for row in rows])
    if len(scores) > 1:
        header = language_header(scores)
        lines += ["", "## By language", ""]
        lines += _md_table(header, [language_cells(score, header) for score in scores])
    return "\n".join(lines) + "\n"


def summary_pairs(summary: Summary) -> list[tuple[str, str]]:
    """(label, value) lines of the summary, shared by the terminal and Markdown views."""
    pairs: list[tuple[str, str]] = [("run", summary.name), ("file", summary.path)]
    for key, value in summary.pass_at_k.items():
        text = percent(value)
        interval = summary.intervals.get(key)
        if interval is not None:
            text += f"  {interval_text(interval)} bootstrap {round(interval.confidence * 100)}%"
        if key == "pass@1" and summary.exact_pass_at_1 is not None:
            text += f", {interval_text(summary.exact_pass_at_1)} exact (Clopper-Pearson)"
        pairs.append((key, text))
    for key, value in summary.security_scores.items():
        pairs.append((key, percent(value)))
    for attempt, value in summary.try_pass_rates.items():
        pairs.append((f"pass_rate_{attempt}", f"{percent(value)} (pass@1 after try {attempt})"))
    sizes = ", ".join(
        f"{n} ({count} tasks)" if len(summary.samples_per_task) > 1 else str(n)
        for n, count in summary.samples_per_task.items()
    )
    pairs += [
        ("tasks", f"{summary.n_tasks} ({summary.tasks_solved} solved by at least one sample)"),
        ("samples per task", sizes or "0"),
        ("missing tasks", _listing(summary.missing_tasks)),
    ]
    if summary.unknown_tasks:
        pairs.append(("unknown tasks", _listing(summary.unknown_tasks)))
    gt = percent(summary.gt_pass_rate) if summary.gt_pass_rate is not None else "not recorded"
    if summary.gt_failed_tasks:
        gt += f" (failing {_listing(summary.gt_failed_tasks)})"
    pairs += [
        ("ground-truth pass rate", gt),
        (
            "benchmark",
            " / ".join(str(v) for v in (summary.benchmark, summary.split, summary.subset) if v)
            or "unknown",
        ),
        ("language", summary.language),
        ("calibrated", _yes_no(summary.calibrated)),
        ("isolation", _isolation_text(summary)),
        (
            "dataset",
            " ".join(v for v in (summary.dataset_version, _short_hash(summary.dataset_sha256)) if v)
            or "not recorded",
        ),
        ("passbench", summary.passbench_version or "not recorded"),
    ]
    if summary.evalenv:
        pairs.append(
            (
                "evaluation env",
                ", ".join(f"{k}={_short_hash(str(v))}" for k, v in summary.evalenv.items()),
            )
        )
    pairs += [
        ("date", summary.date or "not recorded"),
        ("failure categories from", summary.categories_from),
    ]
    return pairs


def _yes_no(value: bool | None) -> str:
    return "not recorded" if value is None else "yes" if value else "no"


def _clip(text: str, limit: int = 120) -> str:
    """At most `limit` characters, with an ellipsis where text was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_hash(value: str | None) -> str | None:
    if value and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return f"sha256:{value[:12]}"
    return value


def _listing(ids: Sequence[str], limit: int = 8) -> str:
    if not ids:
        return "none"
    shown = ", ".join(ids[:limit])
    return f"{len(ids)}: {shown}" + (", ..." if len(ids) > limit else "")


def inspection_markdown(inspection: Inspection, tasks: Sequence[TaskRow]) -> str:
    summary = inspection.summary
    lines = [f"# {summary.name}", ""]
    if summary.unsandboxed_warning:
        lines += [f"> **WARNING: {summary.unsandboxed_warning}**", ""]
    lines += _md_table(["", ""], summary_pairs(summary))
    for note in summary.notes:
        lines.append(f"\n> note: {note}")
    lines += ["", "## Failures by category", ""]
    lines += _md_table(
        ["category", "samples", "tasks", "examples", "example message"],
        [
            (g.label, g.samples, g.tasks, ", ".join(g.examples), _clip(g.example_message))
            for g in inspection.failures
        ],
    )
    if inspection.triage is not None:
        result = inspection.triage
        lines += ["", "## Failures by cause", "", class_line(result), ""]
        lines += _md_table(
            ["class", "what", "samples", "examples"],
            [(g.cls, g.kind, g.samples, ", ".join(g.tasks)) for g in result.groups],
        )
        lines += ["", loss_line(result)]
    if inspection.hard_subset is not None:
        hard = inspection.hard_subset
        lines += [
            "",
            "## Hard subset",
            "",
            f"pass@1 {percent(hard.pass_at_1)} {interval_text(hard.interval)}"
            f" over {hard.tasks} tasks",
        ]
    if inspection.by_language:
        lines += ["", "## By language", ""]
        lines += _md_table(
            ["language", "tasks", "pass@1", "95% CI", "solved"],
            [
                (s.name, s.tasks, percent(s.pass_at_1), interval_text(s.interval), s.solved)
                for s in inspection.by_language
            ],
        )
    if inspection.by_domain:
        lines += ["", "## By domain", ""]
        lines += _md_table(
            ["domain", "tasks", "pass@1", "95% CI", "solved"],
            [
                (s.name, s.tasks, percent(s.pass_at_1), interval_text(s.interval), s.solved)
                for s in inspection.by_domain
            ],
        )
    if inspection.by_library:
        lines += ["", "## By library", ""]
        lines += _md_table(
            ["library", "tasks", "pass@1", "solved"],
            [(s.name, s.tasks, percent(s.pass_at_1), s.solved) for s in inspection.by_library],
        )
    lines += ["", "## Tasks", ""]
    lines += _md_table(
        ["task", "passed", "failure", "message"],
        [(r.task_id, f"{r.passed}/{r.n}", r.main_label, _clip(r.message)) for r in tasks],
    )
    return "\n".join(lines) + "\n"


def detail_markdown(detail: TaskDetail) -> str:
    row = detail.row
    lines = [
        f"# {row.task_id}",
        "",
        f"passed {row.passed}/{row.n}; libraries: {', '.join(row.libs) or 'n/a'}",
        "",
    ]
    for sample in detail.samples:
        shown = sample.label and sample.label != sample.status
        verdict = sample.status + (f" ({sample.label})" if shown else "")
        lines += [f"## Sample {sample.index}: {verdict}", ""]
        if sample.message:
            lines += [f"> {sample.message}", ""]
        for name, text in sample.failing_tests:
            lines += [f"### {name}", "", "```", text, "```", ""]
        lines += ["```python", sample.solution.rstrip(), "```", ""]
    if detail.canonical_solution is not None:
        lines += [
            "## Canonical solution",
            "",
            "```python",
            detail.canonical_solution.rstrip(),
            "```",
            "",
        ]
    if detail.test is not None:
        lines += ["## Tests", "", "```python", detail.test.rstrip(), "```", ""]
    return "\n".join(lines)


def _isolation_text(summary: Summary) -> str:
    text = summary.isolation or "not recorded (official evaluator file)"
    return f"{text} (UNSANDBOXED)" if summary.unsandboxed else text
