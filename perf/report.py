"""Markdown tables of the latest results, for docs/performance.md.

.venv/bin/python perf/report.py                      # both scripts' latest results
.venv/bin/python perf/report.py results/overhead-20261122T172400Z.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from _common import RESULTS_DIR, task_number

LATEST = ("overhead.json", "bench_ground_truth.json")


def _machine(payload: dict[str, Any]) -> str:
    machine = payload["machine"]
    start = ", ".join(f"{value:.1f}" for value in machine["loadavg_at_start"])
    return (
        f"{machine['date_utc']} UTC, {machine['cpu_count']} × {machine['cpu_model']}, "
        f"{machine['memory_gib']} GiB; load average at start {start}"
    )


def overhead_tables(payload: dict[str, Any]) -> str:
    lines = [
        f"Measured {_machine(payload)}.",
        f"{payload['n_tasks']} tasks × {payload['copies']} copies = {payload['n_samples']}.",
        "",
        "| tool | run | wall s | samples/s | workers | overhead ms/sample (wall) "
        "| overhead ms/sample (CPU) | passed | other load (cores) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for tool in ("official", "passbench"):
        for phase in ("ground_truth", "samples"):
            row = payload.get(tool, {}).get(phase)
            if not row:
                continue
            passed = row.get("passed", row["samples"] - len(row.get("failed_tasks", [])))
            lines.append(
                f"| {tool} | {phase.replace('_', ' ')} | {row['wall_s']:.1f} "
                f"| {row['samples_per_s']} | {row['workers']} | {row['overhead_wall_ms']} "
                f"| {row['overhead_cpu_ms']} | {passed}/{row['samples']} "
                f"| {row['other_load_cores']} |"
            )
    lines += [
        "",
        "| tool | fixed start-up s | marginal samples/s | marginal overhead ms (wall) "
        "| marginal overhead ms (CPU) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for tool in ("official", "passbench"):
        row = payload.get(tool, {}).get("samples", {})
        if "marginal_overhead_wall_ms" in row:
            lines.append(
                f"| {tool} | {row['fixed_startup_wall_s']:.1f} | {row['marginal_samples_per_s']} "
                f"| {row['marginal_overhead_wall_ms']} | {row['marginal_overhead_cpu_ms']} |"
            )
    if payload.get("ratios"):
        lines.append("")
        lines += [f"- {key}: **{value}**" for key, value in payload["ratios"].items()]
    return "\n".join(lines)


def ground_truth_tables(payload: dict[str, Any]) -> str:
    lines = [
        f"Measured {_machine(payload)}. Tasks: {payload['tasks']} ({payload['n_tasks']}).",
        "",
        "| tool | measured (UTC) | workers | wall s | CPU s | pass | Σ tests' own s "
        "| Σ / workers s | longest task s | other load (cores) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for tool in ("official", "passbench"):
        half = payload.get(tool)
        if not half:
            continue
        run, profile = half["run"], half["profile"]
        workers = half.get("parallel", half.get("workers"))
        measured = half.get("measured_on", payload["machine"])["date_utc"]
        lines.append(
            f"| {tool} | {measured} | {workers} | {run['wall_s']:.0f} | {run['cpu_s']:.0f} "
            f"| {half['n_pass']}/{half['n_tasks']} | {profile['tests_own_time_s']:.0f} "
            f"| {profile['spread_s']:.0f} | {profile['longest_task_s']:.0f} "
            f"| {run['other_load_cores']} |"
        )
    if "wall_ratio_official_over_passbench" in payload:
        agree = payload["agreement"]
        lines += [
            "",
            f"- wall ratio official/passbench: **{payload['wall_ratio_official_over_passbench']}**",
            f"- same verdict: {agree['same_verdict']} / {agree['tasks_compared']}",
            f"- both fail: {_ids(agree['both_fail'])}",
            f"- only the official fails: {_ids(agree['official_fails_passbench_passes'])}",
            "- only passbench fails: "
            + (
                "; ".join(
                    f"{task_number(task)} ({status}: {reason[:80]})"
                    for task, (status, reason) in agree["passbench_fails_official_passes"].items()
                )
                or "none"
            ),
        ]
    for tool in ("official", "passbench"):
        half = payload.get(tool)
        if half:
            longest = ", ".join(f"{task_number(t)} {s}" for t, s in half["profile"]["longest"])
            lines.append(f"- {tool} longest tasks (s): {longest}")
    return "\n".join(lines)


def _ids(task_ids: list[str]) -> str:
    return " ".join(str(task_number(task)) for task in task_ids) or "none"


def main() -> None:
    paths = [Path(arg) for arg in sys.argv[1:]] or [RESULTS_DIR / name for name in LATEST]
    for path in paths:
        if not path.is_file():
            print(f"<!-- {path}: not found -->\n")
            continue
        payload = json.loads(path.read_text(encoding="utf-8"))
        print(f"<!-- {path.name} -->")
        if payload["benchmark"] == "overhead":
            print(overhead_tables(payload))
        else:
            print(ground_truth_tables(payload))
        print()


if __name__ == "__main__":
    main()
