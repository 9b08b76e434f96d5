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

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _per_language import arguments, ground_truth

LANGUAGES = ("cpp", "go", "java", "javascript", "python", "rust")


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
    args = arguments(__doc__.splitlines()[0], LANGUAGES)
    output = args.output_dir or Path(tempfile.mkdtemp(prefix="aider-polyglot-gt-"))
    unrunnable = _unrunnable()
    with tempfile.TemporaryDirectory(prefix="aider-polyglot-gt-cache-") as cache:
        print(f"{'language':<11} {'passed':>9} {'rate':>7} {'wall':>7} {'mean':>6} {'max':>6}")
        for key in args.languages.split(","):
            selection = ["-b", "aider-polyglot", "--subset", key, "--split", "whole"]
            row = ground_truth(selection, key, output, Path(cache), args.workers)
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
