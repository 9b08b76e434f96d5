"""A run's run-to-run statistics as `passbench inspect` shows them: flaky samples (`evaluate
--runs N`), pass@1 across epochs (`--epochs N`), the tasks quarantined for unstable references,
and the task set the run was measured on. Everything is read from the result files (the pass@k
file's `stability`, `epochs`, `quarantined_tasks`; the block's `task_set`); a run without them
shows nothing here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from passbench.core.taskset import identity_from_meta
from passbench.stages.results import RunResults


@dataclass(frozen=True)
class RunStatistics:
    task_set: Mapping[str, Any] | None  # None: unknown (an official file)
    stability: Mapping[str, Any] | None  # --runs
    epochs: Mapping[str, Any] | None  # --epochs
    unstable_references: Mapping[str, Any]  # task -> why, from --ground-truth --runs

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
