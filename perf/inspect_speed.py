"""How fast is `passbench inspect` on a full-size run?

Writes a synthetic BigCodeBench result file in the documented format (1,140 tasks x 10 samples
by default: realistic solution sizes, tracebacks of several kinds, passbench's extra fields),
then times, each in a fresh process as a user would run it:

  - `passbench inspect FILE` (the terminal summary), target < 2 s
  - `passbench inspect FILE --format html --output report.html`, target < 10 s

The verdicts are random (seeded) and say nothing about any model; only the shape is real.
Usage: python perf/inspect_speed.py [--tasks 1140] [--samples 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_TRACEBACKS = {
    "assertion_failed": (
        "Traceback (most recent call last):\n"
        '  File "__test__.py", line {line}, in test_case_{test}\n'
        "    self.assertEqual(result, expected)\n"
        "AssertionError: {a} != {b}\n"
    ),
    "exception": (
        "Traceback (most recent call last):\n"
        '  File "__test__.py", line {line}, in test_case_{test}\n'
        "    result = task_func(data)\n"
        '  File "__test__.py", line 12, in task_func\n'
        "    return frame[column]\n"
        "{error}\n"
    ),
}
_ERRORS = (
    "KeyError: 'value'",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "ValueError: could not convert string to float: 'a'",
    "AttributeError: 'NoneType' object has no attribute 'plot'",
    "IndexError: list index out of range",
)


def synthetic_results(tasks: int, samples: int, seed: int = 0) -> dict[str, object]:
    rng = random.Random(seed)
    evaluated: dict[str, list[dict[str, object]]] = {}
    for number in range(tasks):
        task_id = f"BigCodeBench/{number}"
        difficulty = rng.random()
        solution = "import pandas as pd\nimport numpy as np\n\ndef task_func(data):\n" + "".join(
            f"    value_{i} = data.get('k{i}', {i}) * {rng.randint(1, 9)}\n"
            for i in range(rng.randint(10, 50))
        )
        entries = []
        for index in range(samples):
            entry: dict[str, object] = {
                "task_id": task_id,
                "solution": solution,
                "sample_index": index,
                "duration_s": round(rng.uniform(0.01, 3.0), 3),
                "wall_s": round(rng.uniform(0.02, 3.5), 3),
                "tests_run": 5,
            }
            if rng.random() > difficulty:
                entry.update(status="pass", details={}, category=None, reason="")
            elif rng.random() < 0.05:
                entry.update(
                    status="timeout",
                    details={"ALL": "Timed out!"},
                    category="timeout",
                    reason="timed out after 240s",
                )
            else:
                kind = "assertion_failed" if rng.random() < 0.6 else "exception"
                error = rng.choice(_ERRORS)
                details = {
                    f"test_case_{t}": _TRACEBACKS[kind].format(
                        line=40 + t, test=t, a=rng.randint(0, 9), b=rng.randint(10, 20), error=error
                    )
                    for t in range(1, rng.randint(2, 5))
                }
                reason = "AssertionError" if kind == "assertion_failed" else error
                entry.update(status="fail", details=details, category=kind, reason=reason)
            entries.append(entry)
        evaluated[task_id] = entries
    return {
        "date": "2026-11-22 12:00",
        "eval": evaluated,
        "passbench": {
            "schema_version": 1,
            "passbench_version": "0.1.0",
            "benchmark": "bigcodebench",
            "dataset_version": "v0.1.4",
            "split": "complete",
            "subset": "full",
            "calibrated": True,
            "isolation": "bubblewrap",
            "missing_tasks": [],
            "n_tasks": tasks,
        },
    }


_MAIN = "import sys; from passbench.apps.cli import main; sys.argv[0] = 'passbench'; main()"


def _timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run. On a busy shared machine the
    CPU time is the fairer figure: wall time there mostly measures waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1140)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args()

    folder = args.keep or Path(tempfile.mkdtemp(prefix="passbench-inspect-"))
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "synthetic--bigcodebench-complete--sample_eval_results.json"
    results.write_text(json.dumps(synthetic_results(args.tasks, args.samples)), encoding="utf-8")
    size_mb = results.stat().st_size / 1e6
    print(f"results file: {results} ({size_mb:.1f} MB, {args.tasks} tasks x {args.samples})")
    print(f"data dir: {os.environ.get('PASSBENCH_DATA_DIR', 'not set (no library breakdown)')}")

    script = Path(sys.executable).with_name("passbench")
    launcher = [str(script)] if script.exists() else [sys.executable, "-c", _MAIN]
    base = [*launcher, "inspect", str(results)]
    html = folder / "report.html"
    for label, command in (
        ("terminal summary", base),
        ("html report", [*base, "--format", "html", "--output", str(html)]),
    ):
        runs = [_timed(command) for _ in range(args.repeat)]
        walls = sorted(wall for wall, _ in runs)
        cpus = sorted(cpu for _, cpu in runs)
        print(
            f"{label}: wall best {walls[0]:.2f} s, median {walls[len(walls) // 2]:.2f} s; "
            f"CPU best {cpus[0]:.2f} s, median {cpus[len(cpus) // 2]:.2f} s"
        )
    print(f"html size: {html.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
