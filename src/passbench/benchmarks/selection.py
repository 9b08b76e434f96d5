"""Choosing tasks: `--tasks` and `--id-range`, one meaning in every command.

    --tasks ID,ID    these task ids (the official evaluate's --selective_evaluate); a bare
                     number gets the benchmark's prefix: 13 -> BigCodeBench/13
    --id-range A-B   the tasks at positions A <= i < B of the benchmark subset's task list,
                     half-open, as the official `bigcodebench.generate --id_range A-B`
                     enumerates the subset's tasks (for full BigCodeBench and HumanEval the
                     position is the task number; for BigCodeBench-Hard it is not)

Given together, a task must satisfy both. Unknown ids, a malformed range and a selection that
leaves no task are errors naming the option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from passbench.errors import InputError, UnknownNameError
from passbench.records import Task

#: The help texts of the two options, shared by every command that has them.
TASKS_HELP = (
    "Only these task ids, comma-separated; a bare number gets the benchmark's prefix "
    "(the official --selective_evaluate)."
)
ID_RANGE_HELP = (
    "Only the tasks at positions LOW <= i < HIGH of the subset's task list, e.g. 0-10 "
    "(the official --id_range)."
)

_RANGE = re.compile(r"\s*(\d+)\s*-\s*(\d+)\s*")


@dataclass(frozen=True)
class TaskSelection:
    """What --tasks and --id-range asked for; both None: every task."""

    task_ids: tuple[str, ...] | None = None  # as given: full ids or bare numbers
    id_range: tuple[int, int] | None = None  # positions, half-open

    @classmethod
    def parse(cls, tasks: str | None, id_range: str | None) -> TaskSelection:
        return cls(
            task_ids=parse_task_ids(tasks) if tasks is not None else None,
            id_range=parse_id_range(id_range) if id_range is not None else None,
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
) -> list[Task]:
    """The tasks `task_ids` and `id_range` select from `tasks` (a benchmark subset, in its
    order): in the order of `task_ids` when given, else in the subset's order.

    Unknown ids are an UnknownNameError; an empty selection is an InputError.
    """
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
