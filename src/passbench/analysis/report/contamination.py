"""A run's score with and without the tasks a contamination check flagged
(`passbench inspect --exclude-contaminated OVERLAP.json`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.table import Table

from passbench.core.errors import InputError
from passbench.stages.results import RunResults
from passbench.stages.results.taskinfo import TaskCatalog


@dataclass(frozen=True)
class GroupScore:
    """pass@1 (the mean over tasks of the passing fraction of its samples) of some tasks."""

    label: str
    tasks: int
    pass_at_1: float


def exclusion_scores(run: RunResults, flagged: Collection[str]) -> list[GroupScore]:
    """Every task's score, the clean tasks', the flagged tasks' (in that order)."""
    counts = run.counts()
    return scores_without({task_id: counts.get(task_id, (0, 0)) for task_id in run.tasks}, flagged)


def scores_without(
    counts: Mapping[str, tuple[int, int]], flagged: Collection[str]
) -> list[GroupScore]:
    """exclusion_scores on (n, c) per task (samples, passing samples): what the leaderboard
    holds for a stored run. A task with no samples counts among the tasks, not in pass@1."""

    def score(label: str, ids: Sequence[str]) -> GroupScore:
        rates = [counts[i][1] / counts[i][0] for i in ids if counts[i][0]]
        return GroupScore(label, len(ids), sum(rates) / len(rates) if rates else 0.0)

    every = list(counts)
    return [
        score("all tasks", every),
        score("clean", [i for i in every if i not in flagged]),
        score("contaminated", [i for i in every if i in flagged]),
    ]


def without_tasks(
    run: RunResults, catalog: TaskCatalog, flagged: Collection[str], source: Path
) -> tuple[RunResults, TaskCatalog]:
    """The run and its benchmark's catalog without the flagged tasks (so the report does not
    call them missing); InputError naming the overlap file when nothing is left."""
    kept = {task_id: samples for task_id, samples in run.tasks.items() if task_id not in flagged}
    if not kept:
        raise InputError(
            "every task of the run is flagged as contaminated: nothing left to report",
            path=source,
            field="--exclude-contaminated",
        )
    return replace(run, tasks=kept), replace(
        catalog,
        tasks={k: v for k, v in catalog.tasks.items() if k not in flagged},
        hard_ids=frozenset(catalog.hard_ids - set(flagged)),
    )


def check_benchmark(run: RunResults, document: Mapping[str, Any], source: Path) -> None:
    """An overlap file checked another benchmark's tasks: InputError."""
    benchmark = document.get("benchmark")
    if run.benchmark and benchmark and run.benchmark != benchmark:
        raise InputError(
            f"checked {benchmark} tasks, and the run is {run.benchmark}",
            path=source,
            field="--exclude-contaminated",
        )


def exclusion_dict(
    source: Path, document: Mapping[str, Any], scores: Sequence[GroupScore]
) -> dict[str, Any]:
    corpus = document.get("corpus") or {}
    return {
        "file": str(source),
        "corpus_sha256": corpus.get("sha256"),
        "n": document.get("n"),
        "thresholds": document.get("thresholds"),
        "scores": [{"tasks": s.label, "count": s.tasks, "pass@1": s.pass_at_1} for s in scores],
    }


def exclusion_view(scores: Sequence[GroupScore], source: Path) -> Table:
    table = Table(
        title=f"pass@1 with and without the tasks {source.name} flags",
        title_justify="left",
    )
    table.add_column("")
    table.add_column("tasks", justify="right")
    table.add_column("pass@1", justify="right")
    for score in scores:
        value = f"{100 * score.pass_at_1:.2f}%" if score.tasks else "-"
        table.add_row(score.label, str(score.tasks), value)
    return table
