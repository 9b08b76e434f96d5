"""A run's run-to-run statistics as `passbench inspect` shows them (terminal, Markdown, JSON and
the HTML report): flaky samples (`evaluate --runs N`), pass@1 across epochs (`--epochs N`), the
tasks quarantined for unstable references, and the task set the run was measured on. Everything
is read from the result files (the pass@k file's `stability`, `epochs`, `quarantined_tasks`,
`score_denominator`; the block's `task_set`); a run without them shows nothing here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from passbench.analysis.report.svg import Bar, bar_chart
from passbench.core.stability import verdict_counts
from passbench.core.taskset import identity_from_meta
from passbench.stages.results import RunResults


@dataclass(frozen=True)
class RunStatistics:
    task_set: Mapping[str, Any] | None  # None: unknown (an official file)
    stability: Mapping[str, Any] | None  # --runs
    epochs: Mapping[str, Any] | None  # --epochs
    unstable_references: Mapping[str, Any]  # task -> why, from --ground-truth --runs
    score_denominator: str | None = None  # which tasks pass@k is over, when some are quarantined

    @property
    def empty(self) -> bool:
        return self.stability is None and self.epochs is None and not self.unstable_references


def run_statistics(run: RunResults) -> RunStatistics:
    document = run.pass_at_k_file or {}
    identity = identity_from_meta(run.meta)
    stability = document.get("stability")
    epochs = document.get("epochs")
    unstable = {
        task_id: why
        for task_id, why in run.quarantined_tasks.items()
        if why.get("category") == "unstable_reference"
    }
    return RunStatistics(
        task_set=identity.to_json() if identity is not None else None,
        stability=stability if isinstance(stability, dict) else None,
        epochs=epochs if isinstance(epochs, dict) else None,
        unstable_references=unstable,
        score_denominator=(
            str(document["score_denominator"]) if document.get("score_denominator") else None
        ),
    )


def statistics_dict(stats: RunStatistics) -> dict[str, Any]:
    """What `inspect --format json` adds: `task_set`, and, when measured, `stability`,
    `epochs` and `unstable_references`."""
    document: dict[str, Any] = {"task_set": stats.task_set}
    if stats.stability is not None:
        document["stability"] = dict(stats.stability)
    if stats.epochs is not None:
        document["epochs"] = dict(stats.epochs)
    if stats.unstable_references:
        document["unstable_references"] = dict(stats.unstable_references)
    return document


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{status} {n}" for status, n in counts.items())


def _flaky_lines(stability: Mapping[str, Any]) -> list[str]:
    rate = stability.get("flaky_rate") or 0.0
    lines = [
        f"Flaky samples over {stability['runs']} runs: {len(stability['flaky_samples'])} of "
        f"{stability['n_samples']} (flaky rate {100 * rate:.1f}%, in "
        f"{len(stability['flaky_tasks'])} tasks); pass@k counts the {stability['counted_run']} "
        f"run; pass@1 is {100 * stability['pass@1_if_flaky_fail']:.2f}% with every flaky sample "
        f"failing, {100 * stability['pass@1_if_flaky_pass']:.2f}% with every one passing"
    ]
    return lines


def _epoch_line(epochs: Mapping[str, Any]) -> str:
    per = ", ".join(f"{100 * value:.2f}%" for value in epochs["pass@1_per_epoch"])
    interval = epochs.get("pass@1_ci")
    ci = (
        f", {round(100 * epochs['confidence'])}% CI {100 * interval[0]:.2f}% to "
        f"{100 * interval[1]:.2f}%"
        if interval
        else ""
    )
    return (
        f"pass@1 over {epochs['epochs']} epochs: {100 * epochs['pass@1_mean']:.2f}%{ci} "
        f"(per epoch: {per})"
    )


def statistics_view(stats: RunStatistics, limit: int = 20) -> Group:
    parts: list[Any] = []
    if stats.stability is not None:
        parts.append(Text(_flaky_lines(stats.stability)[0]))
        flaky = stats.stability["flaky_samples"]
        if flaky:
            table = Table("task", "sample", "verdicts over the runs", title="Flaky samples")
            for item in flaky[: limit or len(flaky)]:
                table.add_row(item["task_id"], str(item["sample_index"]), _counts(item["verdicts"]))
            parts.append(table)
    if stats.epochs is not None:
        parts.append(Text(_epoch_line(stats.epochs)))
    if stats.unstable_references:
        table = Table("task", "reference verdicts", title="Quarantined: unstable references")
        for task_id, why in stats.unstable_references.items():
            table.add_row(task_id, _counts(why.get("verdicts", {})))
        parts.append(table)
    return Group(*parts)


def statistics_markdown(stats: RunStatistics) -> str:
    lines: list[str] = []
    if stats.stability is not None:
        lines += ["## Flaky samples", "", *_flaky_lines(stats.stability), ""]
        flaky = stats.stability["flaky_samples"]
        if flaky:
            lines += ["| task | sample | verdicts |", "|---|---:|---|"]
            lines += [
                f"| {s['task_id']} | {s['sample_index']} | {_counts(s['verdicts'])} |"
                for s in flaky
            ]
            lines.append("")
    if stats.epochs is not None:
        lines += ["## Epochs", "", _epoch_line(stats.epochs), ""]
    if stats.unstable_references:
        lines += ["## Unstable references (quarantined)", ""]
        lines += [
            f"- {task_id}: {_counts(why.get('verdicts', {}))}"
            for task_id, why in stats.unstable_references.items()
        ]
        lines.append("")
    return "\n".join(lines)


# ---- the HTML report ------------------------------------------------------------------------


def statistics_html(stats: RunStatistics) -> str:
    """The report's sections for what was measured: Flaky samples (--runs), Epochs (--epochs)
    and Quarantined references (a ground-truth stability run); nothing for a plain run."""
    parts = []
    if stats.stability is not None:
        parts.append(_flaky_html(stats.stability))
    if stats.epochs is not None:
        parts.append(_epochs_html(stats.epochs))
    if stats.unstable_references:
        parts.append(_quarantine_html(stats.unstable_references, stats.score_denominator))
    return "".join(parts)


def _task_link(task_id: str) -> str:
    return f'<a href="#task={escape(task_id)}">{escape(task_id)}</a>'


def _card(key: str, value: str, note: str, *, css: str = "v") -> str:
    return (
        f'<div class="card"><div class="k">{escape(key)}</div>'
        f'<div class="{css}">{escape(value)}</div><div class="ci">{escape(note)}</div></div>'
    )


def _percent(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"


def _flaky_html(stability: Mapping[str, Any]) -> str:
    flaky = stability["flaky_samples"]
    runs = stability["runs"]
    cards = [
        _card(
            "flaky rate",
            _percent(stability.get("flaky_rate"), 1),
            f"{len(flaky)} of {stability['n_samples']} samples, "
            f"{len(stability['flaky_tasks'])} tasks",
        ),
        _card(
            "pass@1 bounds",
            f"{_percent(stability['pass@1_if_flaky_fail'])} to "
            f"{_percent(stability['pass@1_if_flaky_pass'])}",
            "every flaky sample failing / passing",
            css="v range",
        ),
    ]
    rows = "".join(
        f'<tr><td>{_task_link(item["task_id"])}</td><td class="num">{item["sample_index"]}</td>'
        + "".join(
            f'<td class="num">{int(item["verdicts"].get(status, 0))}</td>'
            for status in _statuses(flaky)
        )
        + "</tr>"
        for item in flaky
    )
    head = "".join(f'<th class="num">{escape(status)}</th>' for status in _statuses(flaky))
    table = (
        f'<table class="grid" id="flaky-table"><thead><tr><th>task</th><th class="num">sample</th>'
        f"{head}</tr></thead><tbody>{rows}</tbody></table>"
        if flaky
        else f"<p>No sample changed its verdict over the {runs} runs.</p>"
    )
    return (
        f'<section id="flaky"><h2>Flaky samples ({runs} runs)</h2>'
        f'<div class="cards">{"".join(cards)}</div>'
        f"<p>{escape(_flaky_lines(stability)[0])}.</p>{table}</section>"
    )


def _statuses(flaky: Sequence[Mapping[str, Any]]) -> list[str]:
    """The verdicts seen over the flaky samples' runs, pass, fail and timeout first."""
    seen = {status for item in flaky for status in item["verdicts"]}
    return list(verdict_counts(sorted(seen)))


def _epochs_html(epochs: Mapping[str, Any]) -> str:
    interval = epochs.get("pass@1_ci")
    confidence = round(100 * epochs["confidence"])
    note = (
        f"{confidence}% CI {_percent(interval[0])} to {_percent(interval[1])} (Student-t)"
        if interval
        else "one epoch: no interval"
    )
    stderr = epochs.get("pass@1_stderr")
    cards = [
        _card(f"pass@1 over {epochs['epochs']} epochs", _percent(epochs["pass@1_mean"]), note),
        _card("standard error", _percent(stderr), "sd of the epochs / sqrt(epochs)"),
    ]
    per_epoch = epochs["pass@1_per_epoch"]
    rows = "".join(
        f'<tr><td class="num">{epoch + 1}</td><td class="num">{_percent(value)}</td></tr>'
        for epoch, value in enumerate(per_epoch)
    )
    table = (
        '<table class="grid" id="epoch-table"><thead><tr><th class="num">epoch</th>'
        f'<th class="num">pass@1</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    chart = bar_chart(
        [Bar(f"epoch {epoch + 1}", value) for epoch, value in enumerate(per_epoch)],
        title="pass@1 by epoch",
        maximum=1.0,
    )
    return (
        f'<section id="epochs"><h2>Epochs</h2><div class="cards">{"".join(cards)}</div>'
        f"<p>{escape(_epoch_line(epochs))}. The interval is the generation noise: how much the "
        "score moves when the model is asked again on the same tasks.</p>"
        f'<div class="plots">{table}{chart}</div></section>'
    )


def _quarantine_html(unstable: Mapping[str, Any], denominator: str | None) -> str:
    rows = "".join(
        f"<tr><td>{_task_link(task_id)}</td>"
        f"<td>{escape(_counts(why.get('verdicts', {})))}</td></tr>"
        for task_id, why in unstable.items()
    )
    said = f" Score denominator: {denominator}." if denominator else ""
    return (
        '<section id="quarantine"><h2>Quarantined: unstable references</h2>'
        f"<p>A ground-truth stability run (<code>evaluate --ground-truth --runs N</code>) found "
        f"{len(unstable)} task(s) whose reference solution passed in some runs and not in others; "
        f"their samples are left out of pass@k (numerator and denominator).{escape(said)}</p>"
        '<table class="grid" id="quarantine-table"><thead><tr><th>task</th>'
        f"<th>reference verdicts over the runs</th></tr></thead><tbody>{rows}</tbody></table>"
        "</section>"
    )
