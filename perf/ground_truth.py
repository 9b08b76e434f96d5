"""The ground-truth run of BigCodeBench (canonical solutions): official evaluator vs passbench.

Each tool runs with its own defaults on the same machine in the same invocation:
  official:  bigcodebench.evaluate --execution local --check_gt_only --split complete
             --subset full --samples dummy.jsonl [--selective_evaluate IDS]
  passbench: passbench evaluate --benchmark bigcodebench --split complete --subset full
             --ground-truth --output-dir DIR [--tasks IDS]
Reported: wall time of each and their ratio, each tool's verdict per task and where they
disagree, and where the time goes: the tests' own time, its spread over the workers, and the
longest tasks, which bound the total however fast the harness is.

    .venv/bin/python perf/ground_truth.py --baseline-venv ../baseline/venv
    .venv/bin/python perf/ground_truth.py --baseline-venv ... --tasks 0-99
    .venv/bin/python perf/ground_truth.py --reuse-official \
        perf/results/bench_ground_truth.json   # official half from an earlier run
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from _common import (
    load_dataset,
    machine_facts,
    parse_task_ids,
    ratio,
    run_dir,
    task_number,
    write_result,
)
from _official import Official
from _passbench import Passbench

TOP = 10


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-venv", type=Path, help="venv with bigcodebench==0.2.5")
    parser.add_argument("--tasks", help="subset: ids or numbers, comma-separated; ranges a-b")
    parser.add_argument(
        "--official-parallel", type=int, help="official --parallel (default: cores // 2)"
    )
    parser.add_argument("--workers", type=int, help="passbench --workers (default: its own)")
    parser.add_argument("--only", choices=["official", "passbench"], help="run one tool only")
    parser.add_argument(
        "--reuse-official",
        type=Path,
        help="take the official half from an earlier result file of this script",
    )
    parser.add_argument(
        "--reuse-passbench",
        type=Path,
        help="take the passbench half from an earlier result file of this script",
    )
    parser.add_argument("--passbench-command", help="passbench command line")
    parser.add_argument(
        "--cold-cache",
        action="store_true",
        help="give passbench an empty cache dir: no timings from earlier runs to schedule by",
    )
    parser.add_argument("--timeout", type=float, default=7200, help="seconds per command")
    parser.add_argument("--name", default="bench_ground_truth", help="results/NAME.json")
    return parser.parse_args()


def time_profile(
    durations: Mapping[str, float | None], wall_s: float, workers: int
) -> dict[str, Any]:
    """Where a run's time goes: the tests' own time, its spread over the workers, the tail.

    No schedule finishes before its longest task (`longest_task_s`). `spread_s` = sum of the
    tests' own time / workers is what the tests alone take if each holds a worker throughout:
    a harness that runs one sample per worker cannot beat max(longest, spread), but one that
    overlaps tests that wait (sleep, I/O) with tests that compute can, as passbench does.
    """
    known = {task: seconds for task, seconds in durations.items() if seconds is not None}
    total = sum(known.values())
    ordered = sorted(known.items(), key=lambda item: item[1], reverse=True)
    longest = ordered[0][1] if ordered else 0.0
    effective = max(1, min(workers, os.cpu_count() or 1))
    bound = max(longest, total / effective)
    over_one = [seconds for _, seconds in ordered if seconds >= 1.0]
    return {
        "tests_own_time_s": round(total, 2),
        "median_task_s": round(ordered[len(ordered) // 2][1], 4) if ordered else None,
        "longest_task_s": round(longest, 2),
        "spread_s": round(total / effective, 2),
        "one_per_worker_bound_s": round(bound, 2),
        "wall_over_bound": ratio(wall_s, bound),
        "wall_over_longest_task": ratio(wall_s, longest),
        "tasks_at_least_1s": len(over_one),
        "time_in_tasks_at_least_1s_s": round(sum(over_one), 2),
        "longest": [[task, round(seconds, 2)] for task, seconds in ordered[:TOP]],
        "top_share_of_tests_time": ratio(sum(s for _, s in ordered[:TOP]), total),
    }


def official_half(
    official: Official, task_ids: list[str] | None, parallel: int | None, timeout: float
) -> dict[str, Any]:
    workdir = run_dir("official-ground-truth")
    print("official: ground truth ...", flush=True)
    truth = official.ground_truth(task_ids, workdir, parallel=parallel, timeout_s=timeout)
    used = int(truth.run.extra["parallel"])
    failed = sorted((t for t, s in truth.times.items() if s is None), key=task_number)
    return {
        "run": truth.run.as_dict(),
        "parallel": used,
        "n_tasks": len(truth.times),
        "n_pass": len(truth.times) - len(failed),
        "gt_pass_rate": round(1 - len(failed) / max(len(truth.times), 1), 4),
        "failed_tasks": failed,
        "times": truth.times,
    }


def passbench_half(
    passbench: Passbench, task_ids: list[str] | None, workers: int | None, timeout: float
) -> dict[str, Any]:
    workdir = run_dir("passbench-ground-truth")
    print("passbench: ground truth ...", flush=True)
    truth = passbench.ground_truth(task_ids, workdir, workers=workers, timeout_s=timeout)
    used = int(workers or truth.run.extra.get("workers") or os.cpu_count() or 1)
    failed = sorted((t for t, v in truth.tasks.items() if v.status != "pass"), key=task_number)
    return {
        "run": truth.run.as_dict(),
        "workers": used,
        "n_tasks": len(truth.tasks),
        "n_pass": len(truth.tasks) - len(failed),
        "gt_pass_rate": round(1 - len(failed) / max(len(truth.tasks), 1), 4),
        "failed_tasks": failed,
        "failures": {t: [truth.tasks[t].status, truth.tasks[t].reason[:300]] for t in failed},
        "times": {t: v.duration_s for t, v in truth.tasks.items()},
    }


def _reuse(path: Path, tool: str, wanted: set[str]) -> dict[str, Any]:
    earlier = json.loads(path.read_text(encoding="utf-8"))
    half: dict[str, Any] = earlier[tool]
    if set(half["times"]) != wanted:
        raise SystemExit(f"{path}: its {tool} run covered other tasks than --tasks")
    half["reused_from"] = str(path)
    half.setdefault("measured_on", earlier["machine"])
    return half


def agreement(official: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    official_failed = set(official["failed_tasks"])
    our_failed = set(ours["failed_tasks"])
    common = set(official["times"]) & set(ours["times"])
    only_official = sorted((official_failed - our_failed) & common, key=task_number)
    only_ours = sorted((our_failed - official_failed) & common, key=task_number)
    return {
        "tasks_compared": len(common),
        "same_verdict": len(common) - len(only_official) - len(only_ours),
        "both_fail": sorted(official_failed & our_failed & common, key=task_number),
        "official_fails_passbench_passes": only_official,
        "passbench_fails_official_passes": {t: ours["failures"][t] for t in only_ours},
    }


def print_summary(payload: dict[str, Any]) -> None:
    print()
    for tool in ("official", "passbench"):
        half = payload.get(tool)
        if not half:
            continue
        run, profile = half["run"], half["profile"]
        print(
            f"{tool:<10} wall {run['wall_s']:8.1f} s  cpu {run['cpu_s']:8.1f} s  "
            f"pass {half['n_pass']}/{half['n_tasks']}  "
            f"tests' own time {profile['tests_own_time_s']} s  "
            f"longest task {profile['longest_task_s']} s  "
            f"other load {run['other_load_cores']} cores"
        )
        longest = ", ".join(f"{task_number(t)} {s}s" for t, s in profile["longest"])
        print(f"{'':<10} longest: {longest}")
    if "agreement" in payload:
        agree = payload["agreement"]
        print(f"wall ratio official/passbench: {payload['wall_ratio_official_over_passbench']}")
        print(f"same verdict on {agree['same_verdict']}/{agree['tasks_compared']} tasks")
        print(f"official fails, passbench passes: {agree['official_fails_passbench_passes']}")
        print(f"passbench fails, official passes: {list(agree['passbench_fails_official_passes'])}")


def main() -> None:
    args = parse_arguments()
    dataset = load_dataset()
    task_ids = parse_task_ids(args.tasks, list(dataset)) if args.tasks else None
    payload: dict[str, Any] = {
        "benchmark": "ground_truth",
        "machine": machine_facts(),
        "tasks": args.tasks or "all",
        "n_tasks": len(task_ids) if task_ids is not None else len(dataset),
    }
    wanted = set(task_ids) if task_ids is not None else set(dataset)
    if args.reuse_official:
        payload["official"] = _reuse(args.reuse_official, "official", wanted)
    elif args.only != "passbench":
        if args.baseline_venv is None:
            raise SystemExit("--baseline-venv is required unless --only passbench")
        official = Official(args.baseline_venv)
        payload["official"] = official_half(
            official, task_ids, args.official_parallel, args.timeout
        )
    if args.reuse_passbench:
        payload["passbench"] = _reuse(args.reuse_passbench, "passbench", wanted)
    elif args.only != "official":
        command = shlex.split(args.passbench_command) if args.passbench_command else None
        cache = run_dir("passbench-cold-cache") if args.cold_cache else None
        payload["passbench"] = passbench_half(
            Passbench(command, cache_dir=cache), task_ids, args.workers, args.timeout
        )
        payload["passbench"]["cold_cache"] = args.cold_cache
    for tool, workers_key in (("official", "parallel"), ("passbench", "workers")):
        if tool in payload:
            half = payload[tool]
            half["profile"] = time_profile(half["times"], half["run"]["wall_s"], half[workers_key])
    if "official" in payload and "passbench" in payload:
        payload["wall_ratio_official_over_passbench"] = ratio(
            payload["official"]["run"]["wall_s"], payload["passbench"]["run"]["wall_s"]
        )
        payload["agreement"] = agreement(payload["official"], payload["passbench"])
    payload["machine"]["loadavg_at_end"] = list(os.getloadavg())
    path = write_result(args.name, payload)
    print_summary(payload)
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
