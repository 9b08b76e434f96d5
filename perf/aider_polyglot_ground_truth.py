"""Aider's polyglot benchmark, ground truth per language: every exercise's reference (example)
solution through the real CLI and the bubblewrap sandbox, all tests enabled, with a fresh
cache (no verdict reused); one language at a time (the machine has two shared cores).

    PASSBENCH_DATA_DIR=../shared/datasets python perf/aider_polyglot_ground_truth.py \
        [--languages cpp,go,java,javascript,python,rust] [--output-dir DIR] [--workers N]

For each language: `passbench evaluate -b aider-polyglot --subset <language> --ground-truth`,
its wall time, the pass rate, the mean and slowest per-exercise test time, and every failing
exercise with its category, reason and the last lines of its test output. Exercises that
`passbench env check aider-polyglot` lists as unable to run here are marked as such.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

LANGUAGES = ("cpp", "go", "java", "javascript", "python", "rust")


@dataclass(frozen=True)
class Measured:
    tasks: int
    passed: int
    wall_s: float
    durations: dict[str, float]  # task id -> seconds its build and tests took
    failing: dict[str, dict[str, str]]  # task id -> its verdict (status, category, reason)


def run_language(key: str, output: Path, cache: Path, workers: int | None) -> Measured:
    command = [sys.executable, "-m", "passbench.apps.cli", "evaluate", "-b", "aider-polyglot"]
    command += ["--subset", key, "--split", "whole", "--ground-truth"]
    command += ["--output-dir", str(output / key)]
    if workers:
        command += ["--workers", str(workers)]
    env = {**os.environ, "PASSBENCH_CACHE_DIR": str(cache / key)}
    started = time.perf_counter()
    finished = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    result_file = output / key / "ground_truth.json"
    if not result_file.exists():
        raise SystemExit(f"{key}: no ground_truth.json\n{finished.stdout}\n{finished.stderr}")
    data = json.loads(result_file.read_text())
    tasks = data["tasks"]
    failing = {task_id: tasks[task_id] for task_id in data["failed_tasks"]}
    durations = {task_id: float(entry.get("duration_s") or 0.0) for task_id, entry in tasks.items()}
    return Measured(len(tasks), len(tasks) - len(failing), wall, durations, failing)


def _unrunnable() -> dict[str, str]:
    """exercise name -> why it cannot run here, from `passbench env check aider-polyglot`."""
    command = [sys.executable, "-m", "passbench.apps.cli", "env", "check", "aider-polyglot"]
    finished = subprocess.run([*command, "--json"], capture_output=True, text=True, check=False)
    try:
        items = json.loads(finished.stdout)["items"]
    except (ValueError, KeyError):
        return {}
    return {
        item["name"]: item["detail"]
        for item in items
        if not item["ok"] and "cannot run here" in item["detail"]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--output-dir", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    output = args.output_dir or Path(tempfile.mkdtemp(prefix="aider-polyglot-gt-"))
    unrunnable = _unrunnable()
    with tempfile.TemporaryDirectory(prefix="aider-polyglot-gt-cache-") as cache:
        print(f"{'language':<11} {'passed':>9} {'rate':>7} {'wall':>7} {'mean':>6} {'max':>6}")
        for key in args.languages.split(","):
            row = run_language(key, output, Path(cache), args.workers)
            rate = f"{row.passed / row.tasks:.2%}"
            mean = sum(row.durations.values()) / max(len(row.durations), 1)
            slowest = max(row.durations.values(), default=0.0)
            print(
                f"{key:<11} {row.passed:>4}/{row.tasks:<4} {rate:>7} {row.wall_s:>6.0f}s "
                f"{mean:>5.1f}s {slowest:>5.0f}s",
                flush=True,
            )
            for task_id, verdict in row.failing.items():
                exercise = task_id.rsplit("/", 1)[-1]
                known = unrunnable.get(f"{key}: {exercise}")
                why = f"{verdict['status']} ({verdict['category']}) {verdict['reason']}"
                print(f"    {task_id}: {'known, ' + known if known else why}", flush=True)
    print(f"result files: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
