"""Choosing tasks: `--tasks` and `--id-range`, one meaning in every command.

    --tasks ID,ID    these task ids (the official evaluate's --selective_evaluate); a bare
                     number gets the benchmark's prefix: 13 -> BigCodeBench/13
    --id-range A-B   the tasks at positions A <= i < B of the benchmark subset's task list,
                     half-open, as the official `bigcodebench.generate --id_range A-B`
                     enumerates the subset's tasks (for full BigCodeBench and HumanEval the
                     position is the task number; for BigCodeBench-Hard it is not)

    --since DATE     only problems whose contest date is on or after DATE (YYYY-MM-DD)
    --until DATE     only problems whose contest date is on or before DATE (inclusive, as
                     LiveCodeBench's --start_date / --end_date); for dated benchmarks only
                     (LiveCodeBench), since a model's training cutoff leaves only later
                     problems clean

Given together, a task must satisfy all. Unknown ids, a malformed range or date, a date window
on a benchmark without dates and a selection that leaves no task are errors naming the option.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from passbench.core.errors import InputError, UnknownNameError
from passbench.core.records import Task

#: The help texts of the two options, shared by every command that has them.
TASKS_HELP = (
    "Only these task ids, comma-separated; a bare number gets the benchmark's prefix "
    "(the official --selective_evaluate)."
)
ID_RANGE_HELP = (
    "Only the tasks at positions LOW <= i < HIGH of the subset's task list, e.g. 0-10 "
    "(the official --id_range)."
)

SINCE_HELP = (
    "Only problems whose contest date is on or after this date, YYYY-MM-DD (dated benchmarks: "
    "livecodebench)."
)
UNTIL_HELP = "Only problems whose contest date is on or before this date (inclusive), YYYY-MM-DD."

_RANGE = re.compile(r"\s*(\d+)\s*-\s*(\d+)\s*")


MODEL_CUTOFF_HELP = (
    "A model's training cutoff, YYYY-MM-DD: score the problems dated after it beside every "
    "problem (dated benchmarks: livecodebench)."
)


@dataclass(frozen=True)
class DateWindow:
    """Contest dates `since <= date <= until` (both inclusive; None: unbounded). A window from
    a model's training `cutoff` starts the day after it: the problems the model cannot have
    seen (LiveCodeBench's contamination-free window)."""

    since: _dt.date | None = None
    until: _dt.date | None = None
    cutoff: _dt.date | None = None

    @property
    def active(self) -> bool:
        return self.since is not None or self.until is not None

    def contains(self, contest_date: str) -> bool:
        """Whether an ISO date or datetime ("2024-08-01T00:00:00") lies in the window."""
        day = _dt.datetime.fromisoformat(contest_date).date()
        if self.since is not None and day < self.since:
            return False
        return self.until is None or day <= self.until

    def describe(self) -> str:
        if self.cutoff is not None:
            after = f"after cutoff {self.cutoff}"
            return after if self.until is None else f"{after} to {self.until}"
        if self.since is not None and self.until is not None:
            return f"{self.since} to {self.until}"
        if self.since is not None:
            return f"since {self.since}"
        return f"until {self.until}" if self.until is not None else "all dates"

    @classmethod
    def parse(
        cls, since: str | None, until: str | None, model_cutoff: str | None = None
    ) -> DateWindow:
        if model_cutoff is not None:
            if since is not None:
                raise InputError(
                    "--model-cutoff starts the window the day after the cutoff; "
                    "give it or --since, not both",
                    field="model-cutoff",
                )
            cutoff = parse_date(model_cutoff, "model-cutoff")
            window = cls(
                cutoff + _dt.timedelta(days=1),
                parse_date(until, "until") if until is not None else None,
                cutoff,
            )
            if window.until is not None and window.until < cutoff + _dt.timedelta(days=1):
                raise InputError(
                    f"--until {until} is not after --model-cutoff {model_cutoff}",
                    field="model-cutoff",
                )
            return window
        window = cls(
            parse_date(since, "since") if since is not None else None,
            parse_date(until, "until") if until is not None else None,
        )
        if window.since and window.until and window.since > window.until:
            raise InputError(f"--since {since} is after --until {until}", field="since")
        return window


def parse_date(text: str, field: str) -> _dt.date:
    """`YYYY-MM-DD` -> a date; InputError naming the option otherwise."""
    try:
        return _dt.date.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"expected a date YYYY-MM-DD, got {text!r}", field=field) from None


@dataclass(frozen=True)
class TaskSelection:
    """What --tasks, --id-range, --since and --until asked for; all None: every task."""

    task_ids: tuple[str, ...] | None = None  # as given: full ids or bare numbers
    id_range: tuple[int, int] | None = None  # positions, half-open
    window: DateWindow = field(default_factory=DateWindow)

    @classmethod
    def parse(
        cls,
        tasks: str | None,
        id_range: str | None,
        since: str | None = None,
        until: str | None = None,
    ) -> TaskSelection:
        return cls(
            task_ids=parse_task_ids(tasks) if tasks is not None else None,
            id_range=parse_id_range(id_range) if id_range is not None else None,
            window=DateWindow.parse(since, until),
        )


def parse_id_range(text: str) -> tuple[int, int]:
    """`LOW-HIGH` with LOW < HIGH -> (LOW, HIGH)."""
    match = _RANGE.fullmatch(text)
    if not match or int(match[1]) >= int(match[2]):
        raise InputError(
            f"expected LOW-HIGH with 0 <= LOW < HIGH (positions LOW <= i < HIGH), got {text!r}",
            field="id-range",
        )
    return int(match[1]), int(match[2])


def parse_task_ids(text: str) -> tuple[str, ...]:
    """`BigCodeBench/1, 13` -> ("BigCodeBench/1", "13"); at least one id."""
    ids = tuple(part.strip() for part in text.split(",") if part.strip())
    if not ids:
        raise InputError(f"expected task ids separated by commas, got {text!r}", field="tasks")
    return ids


def select_tasks(
    tasks: Sequence[Task],
    task_ids: Sequence[str] | None = None,
    id_range: tuple[int, int] | None = None,
    window: DateWindow | None = None,
) -> list[Task]:
    """The tasks `task_ids`, `id_range` and the date `window` select from `tasks` (a benchmark
    subset, in its order): in the order of `task_ids` when given, else in the subset's order.

    Unknown ids are an UnknownNameError; a window on tasks without contest dates and an empty
    selection are InputErrors.
    """
    if window is not None and window.active:
        undated = [task for task in tasks if "contest_date" not in task.metadata]
        if undated:
            raise InputError(
                f"--since/--until select by contest date, and {undated[0].benchmark} tasks "
                "have none (dated benchmarks: livecodebench)",
                field="since" if window.since is not None else "until",
            )
        dated = [task for task in tasks if window.contains(task.metadata["contest_date"])]
        if not dated:
            raise InputError(
                f"no tasks selected: no contest date of the {len(tasks)} tasks is "
                f"{window.describe()}",
                field="since" if window.since is not None else "until",
            )
        if task_ids is None and id_range is None:
            return dated
        allowed = {task.task_id for task in dated}
        chosen = select_tasks(tasks, task_ids, id_range)
        kept = [task for task in chosen if task.task_id in allowed]
        if not kept:
            raise InputError(
                f"no tasks selected: none of the selected tasks is {window.describe()}",
                field="since" if window.since is not None else "until",
            )
        return kept
    if task_ids is None and id_range is None:
        return list(tasks)
    chosen = list(tasks) if id_range is None else list(tasks)[id_range[0] : id_range[1]]
    if task_ids is not None:
        by_id = {task.task_id: task for task in tasks}
        by_number = {task.task_id.rpartition("/")[2]: task.task_id for task in tasks}
        wanted = [by_number.get(item, item) if "/" not in item else item for item in task_ids]
        wanted = list(dict.fromkeys(wanted))
        unknown = [task_id for task_id in wanted if task_id not in by_id]
        if unknown:
            shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise UnknownNameError(
                f"unknown task id(s) for this benchmark/subset: {shown}", field="tasks"
            )
        allowed = {task.task_id for task in chosen}
        chosen = [by_id[task_id] for task_id in wanted if task_id in allowed]
    if not chosen:
        what = "--tasks and --id-range select" if task_ids and id_range else "--id-range selects"
        raise InputError(
            f"no tasks selected: {what} none of the {len(tasks)} tasks",
            field="id-range" if id_range is not None else "tasks",
        )
    return chosen
