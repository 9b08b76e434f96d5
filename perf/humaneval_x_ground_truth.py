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

import sys
import tempfile
from pathlib import Path

from _per_language import arguments, ground_truth

LANGUAGES = ("cpp", "go", "java", "js", "python", "rust")


def main() -> int:
    args = arguments(__doc__.splitlines()[0], LANGUAGES)
    output = args.output_dir or Path(tempfile.mkdtemp(prefix="humaneval-x-gt-"))
    with tempfile.TemporaryDirectory(prefix="humaneval-x-gt-cache-") as cache:
        print(f"{'language':<10} {'passed':>9} {'rate':>7} {'wall':>8}")
        for key in args.languages.split(","):
            selection = ["-b", f"humaneval-x-{key}"]
            row = ground_truth(selection, key, output, Path(cache), args.workers)
            rate = f"{row.passed / row.tasks:.2%}"
            print(f"{key:<10} {row.passed:>4}/{row.tasks:<4} {rate:>7} {row.wall_s:>7.0f}s")
            for task_id, verdict in row.failing.items():
                why = f"{verdict['status']} ({verdict['category']}) {verdict['reason']}"
                print(f"    {task_id}: {why}")
    print(f"result files: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
