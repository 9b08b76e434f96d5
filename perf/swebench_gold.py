"""SWE-bench gold patches on real repositories, from a folder of mirrors: how many resolve, the
wall time, and the harness's own cost per instance.

    .venv/bin/python perf/swebench_gold.py --repos DIR [--benchmark swebench-verified]
        [--repo sympy/sympy] [--versions 1.10,1.11,1.12] [--tasks ID,ID] [--workers N]

DIR holds `<owner>__<name>.git` mirrors (`git clone --mirror`, or the search tool's `fetch`).
The command run is `passbench evaluate --ground-truth` on the selected instances (every instance
of the repositories found in DIR unless narrowed). Printed: resolved / total and every instance
that does not resolve with its reason, wall and CPU time, the tests' own time (the sum of
`duration_s`), and the harness overhead per instance: (wall x workers - tests' own time) /
instances, an upper bound (it counts idle workers at the end of the run). Environments: see
docs/swebench.md (today the evaluation interpreter runs every instance).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

from _common import data_dir, machine_facts, run_dir, run_timed, write_result

FILES = {
    "swebench-verified": "swebench-verified.jsonl.gz",
    "swebench-lite": "swebench-lite.jsonl.gz",
}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder of <owner>__<name>.git")
    parser.add_argument("--benchmark", default="swebench-verified", choices=sorted(FILES))
    parser.add_argument("--repo", help="only this repository (owner/name)")
    parser.add_argument("--versions", help="only these repository versions (comma-separated)")
    parser.add_argument("--tasks", help="only these instance ids (comma-separated)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=7200, help="seconds for the command")
    parser.add_argument("--name", default="bench_swebench_gold", help="results/NAME.json")
    return parser.parse_args()


def select(args: argparse.Namespace) -> list[str]:
    path = data_dir() / "swebench" / FILES[args.benchmark]
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    present = {
        row["repo"]
        for row in rows
        if (args.repos / (row["repo"].replace("/", "__") + ".git")).exists()
    }
    versions = set(args.versions.split(",")) if args.versions else None
    wanted = set(args.tasks.split(",")) if args.tasks else None
    return [
        row["instance_id"]
        for row in rows
        if row["repo"] in present
        and (args.repo is None or row["repo"] == args.repo)
        and (versions is None or row["version"] in versions)
        and (wanted is None or row["instance_id"] in wanted)
    ]


def main() -> None:
    args = parse_arguments()
    tasks = select(args)
    if not tasks:
        sys.exit(f"no instance selected: no mirror in {args.repos} matches")
    workdir = run_dir("swebench-gold")
    out = workdir / "out"
    argv = [
        sys.executable,
        "-m",
        "passbench.apps.cli",
        "evaluate",
        "--benchmark",
        args.benchmark,
        "--ground-truth",
        "--tasks",
        ",".join(tasks),
        "--repos",
        str(args.repos.resolve()),
        "--workers",
        str(args.workers),
        "--output-dir",
        str(out),
    ]
    print(f"passbench: gold patches of {len(tasks)} instances ...", flush=True)
    env = {**os.environ, "PASSBENCH_DATA_DIR": str(data_dir())}
    run = run_timed(
        "passbench", argv, env=env, log_path=workdir / "passbench.log", timeout_s=args.timeout
    )
    truth = json.loads((out / "ground_truth.json").read_text(encoding="utf-8"))["tasks"]
    own = sum(float(entry.get("duration_s") or 0.0) for entry in truth.values())
    failing = {
        task: entry.get("reason", "") for task, entry in truth.items() if entry["status"] != "pass"
    }
    payload: dict[str, Any] = {
        "benchmark": args.benchmark,
        "machine": machine_facts(),
        "run": run.as_dict(),
        "instances": len(truth),
        "resolved": len(truth) - len(failing),
        "not_resolved": failing,
        "tests_own_time_s": round(own, 1),
        "overhead_per_instance_s": round((run.wall_s * args.workers - own) / len(truth), 2),
    }
    path = write_result(args.name, payload)
    print(f"resolved {payload['resolved']} / {payload['instances']}")
    for task, reason in failing.items():
        print(f"  {task}: {reason}")
    print(
        f"wall {run.wall_s:.1f} s, CPU {run.cpu_s:.1f} s, tests' own time {own:.1f} s, "
        f"overhead <= {payload['overhead_per_instance_s']} s per instance ({args.workers} workers)"
    )
    print(f"written: {path}")


if __name__ == "__main__":
    main()
