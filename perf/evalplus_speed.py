"""HumanEval+ or MBPP+ evaluation speed: passbench against EvalPlus 0.3.1, same files, same
machine, in the same run.

    python perf/evalplus_speed.py --baseline-venv VENV [--dataset humaneval|mbpp]
        [--checkset DIR] [--repeat N] [--limit N]

Two sample files of one sample per task (164 for HumanEval+, 378 for MBPP+), each evaluated by
both tools with their default parallelism (EvalPlus: half the cores; passbench: from the cores
and memory): `evalplus.evaluate --dataset humaneval|mbpp` and `passbench evaluate --benchmark
humanevalplus|mbppplus`.

- `canonical`: every task's canonical solution;
- `model-like`: a mix drawn from the check set (perf/evalplus_checkset.py) the way a
  mid-sized model's file looks: mostly correct answers, some wrong, a few slow ones and one in
  ten that never returns on some input (the samples that make a run slow).

Each tool runs `warm` (its expected outputs and timings already cached, the everyday case)
after one `cold` run (caches empty: EvalPlus computes its ground truth, passbench its expected
outputs). Runs alternate between the tools so that machine noise hits both. The result is
perf/results/evalplus-speed.json with wall and CPU seconds, the load from other work
during each run, and the ratio passbench / EvalPlus (below 1: passbench is faster);
perf/results/evalplus-speed-mbpp.json for MBPP+.

The check set is built when its folder does not exist (into this run's folder; it is
deterministic). `--limit N` keeps the first N tasks only, for a smoke run that proves the
script works: both tools then read a dataset file of those N tasks (EvalPlus insists on a
sample for every task of its dataset), so its figures are not comparable with a full run's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from _common import (
    REPO_ROOT,
    data_dir,
    machine_facts,
    ratio,
    run_dir,
    run_timed,
    write_jsonl,
    write_result,
)
from _passbench import default_command
from evalplus_agreement import DATASETS, DEFAULT_CHECKSET, uncompressed
from evalplus_checkset import build as build_checkset

#: The model-like file: of every ten tasks, this many get a sample of each kind.
MIX = (
    ("canonical/completion", 6),
    ("mutant", 2),
    ("slow/sleep-1.5s-once", 1),
    ("slow/spin-forever-once", 1),
)


def sample_files(checkset: Path, folder: Path, limit: int | None = None) -> dict[str, Path]:
    rows = [json.loads(line) for line in (checkset / "checkset.jsonl").read_text().splitlines()]
    families = json.loads((checkset / "families.json").read_text())
    by_task: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for family, row in zip(families, rows, strict=True):
        if limit is not None and row["task_id"] not in by_task and len(by_task) >= limit:
            continue
        by_task[row["task_id"]].setdefault(family, row)
    plan = [family for family, count in MIX for _ in range(count)]
    canonical, mixed = [], []
    for number, (task_id, samples) in enumerate(by_task.items()):
        canonical.append(samples["canonical/solution"])
        wanted = plan[number % len(plan)]
        mixed.append(samples.get(wanted) or samples["canonical/completion"])
        assert mixed[-1]["task_id"] == task_id
    files = {"canonical": folder / "canonical.jsonl", "model-like": folder / "model-like.jsonl"}
    write_jsonl(files["canonical"], canonical)
    write_jsonl(files["model-like"], mixed)
    return files


def evalplus_argv(venv: Path, samples: Path, dataset: str = "humaneval") -> list[str]:
    return [
        str(venv / "bin" / "evalplus.evaluate"),
        "--dataset",
        dataset,
        "--samples",
        str(samples),
        "--i-just-wanna-run",
    ]


def passbench_argv(
    samples: Path, output: Path, dataset: str = "humaneval", dataset_path: Path | None = None
) -> list[str]:
    argv = [
        *default_command(),
        "evaluate",
        "--benchmark",
        DATASETS[dataset][3],
        "--samples",
        str(samples),
        "--output-dir",
        str(output),
        "--no-resume",
    ]
    if dataset_path is not None:
        argv += ["--dataset-path", str(dataset_path)]
    return argv


def first_tasks(dataset: str, limit: int, folder: Path) -> Path:
    """The dataset's first `limit` tasks as plain JSONL, for both tools (a smoke run)."""
    lines = uncompressed(dataset).read_text(encoding="utf-8").splitlines(keepends=True)
    path = folder / f"first-{limit}-{DATASETS[dataset][1]}"
    path.write_text("".join(lines[:limit]), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-venv", type=Path, required=True)
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="humaneval")
    parser.add_argument("--checkset", type=Path, help=f"default: {DEFAULT_CHECKSET} (+ -mbpp)")
    parser.add_argument("--repeat", type=int, default=1, help="warm runs per tool and file")
    parser.add_argument(
        "--limit", type=int, help="only the first N tasks: a smoke run, not a measurement"
    )
    args = parser.parse_args(argv)
    dataset: str = args.dataset
    suffix = "" if dataset == "humaneval" else f"-{dataset}"
    result_name = f"evalplus-speed{suffix}" + (f"-limit{args.limit}" if args.limit else "")

    folder = run_dir(result_name)
    checkset = args.checkset or DEFAULT_CHECKSET.with_name(DEFAULT_CHECKSET.name + suffix)
    if not (checkset / "checkset.jsonl").is_file():
        checkset = folder / "checkset"
        print(f"building the {dataset} check set in {checkset}", flush=True)
        build_checkset(checkset, 20261124, dataset)
    files = sample_files(checkset, folder, args.limit)
    limited = first_tasks(dataset, args.limit, folder) if args.limit else None
    evalplus_env = dict(os.environ)
    evalplus_env[DATASETS[dataset][2]] = str(limited or uncompressed(dataset))
    evalplus_env["XDG_CACHE_HOME"] = str(folder / "evalplus-cache")
    passbench_env = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir()))
    passbench_env["PASSBENCH_CACHE_DIR"] = str(folder / "passbench-cache")

    runs: list[dict[str, Any]] = []

    def one(tool: str, kind: str, name: str, samples: Path) -> float:
        work = folder / f"{tool}-{name}-{kind}-{len(runs)}"
        work.mkdir()
        if tool == "evalplus":
            copy = work / samples.name
            shutil.copy(samples, copy)
            command, env = evalplus_argv(args.baseline_venv, copy, dataset), evalplus_env
        else:
            command = passbench_argv(samples, work, dataset, limited)
            env = passbench_env
        run = run_timed(
            f"{tool} {name} {kind}",
            command,
            env=env,
            cwd=REPO_ROOT,
            log_path=work / "log.txt",
            timeout_s=3600,
        )
        if run.returncode != 0:
            raise SystemExit(f"{run.name} failed ({run.returncode}); see {run.log_path}")
        runs.append({"tool": tool, "kind": kind, "file": name, **run.as_dict()})
        print(f"{run.name:36} {run.wall_s:8.1f} s wall {run.cpu_s:8.1f} s cpu", flush=True)
        return run.wall_s

    # cold: the first run of each tool fills its cache (on the canonical file)
    for tool in ("evalplus", "passbench"):
        one(tool, "cold", "canonical", files["canonical"])
    walls: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _ in range(args.repeat):
        for name, samples in files.items():
            for tool in ("evalplus", "passbench"):
                walls[(tool, name)].append(one(tool, "warm", name, samples))

    summary = {}
    for name in files:
        ours = min(walls[("passbench", name)])
        theirs = min(walls[("evalplus", name)])
        summary[name] = {
            "passbench_wall_s": round(ours, 2),
            "evalplus_wall_s": round(theirs, 2),
            "ratio_passbench_over_evalplus": ratio(ours, theirs),
        }
        print(
            f"{name:12} passbench {ours:7.1f} s  EvalPlus {theirs:7.1f} s"
            f"  ratio {ratio(ours, theirs)}"
        )
    path = write_result(
        result_name,
        {
            "machine": machine_facts(),
            "dataset": dataset,
            "limit": args.limit,
            "checkset": str(checkset),
            "mix": MIX,
            "summary": summary,
            "runs": runs,
        },
    )
    print(f"result: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
