"""HumanEval-X's ground truth, every language: canonical solutions through the real CLI and the
bubblewrap sandbox, with a fresh cache (no verdict reused).

    PASSBENCH_DATA_DIR=../shared/datasets python perf/humaneval_x_ground_truth.py \
        [--languages cpp,go,java,js,python,rust] [--output-dir DIR] [--workers N]

For each language: `passbench evaluate -b humaneval-x-<lang> --ground-truth`, its wall time, the
pass rate and every failing task with its category and reason (docs/performance.md has the
figures). A language whose toolchain `passbench env check multipl-e` reports missing is run
anyway: its failures then name the missing tool.
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

LANGUAGES = ("cpp", "go", "java", "js", "python", "rust")


@dataclass(frozen=True)
class Measured:
    tasks: int
    passed: int
    wall_s: float
    failing: dict[str, dict[str, str]]  # task id -> its verdict (status, category, reason)


def run_language(key: str, output: Path, cache: Path, workers: int | None) -> Measured:
    command = [sys.executable, "-m", "passbench.apps.cli", "evaluate", "-b", f"humaneval-x-{key}"]
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
    return Measured(len(tasks), len(tasks) - len(failing), wall, failing)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--output-dir", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    output = args.output_dir or Path(tempfile.mkdtemp(prefix="humaneval-x-gt-"))
    with tempfile.TemporaryDirectory(prefix="humaneval-x-gt-cache-") as cache:
        print(f"{'language':<10} {'passed':>9} {'rate':>7} {'wall':>8}")
        for key in args.languages.split(","):
            row = run_language(key, output, Path(cache), args.workers)
            rate = f"{row.passed / row.tasks:.2%}"
            print(f"{key:<10} {row.passed:>4}/{row.tasks:<4} {rate:>7} {row.wall_s:>7.0f}s")
            for task_id, verdict in row.failing.items():
                why = f"{verdict['status']} ({verdict['category']}) {verdict['reason']}"
                print(f"    {task_id}: {why}")
    print(f"result files: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
