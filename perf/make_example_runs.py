"""Write the two sample files behind the worked examples in docs/inspect.md and docs/compare.md.

Both cover BigCodeBench-Hard (148 tasks), one sample per task, built from the dataset itself so
that the verdicts come from a real `passbench evaluate` run rather than hand-made fixtures:

  - `canonical.jsonl`: every task's canonical program (complete_prompt + canonical_solution);
  - `broken.jsonl`: the same programs with deliberate faults on a fixed selection of tasks, by
    the task's position i (0-based, dataset order) in the Hard subset:
      i % 4 == 0         task_func returns None instead of its result (a wrong value)
      i % 20 == 1        the program ends in a syntax error
      i % 20 == 2        the program imports a module that does not exist
      i in (3, 7)        the program sleeps 600 s at import, past the time limit
    The selections do not overlap, so 37 + 8 + 8 + 2 = 55 tasks are broken.

Usage (then evaluate and inspect as docs/inspect.md shows):
  PASSBENCH_DATA_DIR=../shared/datasets python perf/make_example_runs.py OUTDIR
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from passbench.core.records import Task
from passbench.stages.benchmarks import load_benchmark

# Appended after the canonical program: the tests then call a task_func whose result is lost.
_WRONG_VALUE = (
    "\n\n_canonical_task_func = task_func\n\n\n"
    "def task_func(*args, **kwargs):\n"
    "    _canonical_task_func(*args, **kwargs)\n"
    "    return None\n"
)
_SYNTAX_ERROR = "\n\ndef unfinished(:\n    return\n"
_MISSING_IMPORT = "import passbench_example_missing_module\n"
_SLEEP = "import time\n\ntime.sleep(600)\n"
SLEEPERS = (3, 7)


def canonical_program(task: Task) -> str:
    return task.prompts["complete"] + "\n" + task.canonical_solution


def fault(index: int) -> str | None:
    """The fault planted in the task at this position, or None (kept canonical)."""
    if index in SLEEPERS:
        return "timeout"
    if index % 4 == 0:
        return "wrong_value"
    if index % 20 == 1:
        return "syntax_error"
    if index % 20 == 2:
        return "missing_import"
    return None


_APPLY: dict[str, Callable[[str], str]] = {
    "wrong_value": lambda program: program + _WRONG_VALUE,
    "syntax_error": lambda program: program + _SYNTAX_ERROR,
    "missing_import": lambda program: _MISSING_IMPORT + program,
    "timeout": lambda program: _SLEEP + program,
}


def broken_program(index: int, task: Task) -> str:
    program = canonical_program(task)
    kind = fault(index)
    return program if kind is None else _APPLY[kind](program)


def write_jsonl(path: Path, rows: Iterable[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    args = parser.parse_args()
    data_dir = os.environ.get("PASSBENCH_DATA_DIR")
    loaded = load_benchmark(
        "bigcodebench",
        subset="hard",
        data_dir=Path(data_dir) if data_dir else None,
        download=False,
    )
    tasks = list(loaded.tasks)
    args.outdir.mkdir(parents=True, exist_ok=True)
    write_jsonl(
        args.outdir / "canonical.jsonl",
        ({"task_id": t.task_id, "solution": canonical_program(t)} for t in tasks),
    )
    write_jsonl(
        args.outdir / "broken.jsonl",
        ({"task_id": t.task_id, "solution": broken_program(i, t)} for i, t in enumerate(tasks)),
    )
    planted: dict[str, list[str]] = {}
    for index, task in enumerate(tasks):
        kind = fault(index)
        if kind is not None:
            planted.setdefault(kind, []).append(task.task_id)
    (args.outdir / "broken_faults.json").write_text(json.dumps(planted, indent=1) + "\n")
    counts = ", ".join(f"{kind} {len(ids)}" for kind, ids in planted.items())
    print(f"{len(tasks)} tasks; broken: {counts}; written to {args.outdir}")


if __name__ == "__main__":
    main()
