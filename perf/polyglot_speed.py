"""Aider's polyglot benchmark, speed: passbench's ground-truth run of the reference solutions
against a naive baseline in the same run, per language and for the whole run.

    PASSBENCH_DATA_DIR=../shared/datasets python perf/polyglot_speed.py \
        [--languages cpp,go,java,javascript,python,rust] [--limit N] [--workers N] \
        [--naive-sandbox bwrap|none] [--one-run]

- passbench: one `passbench evaluate -b aider-polyglot --ground-truth --tasks <the chosen
  exercises>` through the real CLI, with a fresh cache (no verdict reused): warm sandbox
  workers, the toolchains' read-only caches (Go's seeded build cache, Catch2's compiled main);
  each exercise's build-and-test time from ground_truth.json (`duration_s`).
- naive (perf/_naive_polyglot.py): the same commands, one fresh process per exercise per step,
  no warm toolchain and no shared cache, each step in a fresh bubblewrap sandbox of its own
  (`--naive-sandbox bwrap`, the default) or as a plain process (`none`), with as many
  exercises at a time as passbench's workers; build and test steps timed apart.

By default each language goes through both before the next (the first passbench first, the
next the baseline first, and so on), so that both see the same load on a shared machine; the
whole run's wall time is then the sum of the languages' (one passbench run per language).
`--one-run` runs passbench once over every language, then the baseline.
`--limit N` keeps the first N exercises of each language (file order), for a shorter run.
Prints, per language, the median and total time per exercise of both (the naive one split into
build and test where the language has both), the ratio naive / passbench of the totals, the
whole run's wall time of both and its ratio, and every exercise whose verdicts differ (with
both reasons). The figures go to perf/results/polyglot-speed.json; docs/performance.md has the
measured ones.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _common import machine_facts, write_result
from _naive_polyglot import SANDBOXES, NaiveResult, run_exercise
from _per_language import Measured, ground_truth

from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark

LANGUAGES = ("cpp", "go", "java", "javascript", "python", "rust")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--limit", type=int, default=None, help="first N exercises per language")
    parser.add_argument("--workers", type=int, default=2, help="exercises at a time, both runs")
    parser.add_argument("--naive-sandbox", choices=SANDBOXES, default="bwrap")
    parser.add_argument(
        "--one-run",
        action="store_true",
        help="one passbench run of every language, then the baseline (default: language by "
        "language, alternating which goes first, so that both see the same load)",
    )
    parser.add_argument("--output-dir", type=Path, default=None)
    return parser.parse_args()


def chosen_tasks(languages: Sequence[str], limit: int | None) -> list[Task]:
    """The first `limit` exercises of each language, in the data's order."""
    bench = get_benchmark("aider-polyglot")
    every = bench.load(data=DataSettings.from_env(os.environ)).tasks
    chosen: list[Task] = []
    for language in languages:
        mine = [t for t in every if t.metadata["language"] == language]
        if not mine:
            raise SystemExit(f"unknown language {language!r}: one of {', '.join(LANGUAGES)}")
        chosen += mine[:limit] if limit else mine
    return chosen


def run_passbench(tasks: Sequence[Task], workers: int, output: Path) -> Measured:
    ids = ",".join(task.task_id for task in tasks)
    selection = ["-b", "aider-polyglot", "--subset", "full", "--split", "whole", "--tasks", ids]
    with tempfile.TemporaryDirectory(prefix="polyglot-speed-cache-") as cache:
        return ground_truth(selection, "passbench", output, Path(cache), workers)


def run_naive(
    tasks: Sequence[Task], workers: int, sandbox: str
) -> tuple[dict[str, NaiveResult], float]:
    """Every exercise the naive way, `workers` at a time: results by task id, wall seconds."""
    bench = get_benchmark("aider-polyglot")
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(
            pool.map(lambda t: run_exercise(t, bench.canonical_code(t), sandbox=sandbox), tasks)
        )
    return {r.task_id: r for r in results}, time.perf_counter() - started


def _median_total(values: Sequence[float]) -> str:
    if not values:
        return f"{'-':>6} {'-':>7}"
    return f"{statistics.median(values):>5.1f}s {sum(values):>6.0f}s"


def report(
    tasks: Sequence[Task],
    passbench: Measured,
    naive: dict[str, NaiveResult],
    naive_wall: float,
) -> dict[str, Any]:
    """Prints the table and returns the figures."""
    languages = list(dict.fromkeys(str(t.metadata["language"]) for t in tasks))
    print(
        f"{'language':<11} {'n':>3} | {'passbench med/total':>20} | {'naive build':>14} "
        f"{'naive test':>14} {'naive med/total':>16} | {'ratio':>5}"
    )
    figures: dict[str, Any] = {}
    for language in languages:
        ids = [t.task_id for t in tasks if t.metadata["language"] == language]
        ours = [passbench.durations.get(i, 0.0) for i in ids]
        builds = [naive[i].seconds("build") for i in ids]
        tests = [naive[i].seconds("test") for i in ids]
        totals = [naive[i].seconds() for i in ids]
        ratio = sum(totals) / sum(ours) if sum(ours) else float("nan")
        has_build = any(builds)
        print(
            f"{language:<11} {len(ids):>3} | {_median_total(ours):>20} | "
            f"{_median_total(builds) if has_build else '(in test)':>14} "
            f"{_median_total(tests):>14} {_median_total(totals):>16} | {ratio:>5.2f}"
        )
        figures[language] = {
            "exercises": len(ids),
            "passbench_median_s": statistics.median(ours),
            "passbench_total_s": sum(ours),
            "naive_build_median_s": statistics.median(builds) if has_build else None,
            "naive_build_total_s": sum(builds) if has_build else None,
            "naive_test_median_s": statistics.median(tests),
            "naive_test_total_s": sum(tests),
            "naive_median_s": statistics.median(totals),
            "naive_total_s": sum(totals),
            "ratio_naive_over_passbench": ratio,
        }
    overall = naive_wall / passbench.wall_s
    print(
        f"whole run wall: passbench {passbench.wall_s:.0f} s, naive {naive_wall:.0f} s, "
        f"ratio naive / passbench {overall:.2f}"
    )
    differences = verdict_differences(tasks, passbench, naive)
    for line in differences:
        print("verdicts differ: " + line)
    if not differences:
        print(f"verdicts: identical on all {len(tasks)} exercises")
    passed = len(tasks) - len(passbench.failing)
    print(f"passbench: {passed}/{len(tasks)} pass")
    return {
        "languages": figures,
        "passbench_wall_s": passbench.wall_s,
        "naive_wall_s": naive_wall,
        "ratio_wall_naive_over_passbench": overall,
        "verdict_differences": differences,
        "passbench_passed": passed,
        "exercises": len(tasks),
    }


def verdict_differences(
    tasks: Sequence[Task], passbench: Measured, naive: dict[str, NaiveResult]
) -> list[str]:
    """One line per exercise whose verdicts differ, with both sides' reasons."""
    lines = []
    for task in tasks:
        ours = task.task_id not in passbench.failing
        theirs = naive[task.task_id].passed
        if ours == theirs:
            continue
        verdict = passbench.failing.get(task.task_id, {})
        why = f"{verdict.get('status')} ({verdict.get('reason', '')})" if verdict else "pass"
        last = naive[task.task_id].steps[-1] if naive[task.task_id].steps else None
        naive_why = "pass" if theirs else f"exit {last.exit_code if last else '-'}"
        lines.append(f"{task.task_id}: passbench {why}; naive {naive_why}")
    return lines


def _interleaved(
    tasks: Sequence[Task], args: argparse.Namespace, output: Path
) -> tuple[Measured, dict[str, NaiveResult], float]:
    """Each language through both, the first language passbench first, the next the baseline
    first, and so on; the walls are the sums of the languages' (each passbench run starts the
    CLI and its sandbox anew)."""
    parts: list[Measured] = []
    naive: dict[str, NaiveResult] = {}
    naive_wall = 0.0
    languages = list(dict.fromkeys(str(t.metadata["language"]) for t in tasks))
    for index, language in enumerate(languages):
        mine = [t for t in tasks if t.metadata["language"] == language]
        if index % 2:
            found, wall = run_naive(mine, args.workers, args.naive_sandbox)
            parts.append(run_passbench(mine, args.workers, output / language))
        else:
            parts.append(run_passbench(mine, args.workers, output / language))
            found, wall = run_naive(mine, args.workers, args.naive_sandbox)
        naive.update(found)
        naive_wall += wall
        print(f"{language}: done (load average {os.getloadavg()[0]:.1f})", flush=True)
    passbench = Measured(
        tasks=sum(p.tasks for p in parts),
        passed=sum(p.passed for p in parts),
        wall_s=sum(p.wall_s for p in parts),
        durations={k: v for p in parts for k, v in p.durations.items()},
        failing={k: v for p in parts for k, v in p.failing.items()},
    )
    return passbench, naive, naive_wall


def main() -> int:
    args = _arguments()
    facts = machine_facts()
    tasks = chosen_tasks(args.languages.split(","), args.limit)
    output = args.output_dir or Path(tempfile.mkdtemp(prefix="polyglot-speed-"))
    print(
        f"{len(tasks)} exercises, {args.workers} at a time; naive steps: "
        f"{'a fresh bubblewrap sandbox each' if args.naive_sandbox == 'bwrap' else 'no sandbox'};"
        f" {'one run each' if args.one_run else 'language by language, alternating'};"
        f" load average {facts['loadavg_at_start']}",
        flush=True,
    )
    if args.one_run:
        passbench = run_passbench(tasks, args.workers, output)
        naive, naive_wall = run_naive(tasks, args.workers, args.naive_sandbox)
    else:
        passbench, naive, naive_wall = _interleaved(tasks, args, output)
    figures = report(tasks, passbench, naive, naive_wall)
    payload = {
        "machine": facts,
        "loadavg_at_end": list(os.getloadavg()),
        "command": " ".join(["perf/polyglot_speed.py", *sys.argv[1:]]),
        "workers": args.workers,
        "naive_sandbox": args.naive_sandbox,
        "order": "one run each" if args.one_run else "language by language, alternating",
        **figures,
    }
    print(f"load average at the end {payload['loadavg_at_end']}; result files: {output}")
    print(f"figures: {write_result('polyglot-speed', payload)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
