"""The "fast" task set used to measure a harness's own cost per sample.

A task qualifies when its tests run so quickly that nearly all of a sample's wall time is the
harness's: the program (prompt + canonical solution) and its tests import only standard-library
modules, none of them slow or outside-facing (subprocess, sockets, HTTP, threads, sleeping,
signals, ctypes, ...), and the official evaluator's ground truth passes it with a recorded test
time under 0.1 s on the machine that derived the set. The static half is computed here; the
timing half comes from an official ground-truth run (`overhead.py --derive-task-set`), and the
result is kept in `fast_tasks.json` so every later run measures the same tasks.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from _common import BENCH_DIR

FAST_TASKS_FILE = BENCH_DIR / "fast_tasks.json"
MAX_TEST_SECONDS = 0.1

# Standard-library modules whose use means waiting on something other than the CPU (processes,
# the network, the clock, other threads) or touching the host in ways a sandbox changes.
SLOW_STDLIB = frozenset(
    {
        "asyncio", "cgi", "concurrent", "ctypes", "email", "ftplib", "getpass", "http",
        "multiprocessing", "platform", "queue", "sched", "select", "signal", "smtplib",
        "socket", "sqlite3", "ssl", "subprocess", "threading", "time", "tkinter", "turtle",
        "urllib", "webbrowser",
    }
)  # fmt: skip


def imported_modules(code: str) -> set[str]:
    """Top-level names of the absolute imports in `code` ({'<syntax>'} if it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {"<syntax>"}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def static_candidates(dataset: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Tasks whose solution and tests import only fast standard-library modules."""
    stdlib = set(sys.stdlib_module_names)
    chosen = []
    for task_id, row in dataset.items():
        program = row["complete_prompt"] + "\n" + row["canonical_solution"]
        modules = imported_modules(program) | imported_modules(row["test"])
        modules.discard("unittest")
        if modules <= stdlib and not modules & SLOW_STDLIB:
            chosen.append(task_id)
    return chosen


def select_fast(candidates: list[str], official_times: Mapping[str, float | None]) -> list[str]:
    return [
        task_id
        for task_id in candidates
        if (seconds := official_times.get(task_id)) is not None and seconds < MAX_TEST_SECONDS
    ]


def load_fast_tasks(path: Path = FAST_TASKS_FILE) -> list[str]:
    if not path.is_file():
        raise SystemExit(f"{path}: missing; create it with overhead.py --derive-task-set")
    payload = json.loads(path.read_text(encoding="utf-8"))
    task_ids: list[str] = payload["task_ids"]
    return task_ids


def merge_times(
    earlier: Mapping[str, float | None], latest: Mapping[str, float | None]
) -> dict[str, float | None]:
    """Best of runs: a task's fastest passing time; None only when it never passed.

    Test times taken on a shared machine swing with its load; the minimum is the least noisy
    estimate of what the test itself costs.
    """
    merged: dict[str, float | None] = {}
    for task_id in {*earlier, *latest}:
        passing = [t for t in (earlier.get(task_id), latest.get(task_id)) if t is not None]
        merged[task_id] = min(passing) if passing else None
    return merged


def previous_times(path: Path = FAST_TASKS_FILE) -> tuple[dict[str, float | None], int]:
    """The recorded official times and how many derivation runs they summarise."""
    if not path.is_file():
        return {}, 0
    payload = json.loads(path.read_text(encoding="utf-8"))
    return dict(payload.get("official_test_seconds", {})), int(payload.get("runs", 1))


def save_fast_tasks(
    task_ids: list[str],
    candidates: list[str],
    official_times: Mapping[str, float | None],
    runs: int,
    machine: Mapping[str, Any],
    path: Path = FAST_TASKS_FILE,
) -> None:
    payload = {
        "description": (
            "BigCodeBench v0.1.4 tasks whose program and tests import only fast standard-library "
            f"modules (none of: {', '.join(sorted(SLOW_STDLIB))}) and whose official "
            f"ground-truth test time (best of {runs} runs) was under {MAX_TEST_SECONDS} s. "
            "Re-derive with: perf/overhead.py --derive-task-set"
        ),
        "derived_on": machine,
        "runs": runs,
        "n_static_candidates": len(candidates),
        "task_ids": task_ids,
        "official_test_seconds": {task_id: official_times.get(task_id) for task_id in candidates},
    }
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
