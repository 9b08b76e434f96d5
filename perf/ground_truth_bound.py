"""The full BigCodeBench ground truth against its physical bound: its slowest task run alone.

    .venv/bin/python perf/ground_truth_bound.py --cache-dir DIR [--slowest BigCodeBench/461]
        [--prime] [--reference OLD/ground_truth.json] [--workers N] [--tasks ID,ID,...]

Both runs use the same command and the same cache folder (so both have the timings of earlier
runs to split long tasks and start the slowest work first):
  alone: passbench evaluate --benchmark bigcodebench --split complete --subset full
         --ground-truth --output-dir DIR --tasks SLOWEST
  full:  the same without --tasks (all 1,140 tasks)
Printed: wall(full) / wall(slowest alone) (issue 21's target: at most 1.15), each run's wall and
CPU time, the CPU bound (the full run's CPU time over the cores: no schedule on this machine
beats it) and wall(full) / CPU bound, the sum of the tests' own time, the load other jobs put
on the machine meanwhile, and, with `--reference`, every task whose verdict (status, category,
reason) differs from an earlier run's ground_truth.json. Then what the timings cache told the
scheduler at the start of the measured runs: how many of its programs have a CPU time, and the
longest with their share of a core (CPU time over duration, the wait for a busy CPU taken off):
below half a core they wait (long ones are split into test methods), above it they compute
(long ones are spread).
`--prime` runs the full ground truth once first, to fill an empty cache folder with timings, or
one from before CPU times were recorded (the script warns: without CPU times nothing is split
or spread). `--tasks` runs the "full" (and prime) run on those tasks only: a smoke test.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sqlite3
from pathlib import Path
from typing import Any

from _common import machine_facts, ratio, run_dir, write_result
from _passbench import Passbench, PassbenchGroundTruth

from passbench.stages.sandbox.base import WAITING_CPU_SHARE

TARGET = 1.15


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slowest", default="BigCodeBench/461", help="the task run alone")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        required=True,
        help="passbench's cache folder for both runs (its ground-truth timings)",
    )
    parser.add_argument("--prime", action="store_true", help="run the full ground truth first")
    parser.add_argument("--reference", type=Path, help="an earlier run's ground_truth.json")
    parser.add_argument("--workers", type=int, help="passbench --workers (default: its own)")
    parser.add_argument(
        "--passbench-command",
        help="passbench command line (default: the passbench script beside this Python)",
    )
    parser.add_argument(
        "--tasks", help="comma-separated task ids for the 'full' run (a smoke test: default all)"
    )
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per command")
    parser.add_argument("--name", default="bench_ground_truth_bound", help="results/NAME.json")
    return parser.parse_args()


def _run(
    passbench: Passbench, label: str, tasks: list[str] | None, workers: int | None, timeout: float
) -> tuple[PassbenchGroundTruth, Path]:
    workdir = run_dir(f"bound-{label}")
    print(f"passbench: ground truth, {label} ...", flush=True)
    truth = passbench.ground_truth(tasks, workdir, workers=workers, timeout_s=timeout)
    run = truth.run
    print(
        f"  wall {run.wall_s:.1f} s, cpu {run.cpu_s:.1f} s, other load "
        f"{run.other_load_cores} cores, load average before {run.loadavg_before}",
        flush=True,
    )
    return truth, workdir / "passbench-ground-truth" / "ground_truth.json"


def differences(reference: Path, current: Path) -> dict[str, dict[str, Any]]:
    """Tasks whose status, category or reason differ between two ground_truth.json files."""
    old = json.loads(reference.read_text(encoding="utf-8"))["tasks"]
    new = json.loads(current.read_text(encoding="utf-8"))["tasks"]
    differ: dict[str, dict[str, Any]] = {}
    for task in sorted(set(old) | set(new)):
        before, after = old.get(task, {}), new.get(task, {})
        fields = ("status", "category", "reason")
        if any(before.get(f) != after.get(f) for f in fields):
            differ[task] = {
                "before": {f: before.get(f) for f in fields},
                "after": {f: after.get(f) for f in fields},
            }
    return differ


def cache_cpu_times(cache_dir: Path, top: int = 12) -> dict[str, Any]:
    """What the ground-truth timings cache holds for the scheduler: how many programs (whole
    canonical programs and parts alike) have a CPU time, and the longest with their share of
    a core."""
    path = cache_dir / "ground-truth" / "timings.sqlite"
    if not path.is_file():
        return {"programs": 0, "with_cpu": 0, "longest": []}
    with sqlite3.connect(path) as db:
        has_cpu = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'cpu_times'"
        ).fetchone()[0]
        joined = (
            "SELECT v.task_id, v.duration_s, c.cpu_s, c.cpu_wait_s FROM verdicts v"
            " LEFT JOIN cpu_times c"
            " ON c.fingerprint = v.fingerprint AND c.program_sha = v.program_sha"
            if has_cpu
            else "SELECT task_id, duration_s, NULL, NULL FROM verdicts"
        )
        rows = db.execute(joined).fetchall()
    rows.sort(key=lambda row: -row[1])
    longest = []
    for task_id, duration, cpu, wait in rows[:top]:
        share, kind = None, "unknown"
        if cpu is not None:
            could_run = duration - (wait or 0.0)  # as passbench's cpu_share
            share = round(cpu / could_run if could_run > 0 else max(1.0, cpu / duration), 2)
            kind = "waits" if share < WAITING_CPU_SHARE else "computes"
        longest.append(
            {"task_id": task_id, "duration_s": round(duration, 1), "cpu_s": cpu,
             "cpu_wait_s": wait, "share": share, "kind": kind}
        )  # fmt: skip
    return {
        "programs": len(rows),
        "with_cpu": sum(1 for row in rows if row[2] is not None),
        "longest": longest,
    }


def _print_cache(summary: dict[str, Any]) -> None:
    print(
        f"timings cache before the measured runs: {summary['with_cpu']} of "
        f"{summary['programs']} programs with a CPU time; the longest:"
    )
    for row in summary["longest"]:
        cpu = "-" if row["cpu_s"] is None else f"{row['cpu_s']:.1f}"
        share = "-" if row["share"] is None else f"{row['share']:.2f}"
        print(
            f"  {row['task_id']:<20} {row['duration_s']:>7.1f} s  cpu {cpu:>6} s  "
            f"share {share:>5}  {row['kind']}"
        )


def main() -> None:
    args = parse_arguments()
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    command = shlex.split(args.passbench_command) if args.passbench_command else None
    passbench = Passbench(command, cache_dir=args.cache_dir)
    payload: dict[str, Any] = {
        "benchmark": "ground_truth_bound",
        "machine": machine_facts(),
        "slowest": args.slowest,
        "cache_dir": str(args.cache_dir),
    }
    selection = args.tasks.split(",") if args.tasks else None
    payload["tasks"] = selection or "all"
    if args.prime:
        primed, _ = _run(passbench, "prime", selection, args.workers, args.timeout)
        payload["prime"] = primed.run.as_dict()
    # what the measured runs' scheduler starts from (the alone run adds its task's times)
    payload["timings_cache"] = cache_cpu_times(args.cache_dir)
    if payload["timings_cache"]["programs"] and not payload["timings_cache"]["with_cpu"]:
        print("warning: the timings cache has no CPU times (from before they were recorded):")
        print("  the runs split and spread nothing by them; --prime fills them first", flush=True)
    alone, _ = _run(passbench, "alone", [args.slowest], args.workers, args.timeout)
    full, full_json = _run(passbench, "full", selection, args.workers, args.timeout)
    cores = os.cpu_count() or 1
    payload["alone"] = alone.run.as_dict()
    payload["full"] = full.run.as_dict()
    payload["full_json"] = str(full_json)
    payload["n_pass"] = sum(1 for v in full.tasks.values() if v.status == "pass")
    payload["n_tasks"] = len(full.tasks)
    payload["ratio_full_over_alone"] = ratio(full.run.wall_s, alone.run.wall_s)
    payload["cpu_bound_s"] = round(full.run.cpu_s / cores, 1)
    payload["ratio_full_over_cpu_bound"] = ratio(full.run.wall_s, full.run.cpu_s / cores)
    payload["tests_own_time_s"] = round(sum(v.duration_s or 0.0 for v in full.tasks.values()), 1)
    if args.reference is not None:
        payload["verdicts_differ"] = differences(args.reference, full_json)
    payload["machine"]["loadavg_at_end"] = list(os.getloadavg())
    path = write_result(args.name, payload)
    print()
    print(
        f"wall(full) {full.run.wall_s:.1f} s / wall({args.slowest} alone) "
        f"{alone.run.wall_s:.1f} s = {payload['ratio_full_over_alone']} (target <= {TARGET})"
    )
    print(
        f"CPU bound: {full.run.cpu_s:.1f} s CPU / {cores} cores = {payload['cpu_bound_s']} s; "
        f"wall(full) / CPU bound = {payload['ratio_full_over_cpu_bound']}"
    )
    print(f"tests' own time, summed over tasks: {payload['tests_own_time_s']} s")
    print(f"ground truth: {payload['n_pass']} / {payload['n_tasks']} pass")
    _print_cache(payload["timings_cache"])
    if args.reference is not None:
        differ = payload["verdicts_differ"]
        print(f"verdicts differing from {args.reference}: {len(differ)} {sorted(differ)}")
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
