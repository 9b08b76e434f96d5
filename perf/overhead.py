"""The harness's own cost per sample: official BigCodeBench evaluator vs passbench, same machine.

Both tools evaluate the same samples file: the canonical solution of every task in the fast task
set (fast_tasks.json; tests that take milliseconds), repeated --copies times. For each tool the
script times, from launch to exit:
  1. a ground-truth run on the set (what a first run does; it also yields the tests' own times),
  2. the samples evaluation,
  3. a samples evaluation of one task's copies (the fixed cost of a run),
and reports samples/s and overhead per sample = (wall x workers - sum of tests' own time) /
samples, plus the CPU-time equivalent and the cost of each extra sample (2 minus 3). See
docs/performance.md.

    .venv/bin/python perf/overhead.py --baseline-venv ../baseline/venv
    .venv/bin/python perf/overhead.py --baseline-venv ... --only official --limit 40
    .venv/bin/python perf/overhead.py --baseline-venv ... --derive-task-set
"""

from __future__ import annotations

import argparse
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    harness_cost,
    load_dataset,
    machine_facts,
    marginal_cost,
    ratio,
    run_dir,
    write_jsonl,
    write_result,
)
from _official import Official
from _passbench import Passbench
from _tasksets import (
    FAST_TASKS_FILE,
    load_fast_tasks,
    merge_times,
    previous_times,
    save_fast_tasks,
    select_fast,
    static_candidates,
)

SAMPLES_NAME = "canonical--bigcodebench-complete--fast.jsonl"


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-venv", type=Path, help="venv with bigcodebench==0.2.5")
    parser.add_argument("--task-set", type=Path, default=FAST_TASKS_FILE)
    parser.add_argument(
        "--derive-task-set",
        action="store_true",
        help="re-derive the task set from an official ground-truth run, then stop",
    )
    parser.add_argument(
        "--fresh-task-set",
        action="store_true",
        help="with --derive-task-set: forget the times of earlier derivations (default: best of)",
    )
    parser.add_argument("--copies", type=int, default=2, help="samples per task (default 2)")
    parser.add_argument("--limit", type=int, help="use only the first N tasks of the set")
    parser.add_argument(
        "--workers",
        type=int,
        help="workers for both tools (official --parallel); default: each own",
    )
    parser.add_argument("--only", choices=["official", "passbench"], help="run one tool only")
    parser.add_argument("--passbench-command", help="passbench command line")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per command")
    parser.add_argument("--name", default="overhead", help="result file name under results/")
    return parser.parse_args()


def derive_task_set(
    official: Official, dataset: dict[str, dict[str, Any]], keep_earlier: bool
) -> None:
    candidates = static_candidates(dataset)
    workdir = run_dir("derive-fast-tasks")
    print(f"official ground truth on {len(candidates)} static candidates ...", flush=True)
    truth = official.ground_truth(candidates, workdir, parallel=1)
    earlier, runs = previous_times() if keep_earlier else ({}, 0)
    times = merge_times(earlier, truth.times)
    chosen = select_fast(candidates, times)
    save_fast_tasks(chosen, candidates, times, runs + 1, machine_facts())
    print(f"{len(chosen)} of {len(candidates)} candidates kept (best of {runs + 1} runs)")
    print(f"-> {FAST_TASKS_FILE}")
    print(f"(official ground truth took {truth.run.wall_s:.1f} s)")


@dataclass(frozen=True)
class Workload:
    """The samples both tools evaluate, and a one-task run that measures the fixed cost."""

    task_ids: list[str]
    copies: int
    samples: Path  # every task's canonical program, `copies` times
    small_task: str
    small_samples: Path  # only `small_task`'s copies, in a folder of its own
    timeout_s: float

    @property
    def n_samples(self) -> int:
        return len(self.task_ids) * self.copies


def _sample(task_id: str, program: str, copy: int) -> dict[str, str]:
    # a distinct trailing comment per copy, so that no tool can skip a copy as a duplicate
    return {"task_id": task_id, "solution": f"{program}\n# copy {copy}\n"}


def make_workload(
    dataset: dict[str, dict[str, Any]],
    task_ids: list[str],
    copies: int,
    workdir: Path,
    timeout: float,
) -> Workload:
    # exactly the program the official ground truth runs: prompt + canonical solution
    programs = {
        task_id: dataset[task_id]["complete_prompt"] + "\n" + dataset[task_id]["canonical_solution"]
        for task_id in task_ids
    }
    samples = workdir / SAMPLES_NAME
    write_jsonl(
        samples, (_sample(task, programs[task], n) for n in range(copies) for task in task_ids)
    )
    # the official tool reloads (and then asks before overwriting) results beside a samples
    # file, so each run of it needs a samples file in a folder of its own
    small_dir = workdir / "small"
    small_dir.mkdir()
    small_samples = small_dir / SAMPLES_NAME
    small_task = task_ids[0]
    write_jsonl(
        small_samples, (_sample(small_task, programs[small_task], n) for n in range(copies))
    )
    return Workload(task_ids, copies, samples, small_task, small_samples, timeout)


def official_half(
    official: Official, work: Workload, workers: int | None, workdir: Path
) -> dict[str, Any]:
    print("official: ground truth ...", flush=True)
    truth = official.ground_truth(
        work.task_ids, workdir, parallel=workers, timeout_s=work.timeout_s
    )
    parallel = int(truth.run.extra["parallel"])
    truth_seconds = sum(truth.times.get(task) or 0.0 for task in work.task_ids)
    failed = sorted(task for task in work.task_ids if truth.times.get(task) is None)
    print("official: samples ...", flush=True)
    full = official.evaluate_samples(
        work.samples, work.task_ids, workdir, parallel=workers, timeout_s=work.timeout_s
    )
    print("official: one-task run ...", flush=True)
    small = official.evaluate_samples(
        work.small_samples,
        [work.small_task],
        work.small_samples.parent,
        parallel=workers,
        timeout_s=work.timeout_s,
    )
    # the official tool records no per-sample test time; its own ground-truth timing of the
    # same code on the same machine, a minute earlier, stands in for it
    small_seconds = (truth.times.get(work.small_task) or 0.0) * work.copies
    full_cost = harness_cost(full.run, work.n_samples, truth_seconds * work.copies, parallel)
    small_cost = harness_cost(small.run, work.copies, small_seconds, parallel)
    statuses = [status for entries in full.statuses.values() for status in entries]
    return {
        "ground_truth": {
            **harness_cost(truth.run, len(work.task_ids), truth_seconds, parallel),
            "failed_tasks": failed,
            "leaked_temp_entries": truth.run.extra["leaked_temp_entries"],
            "log": truth.run.log_path,
        },
        "samples": {
            **full_cost,
            **marginal_cost(full_cost, small_cost),
            "tests_own_time_source": "official ground-truth test times x copies",
            "passed": statuses.count("pass"),
            "leaked_temp_entries": full.run.extra["leaked_temp_entries"],
            "log": full.run.log_path,
        },
        "one_task": {**small_cost, "leaked_temp_entries": small.run.extra["leaked_temp_entries"]},
    }


def passbench_half(
    passbench: Passbench, work: Workload, workers: int | None, workdir: Path
) -> dict[str, Any]:
    print("passbench: ground truth ...", flush=True)
    truth = passbench.ground_truth(
        work.task_ids, workdir, workers=workers, timeout_s=work.timeout_s
    )
    parallel = int(workers or truth.run.extra.get("workers") or os.cpu_count() or 1)
    truth_seconds = sum(v.duration_s or 0.0 for v in truth.tasks.values())
    print("passbench: samples ...", flush=True)
    full = passbench.evaluate_samples(
        work.samples, work.task_ids, workdir, workers=workers, timeout_s=work.timeout_s
    )
    print("passbench: one-task run ...", flush=True)
    small = passbench.evaluate_samples(
        work.small_samples,
        [work.small_task],
        work.small_samples.parent,
        workers=workers,
        timeout_s=work.timeout_s,
    )
    full_verdicts = [verdict for entries in full.samples.values() for verdict in entries]
    small_verdicts = [verdict for entries in small.samples.values() for verdict in entries]
    full_parallel = int(workers or full.workers or os.cpu_count() or 1)
    full_cost = harness_cost(
        full.run, work.n_samples, sum(v.duration_s or 0.0 for v in full_verdicts), full_parallel
    )
    small_cost = harness_cost(
        small.run, work.copies, sum(v.duration_s or 0.0 for v in small_verdicts), full_parallel
    )
    return {
        "ground_truth": {
            **harness_cost(truth.run, len(work.task_ids), truth_seconds, parallel),
            "failed_tasks": sorted(t for t, v in truth.tasks.items() if v.status != "pass"),
            "log": truth.run.log_path,
        },
        "samples": {
            **full_cost,
            **marginal_cost(full_cost, small_cost),
            "tests_own_time_source": "passbench duration_s per sample",
            "passed": sum(v.status == "pass" for v in full_verdicts),
            "log": full.run.log_path,
        },
        "one_task": small_cost,
    }


def print_summary(payload: dict[str, Any]) -> None:
    print()
    print(f"{payload['n_tasks']} tasks x {payload['copies']} copies = {payload['n_samples']}")
    header = f"{'tool / run':<26}{'wall s':>9}{'samples/s':>11}{'workers':>9}"
    header += f"{'ovh ms (wall)':>15}{'ovh ms (cpu)':>14}{'passed':>8}{'other load':>12}"
    print(header)
    for tool in ("official", "passbench"):
        for phase in ("ground_truth", "samples"):
            figures = payload.get(tool, {}).get(phase)
            if not figures:
                continue
            failed = len(figures.get("failed_tasks", []))
            passed = figures.get("passed", figures["samples"] - failed)
            print(
                f"{tool + ' ' + phase:<26}{figures['wall_s']:>9.1f}"
                f"{figures['samples_per_s']:>11.2f}"
                f"{figures['workers']:>9}{figures['overhead_wall_ms']:>15.1f}"
                f"{figures['overhead_cpu_ms']:>14.1f}{passed:>8}{figures['other_load_cores']:>12.2f}"
            )
    for tool in ("official", "passbench"):
        figures = payload.get(tool, {}).get("samples", {})
        if "marginal_overhead_wall_ms" in figures:
            print(
                f"{tool}: fixed start-up {figures['fixed_startup_wall_s']:.1f} s (one-task run); "
                f"per extra sample {figures['marginal_overhead_wall_ms']} ms wall overhead, "
                f"{figures['marginal_overhead_cpu_ms']} ms CPU overhead, "
                f"{figures['marginal_samples_per_s']} samples/s"
            )
    for key, value in payload.get("ratios", {}).items():
        print(f"{key}: {value}")


def main() -> None:
    args = parse_arguments()
    dataset = load_dataset()
    official = None
    if args.only != "passbench":
        if args.baseline_venv is None:
            raise SystemExit("--baseline-venv is required unless --only passbench")
        official = Official(args.baseline_venv)
    if args.derive_task_set:
        if official is None:
            raise SystemExit("--derive-task-set needs the official evaluator")
        derive_task_set(official, dataset, keep_earlier=not args.fresh_task_set)
        return

    task_ids = load_fast_tasks(args.task_set)
    if args.limit:
        task_ids = task_ids[: args.limit]
    workdir = run_dir(args.name)
    work = make_workload(dataset, task_ids, args.copies, workdir, args.timeout)
    payload: dict[str, Any] = {
        "benchmark": "overhead",
        "machine": machine_facts(),
        "task_set": str(args.task_set),
        "n_tasks": len(task_ids),
        "copies": args.copies,
        "n_samples": work.n_samples,
        "one_task_run": work.small_task,
        "workers_requested": args.workers,
        "run_dir": str(workdir),
    }
    if official is not None:
        payload["official"] = official_half(official, work, args.workers, workdir)
    if args.only != "official":
        command = shlex.split(args.passbench_command) if args.passbench_command else None
        payload["passbench"] = passbench_half(Passbench(command), work, args.workers, workdir)
    if "official" in payload and "passbench" in payload:
        off, ours = payload["official"], payload["passbench"]
        payload["ratios"] = {
            "samples_overhead_wall_official_over_passbench": ratio(
                off["samples"]["overhead_wall_ms"], ours["samples"]["overhead_wall_ms"]
            ),
            "samples_overhead_cpu_official_over_passbench": ratio(
                off["samples"]["overhead_cpu_ms"], ours["samples"]["overhead_cpu_ms"]
            ),
            "marginal_overhead_wall_official_over_passbench": ratio(
                off["samples"].get("marginal_overhead_wall_ms"),
                ours["samples"].get("marginal_overhead_wall_ms"),
            ),
            "samples_per_s_passbench_over_official": ratio(
                ours["samples"]["samples_per_s"], off["samples"]["samples_per_s"]
            ),
            "ground_truth_wall_official_over_passbench": ratio(
                off["ground_truth"]["wall_s"], ours["ground_truth"]["wall_s"]
            ),
        }
    payload["machine"]["loadavg_at_end"] = list(os.getloadavg())
    path = write_result(args.name, payload)
    print_summary(payload)
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
