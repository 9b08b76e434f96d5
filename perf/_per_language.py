"""The per-language ground-truth scripts' shared part: one `passbench evaluate --ground-truth`
per language through the real CLI, each with a fresh cache (no verdict reused), and what its
ground_truth.json says."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measured:
    tasks: int
    passed: int
    wall_s: float
    durations: dict[str, float]  # task id -> seconds its build and tests took
    failing: dict[str, dict[str, str]]  # task id -> its verdict (status, category, reason)


def arguments(description: str, languages: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--languages", default=",".join(languages))
    parser.add_argument("--output-dir", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=None)
    return parser.parse_args()


def ground_truth(
    selection: Sequence[str], key: str, output: Path, cache: Path, workers: int | None
) -> Measured:
    """`passbench evaluate <selection> --ground-truth` for language `key`, its files in
    output/key and its cache in cache/key."""
    command = [sys.executable, "-m", "passbench.apps.cli", "evaluate", *selection]
    command += ["--ground-truth", "--output-dir", str(output / key)]
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
