"""SWE-bench gold patches in their built environments, one repository at a time: what `env check`
says can run here and how faithfully, the environments `env create` builds, and what the gold
patches resolve (the fidelity of passbench's environments: the gold patch must resolve every
instance whose environment is official).

    PASSBENCH_DATA_DIR=../shared/datasets .venv/bin/python perf/swebench_ground_truth.py \
        --repos DIR [--subsets requests,flask,pytest] [--benchmark swebench-verified] \
        [--env-dir DIR] [--workers 1] [--skip-create]

DIR holds `<owner>__<name>.git` mirrors (bare or git directories). For each subset, in order:
`passbench env check <benchmark> --subset S --json`, `passbench env create ... --subset S`
(cached: a second run rebuilds nothing), then the gold patches as an official predictions file
(what `--ground-truth` grades, but with every verdict's fields and the official logs kept):
`passbench evaluate -b <benchmark> --samples gold.json --subset S --repos DIR --no-gt`, with a
fresh result cache. Printed, per instance: resolved or not, the
environment it ran in (official / approximate / the evaluation interpreter), and the reason;
per repository: official / evaluable / total, and gold resolved among the official ones.
Results go to results/NAME.json (perf/_common.write_result).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import data_dir, machine_facts, write_result

CLI = [sys.executable, "-m", "passbench.apps.cli"]


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder of <owner>__<name>.git")
    parser.add_argument("--subsets", default="requests,flask,pytest")
    parser.add_argument("--benchmark", default="swebench-verified")
    parser.add_argument("--env-dir", type=Path, default=None, help="environments' folder")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--skip-create", action="store_true", help="use what is built")
    parser.add_argument("--tasks", default=None, help="only these instance ids (comma-separated)")
    parser.add_argument("--name", default="bench_swebench_ground_truth", help="results/NAME.json")
    return parser.parse_args()


def run(argv: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    return done, time.perf_counter() - started


def check(args: argparse.Namespace, subset: str, env: dict[str, str]) -> dict[str, Any]:
    argv = [*CLI, "env", "check", args.benchmark, "--subset", subset, "--json"]
    if args.tasks:
        argv += ["--tasks", args.tasks]
    done, _ = run(argv, env)
    report = json.loads(done.stdout)
    return {item["name"]: item for item in report["items"]}


def measure(args: argparse.Namespace, subset: str, env: dict[str, str]) -> dict[str, Any]:
    before = check(args, subset, env)
    created_s = 0.0
    if not args.skip_create:
        argv = [*CLI, "env", "create", args.benchmark, "--subset", subset]
        done, created_s = run([*argv, *(["--tasks", args.tasks] if args.tasks else [])], env)
        if done.returncode not in (0, 1):  # 1: some instance cannot be built, the rest is
            print(done.stderr.strip().splitlines()[-1], file=sys.stderr)
    output = Path(tempfile.mkdtemp(prefix=f"swebench-gt-{subset}-"))
    gold = output / "gold.json"
    predictions = gold_predictions(args.benchmark, subset)
    if args.tasks:
        wanted = set(args.tasks.split(","))
        predictions = {key: value for key, value in predictions.items() if key in wanted}
    gold.write_text(json.dumps(predictions), encoding="utf-8")
    argv = [*CLI, "evaluate", "-b", args.benchmark, "--samples", str(gold), "--subset", subset]
    argv += ["--repos", str(args.repos.resolve()), "--workers", str(args.workers), "--no-gt"]
    argv += ["--output-dir", str(output)]
    if args.tasks:
        argv += ["--tasks", args.tasks]
    evaluated, wall = run(argv, {**env, "PASSBENCH_CACHE_DIR": str(output / "cache")})
    found = list(output.glob("*_eval_results.json"))
    if not found:
        raise SystemExit(f"{subset}: no result file\n{evaluated.stderr[-3000:]}")
    graded = json.loads(found[0].read_text(encoding="utf-8"))["eval"]
    instances = {}
    for task_id, (entry, *_) in sorted(graded.items()):
        checked = before.get(task_id, {})
        instances[task_id] = {
            "resolved": entry["status"] == "pass",
            "environment": entry.get("environment") or "?",
            "reason": entry.get("reason", ""),
            "failing": failing_tests(entry),
            "check": checked.get("detail", ""),
        }
    official = [i for i in instances.values() if i["environment"] == "official"]
    return {
        "instances": instances,
        "total": len(instances),
        "resolved": sum(i["resolved"] for i in instances.values()),
        "official": len(official),
        "official_resolved": sum(i["resolved"] for i in official),
        "approximate": sum(i["environment"] == "approximate" for i in instances.values()),
        "create_s": round(created_s, 1),
        "evaluate_wall_s": round(wall, 1),
    }


def gold_predictions(benchmark: str, subset: str) -> dict[str, dict[str, str]]:
    """The subset's gold patches, as a predictions file keyed by instance id."""
    name = "swebench-verified" if benchmark.endswith("verified") else "swebench-lite"
    with gzip.open(data_dir() / "swebench" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as rows:
        return {
            row["instance_id"]: {"model_name_or_path": "gold", "model_patch": row["patch"]}
            for row in map(json.loads, rows)
            if row["repo"].split("/")[1].lower() == subset
        }


def failing_tests(entry: dict[str, Any]) -> list[str]:
    """FAIL_TO_PASS and PASS_TO_PASS tests that did not pass, as the verdict lists them."""
    failing = []
    for bucket in ("fail_to_pass", "pass_to_pass"):
        failing += (entry.get(bucket) or {}).get("failure") or []
    return failing


def main() -> None:
    args = parse_arguments()
    env = {**os.environ, "PASSBENCH_DATA_DIR": str(data_dir())}
    if args.env_dir is not None:
        env["PASSBENCH_SWEBENCH_ENV_DIR"] = str(args.env_dir.resolve())
    results = {}
    for subset in args.subsets.split(","):
        print(f"{subset}: env check, env create, gold patches ...", flush=True)
        results[subset] = measured = measure(args, subset, env)
        for task_id, row in measured["instances"].items():
            verdict = "resolved" if row["resolved"] else "NOT resolved"
            why = "" if row["resolved"] else f": {row['reason']}; failing: {row['failing'][:4]}"
            print(f"  {task_id}  {verdict}  [{row['environment']}]{why}")
        print(
            f"  {subset}: gold resolves {measured['resolved']}/{measured['total']}; in official "
            f"environments {measured['official_resolved']}/{measured['official']}; approximate "
            f"{measured['approximate']}; env create {measured['create_s']} s, evaluate "
            f"{measured['evaluate_wall_s']} s ({args.workers} workers)",
            flush=True,
        )
    payload = {"benchmark": args.benchmark, "machine": machine_facts(), "subsets": results}
    print(f"written: {write_result(args.name, payload)}")


if __name__ == "__main__":
    main()
