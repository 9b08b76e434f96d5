"""Scores by contest-date window, for any benchmark whose tasks carry contest dates.

A run's tasks are dated by its `task_info` (`contest_date`, and `difficulty` and `platform` when
known), which a benchmark's reader or `attach_official_results` fills in. The score of a window
is the leaderboard's: the mean of the tasks' pass@1 over the tasks whose date lies in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from passbench.core.errors import InputError
from passbench.core.runs import RunResults
from passbench.stages.benchmarks.selection import DateWindow

#: The order difficulties are shown in; others follow, sorted.
DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class DatedTask:
    """One task's verdicts with the facts date-window scoring reads."""

    question_id: str
    contest_date: str
    difficulty: str
    platform: str
    graded: tuple[bool, ...]

    @property
    def pass_at_1(self) -> float:
        return sum(self.graded) / len(self.graded) if self.graded else 0.0


def _undated(run: RunResults) -> list[str]:
    return [
        task_id for task_id in run.tasks if "contest_date" not in run.task_info.get(task_id, {})
    ]


def is_dated(run: RunResults) -> bool:
    """Whether every task of `run` has a contest date (and there is at least one task)."""
    return bool(run.tasks) and not _undated(run)


def dated_tasks(run: RunResults) -> list[DatedTask]:
    """The run's tasks as scoring rows (dates from `task_info`); InputError when it has none."""
    missing = _undated(run)
    if missing:
        raise InputError(
            f"{run.path}: no contest dates for {len(missing)} task(s), e.g. {missing[0]}: "
            "--since/--until and date windows need a run of a benchmark whose tasks carry "
            "contest dates (its own result file, or the passbench run with that file beside it)",
            field="since",
        )
    rows = []
    for task_id, samples in run.tasks.items():
        info = run.task_info[task_id]
        rows.append(
            DatedTask(
                task_id,
                str(info["contest_date"]),
                str(info.get("difficulty", "?")),
                str(info.get("platform", "?")),
                tuple(sample.passed for sample in samples),
            )
        )
    return rows


def require_dates(run: RunResults, option: str) -> None:
    """InputError in one line unless every task of `run` has a contest date."""
    undated = _undated(run)
    if undated:
        raise InputError(
            f"{run.path}: --{option} needs a benchmark whose tasks carry contest dates; "
            f"{run.benchmark or 'this run'} has none for {len(undated)} task(s), e.g. {undated[0]}",
            field=option,
        )


def restrict_to_window(run: RunResults, window: DateWindow) -> RunResults:
    """The run with only the tasks whose contest date lies in `window`."""
    if not window.active:
        return run
    kept = {row.question_id for row in dated_tasks(run) if window.contains(row.contest_date)}
    if not kept:
        raise InputError(
            f"{run.path}: no task's contest date is {window.describe()}", field="since"
        )
    return replace(run, tasks={k: v for k, v in run.tasks.items() if k in kept})


# ---- scores -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowScore:
    """pass@1 over the problems of one date window, overall and per difficulty."""

    window: DateWindow
    problems: int
    pass_at_1: float  # mean over the problems, in [0, 1]
    by_difficulty: Mapping[str, tuple[int, float]]  # difficulty -> (problems, pass@1)
    by_platform: Mapping[str, tuple[int, float]]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def window_score(rows: Sequence[DatedTask], window: DateWindow) -> WindowScore:
    chosen = [row for row in rows if window.contains(row.contest_date)]

    def grouped(key: str, order: Sequence[str]) -> dict[str, tuple[int, float]]:
        groups: dict[str, list[float]] = {}
        for row in chosen:
            groups.setdefault(getattr(row, key), []).append(row.pass_at_1)
        names = [name for name in order if name in groups]
        names += sorted(name for name in groups if name not in order)
        return {name: (len(groups[name]), _mean(groups[name])) for name in names}

    return WindowScore(
        window,
        len(chosen),
        _mean([row.pass_at_1 for row in chosen]),
        grouped("difficulty", DIFFICULTIES),
        grouped("platform", ()),
    )


def window_scores(rows: Sequence[DatedTask], window: DateWindow) -> list[WindowScore]:
    """Every problem's score, then the window's when one is given (side by side)."""
    scores = [window_score(rows, DateWindow())]
    if window.active:
        scores.append(window_score(rows, window))
    return scores


def scores_dict(path: object, scores: Sequence[WindowScore]) -> dict[str, Any]:
    """The scores as JSON-ready data (`inspect --format json`): every problem's first."""
    return {
        "file": str(path),
        "windows": [
            {
                "window": score.window.describe(),
                "since": str(score.window.since) if score.window.since else None,
                "until": str(score.window.until) if score.window.until else None,
                "problems": score.problems,
                "pass@1": score.pass_at_1,
                "by_difficulty": {
                    name: {"problems": n, "pass@1": value}
                    for name, (n, value) in score.by_difficulty.items()
                },
                "by_platform": {
                    name: {"problems": n, "pass@1": value}
                    for name, (n, value) in score.by_platform.items()
                },
            }
            for score in scores
        ],
    }
