"""SWE-bench gold patches in their built environments, one repository at a time: what `env check`
says can run here and how faithfully, the environments `env create` builds, and what the gold
patches resolve (the fidelity of passbench's environments: the gold patch must resolve every
instance whose environment is official).

    PASSBENCH_DATA_DIR=../shared/datasets .venv/bin/python perf/swebench_ground_truth.py \
        --repos DIR [--subsets requests,flask,pytest] [--benchmark swebench-verified] \
        [--env-dir DIR] [--workers 1] [--skip-create] [--empty-patch] [--tasks ID,ID]
        [--cache-dir DIR]

DIR holds `<owner>__<name>.git` mirrors (bare or git directories). For each subset, in order:
`passbench env check <benchmark> --subset S --json`, `passbench env create ... --subset S`
(cached: a second run rebuilds nothing), then the gold patches as an official predictions file
(what `--ground-truth` grades, but with every verdict's fields and the official logs kept):
`passbench evaluate -b <benchmark> --samples gold.json --subset S --repos DIR --no-gt`, with a
fresh result cache. `--together` runs the subsets' instances as one `--subset full --tasks ...`
evaluation (the first scope's 115 as a user runs them: every instance competes for the workers)
instead of one evaluation per subset. Printed, per instance: resolved or not, the
environment it ran in (official / approximate / the evaluation interpreter), and the reason;
per repository: official / evaluable / total, and gold resolved among the official ones.
Timings per instance: `wall_s` (the whole instance in passbench: working copy, sandbox, patch,
install, tests, grading), `tests_s` (the tests' own time, as pytest's or sympy's runner prints
it in the test output) and the harness overhead `wall_s - tests_s`; the offline repository
install (`pip install -e .`, which the official eval script also runs) is part of the overhead.

`--empty-patch` also grades a patch that changes no code (it only adds a text file at the
repository's root, so the official chain still applies a patch and runs the tests; a truly
empty patch is never run, officially or here): every FAIL_TO_PASS test must then fail, which
is how the dataset was made, and every PASS_TO_PASS test should pass. Printed: the
FAIL_TO_PASS tests that pass without the fix, per instance.
Results go to results/NAME.json (perf/_common.write_result).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import data_dir, machine_facts, write_result

CLI = [sys.executable, "-m", "passbench.apps.cli"]

#: A patch that changes no code: the tests then run on the base commit plus the test patch.
NULL_PATCH = """diff --git a/passbench_empty_patch_check.txt b/passbench_empty_patch_check.txt
new file mode 100644
--- /dev/null
+++ b/passbench_empty_patch_check.txt
@@ -0,0 +1 @@
+passbench: the empty-patch check (no code changed)
"""

#: The tests' own time in a test output: pytest's last line ("= 3 passed in 1.25s =", "in
#: 61.02s (0:01:01)"; before pytest 5.1 "in 1.25 seconds"), sympy's runner ("tests finished: 5
#: passed, in 0.73 seconds", which the runner wraps onto a second line when it is long).
_TEST_TIME = re.compile(
    r"(?:=+ .*\bin ([0-9.]+)(?:s| seconds)\b|tests finished: [^=]*?\bin ([0-9.]+) seconds)"
)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder of <owner>__<name>.git")
    parser.add_argument("--subsets", default="requests,flask,pytest")
    parser.add_argument("--benchmark", default="swebench-verified")
    parser.add_argument("--env-dir", type=Path, default=None, help="environments' folder")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--skip-create", action="store_true", help="use what is built")
    parser.add_argument("--tasks", default=None, help="only these instance ids (comma-separated)")
    parser.add_argument(
        "--empty-patch", action="store_true", help="also check that FAIL_TO_PASS fails unfixed"
    )
    parser.add_argument("--no-gold", action="store_true", help="only the empty-patch check")
    parser.add_argument("--name", default="bench_swebench_ground_truth", help="results/NAME.json")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="passbench's cache folder to use (default: a fresh one per evaluation); its "
        "mirrors' history caches then count once, not in every run (verdicts are never resumed)",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="the subsets' instances as one run (`--subset full --tasks ...`), as a user runs them",
    )
    return parser.parse_args()


def run(argv: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    return done, time.perf_counter() - started


def check(args: argparse.Namespace, subset: str, env: dict[str, str]) -> dict[str, Any]:
    argv = [*CLI, "env", "check", args.benchmark, "--subset", subset, "--json"]
    if args.tasks or subset == "full":
        argv += ["--tasks", args.tasks or ",".join(sorted(gold_patches(args, subset)))]
    done, _ = run(argv, env)
    report = json.loads(done.stdout)
    return {item["name"]: item for item in report["items"]}


def measure(args: argparse.Namespace, subset: str, env: dict[str, str]) -> dict[str, Any]:
    before = check(args, subset, env)
    created_s = 0.0
    if not args.skip_create:
        argv = [*CLI, "env", "create", args.benchmark, "--subset", subset]
        if args.tasks or subset == "full":
            argv += ["--tasks", args.tasks or ",".join(sorted(gold_patches(args, subset)))]
        done, created_s = run(argv, env)
        if done.returncode not in (0, 1):  # 1: some instance cannot be built, the rest is
            print(done.stderr.strip().splitlines()[-1], file=sys.stderr)
    graded, wall = ({}, 0.0)
    if not args.no_gold:
        graded, wall = evaluate(args, subset, env, "gold", gold_patches(args, subset))
    instances = {}
    for task_id, entry in sorted(graded.items()):
        checked = before.get(task_id, {})
        instances[task_id] = {
            "resolved": entry["status"] == "pass",
            "environment": entry.get("environment") or "?",
            "reason": entry.get("reason", ""),
            "failing": failing_tests(entry),
            "check": checked.get("detail", ""),
            **timings(entry),
        }
    official = [i for i in instances.values() if i["environment"] == "official"]
    measured: dict[str, Any] = {
        "instances": instances,
        "total": len(instances),
        "resolved": sum(i["resolved"] for i in instances.values()),
        "official": len(official),
        "official_resolved": sum(i["resolved"] for i in official),
        "approximate": sum(i["environment"] == "approximate" for i in instances.values()),
        "create_s": round(created_s, 1),
        "evaluate_wall_s": round(wall, 1),
        **overhead_summary(instances.values()),
    }
    if args.empty_patch or args.no_gold:
        patches = {key: NULL_PATCH for key in gold_patches(args, subset)}
        unfixed, unfixed_wall = evaluate(args, subset, env, "empty", patches)
        measured["empty_patch"] = empty_patch_summary(unfixed)
        measured["empty_patch_wall_s"] = round(unfixed_wall, 1)
    return measured


def gold_patches(args: argparse.Namespace, subset: str) -> dict[str, str]:
    patches: dict[str, str] = {}
    for repository in args.subsets.split(",") if subset == "full" else [subset]:
        patches.update(gold_predictions(args.benchmark, repository))
    if args.tasks:
        wanted = set(args.tasks.split(","))
        patches = {key: value for key, value in patches.items() if key in wanted}
    return patches


def evaluate(
    args: argparse.Namespace, subset: str, env: dict[str, str], model: str, patches: dict[str, str]
) -> tuple[dict[str, dict[str, Any]], float]:
    """`passbench evaluate` of `patches` as model `model`'s predictions, with a fresh cache
    (or `--cache-dir`'s, without resuming): every instance's verdict entry, and the wall
    time."""
    output = Path(tempfile.mkdtemp(prefix=f"swebench-gt-{subset}-{model}-"))
    samples = output / f"{model}.json"
    predictions = {
        key: {"model_name_or_path": model, "model_patch": patch} for key, patch in patches.items()
    }
    samples.write_text(json.dumps(predictions), encoding="utf-8")
    argv = [*CLI, "evaluate", "-b", args.benchmark, "--samples", str(samples), "--subset", subset]
    argv += ["--repos", str(args.repos.resolve()), "--workers", str(args.workers), "--no-gt"]
    argv += ["--output-dir", str(output)]
    if args.tasks or subset == "full":
        argv += ["--tasks", args.tasks or ",".join(sorted(patches))]
    cache = output / "cache"
    if args.cache_dir is not None:
        cache = args.cache_dir.resolve()
        argv.append("--no-resume")
    evaluated, wall = run(argv, {**env, "PASSBENCH_CACHE_DIR": str(cache)})
    found = list(output.glob("*_eval_results.json"))
    if not found:
        raise SystemExit(f"{subset}: no result file\n{evaluated.stderr[-3000:]}")
    graded = json.loads(found[0].read_text(encoding="utf-8"))["eval"]
    print(f"  ({model}: {output})", flush=True)
    return {task_id: entries[0] for task_id, entries in graded.items()}, wall


def timings(entry: dict[str, Any]) -> dict[str, float | None]:
    """The instance's wall time in passbench, its sandbox run (install, patches, tests), the
    tests' own time, the harness overhead (wall minus the tests' own time) and the part of it
    outside the sandbox run (working copy, grading)."""
    wall = entry.get("wall_s")
    sandbox = entry.get("duration_s")
    output = (entry.get("details") or {}).get("test_output.txt", "")
    times = [float(a or b) for a, b in _TEST_TIME.findall(output)]
    tests = times[-1] if times else None
    return {
        "wall_s": wall,
        "sandbox_s": sandbox,
        "tests_s": tests,
        "overhead_s": round(wall - tests, 2) if wall is not None and tests is not None else None,
        "outside_sandbox_s": round(wall - sandbox, 2) if wall and sandbox else None,
    }


def overhead_summary(rows: Any) -> dict[str, float | None]:
    rows = [row for row in rows if row["overhead_s"] is not None]
    if not rows:
        return {"overhead_median_s": None, "overhead_max_s": None, "tests_s_total": None}
    overheads = sorted(row["overhead_s"] for row in rows)
    outside = sorted(row["outside_sandbox_s"] or 0.0 for row in rows)
    return {
        "outside_sandbox_median_s": outside[len(outside) // 2],
        "overhead_median_s": overheads[len(overheads) // 2],
        "overhead_max_s": overheads[-1],
        "tests_s_total": round(sum(row["tests_s"] for row in rows), 1),
        "wall_s_total": round(sum(row["wall_s"] for row in rows), 1),
    }


def empty_patch_summary(graded: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per instance: the FAIL_TO_PASS tests that pass without the fix (there should be none)
    and the PASS_TO_PASS tests that do not pass (there should be none either)."""
    rows = {}
    for task_id, entry in sorted(graded.items()):
        f2p = entry.get("fail_to_pass") or {}
        p2p = entry.get("pass_to_pass") or {}
        rows[task_id] = {
            "fail_to_pass_passing": f2p.get("success") or [],
            "fail_to_pass_failing": len(f2p.get("failure") or []),
            "pass_to_pass_failing": p2p.get("failure") or [],
            "ran": bool(f2p or p2p),
            "reason": entry.get("reason", ""),
        }
    return {
        "instances": rows,
        "all_fail_to_pass_fail": sum(
            r["ran"] and not r["fail_to_pass_passing"] for r in rows.values()
        ),
        "total": len(rows),
    }


def gold_predictions(benchmark: str, subset: str) -> dict[str, str]:
    """The subset's gold patches, by instance id."""
    name = "swebench-verified" if benchmark.endswith("verified") else "swebench-lite"
    with gzip.open(data_dir() / "swebench" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as rows:
        return {
            row["instance_id"]: row["patch"]
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
    for subset in ["full"] if args.together else args.subsets.split(","):
        print(f"{subset}: env check, env create, gold patches ...", flush=True)
        results[subset] = measured = measure(args, subset, env)
        for task_id, row in measured["instances"].items():
            verdict = "resolved" if row["resolved"] else "NOT resolved"
            why = "" if row["resolved"] else f": {row['reason']}; failing: {row['failing'][:4]}"
            print(
                f"  {task_id}  {verdict}  [{row['environment']}] wall {row['wall_s']} s, tests "
                f"{row['tests_s']} s, overhead {row['overhead_s']} s "
                f"(outside the sandbox {row['outside_sandbox_s']} s){why}"
            )
        print(
            f"  {subset}: gold resolves {measured['resolved']}/{measured['total']}; in official "
            f"environments {measured['official_resolved']}/{measured['official']}; approximate "
            f"{measured['approximate']}; env create {measured['create_s']} s, evaluate "
            f"{measured['evaluate_wall_s']} s ({args.workers} workers); overhead per instance "
            f"median {measured['overhead_median_s']} s, max {measured['overhead_max_s']} s "
            f"(outside the sandbox run: median {measured.get('outside_sandbox_median_s')} s)",
            flush=True,
        )
        if "empty_patch" in measured:
            empty = measured["empty_patch"]
            print(
                f"  empty patch: every FAIL_TO_PASS fails on {empty['all_fail_to_pass_fail']}/"
                f"{empty['total']} ({measured['empty_patch_wall_s']} s)",
                flush=True,
            )
            for task_id, row in empty["instances"].items():
                if not row["ran"] or row["fail_to_pass_passing"] or row["pass_to_pass_failing"]:
                    print(
                        f"    {task_id}: ran={row['ran']} FAIL_TO_PASS passing "
                        f"{row['fail_to_pass_passing'][:4]}, PASS_TO_PASS failing "
                        f"{row['pass_to_pass_failing'][:4]} {row['reason']}",
                        flush=True,
                    )
    payload = {"benchmark": args.benchmark, "machine": machine_facts(), "subsets": results}
    print(f"written: {write_result(args.name, payload)}")


if __name__ == "__main__":
    main()
