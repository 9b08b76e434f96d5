"""Record Catch2's main for Aider's polyglot C++ exercises (scripts/setup.sh runs it as root):
one compile per variant of the harness the exercises ship, into the read-only cache their
builds take it from (src/passbench/stages/benchmarks/aider_polyglot/catch_main.py).

    PASSBENCH_DATA_DIR=../shared/datasets .venv/bin/python scripts/aider_polyglot_catch_main.py \
        [CACHE_DIR]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.aider_polyglot.benchmark import exercise_files
from passbench.stages.benchmarks.aider_polyglot.catch_main import CATCH_MAIN_CACHE, record


def main() -> int:
    cache = Path(sys.argv[1] if len(sys.argv) > 1 else CATCH_MAIN_CACHE)
    bench = get_benchmark("aider-polyglot")
    tasks = bench.load(subset="cpp", data=DataSettings.from_env(os.environ)).tasks
    done = record(tasks, cache, lambda task: exercise_files(task, bench.canonical_code(task)))
    for item in done:
        print(f"Catch2 main ({item.exercise}'s harness): {item.status}, {item.detail}")
    return 1 if any(item.status == "refused" for item in done) else 0


if __name__ == "__main__":
    sys.exit(main())
