"""HumanEval+ evaluation speed: passbench against EvalPlus 0.3.1, same files, same machine.

    python benchmarks/evalplus_speed.py --baseline-venv VENV [--checkset DIR] [--repeat N]

Two sample files of 164 samples (one per task), each evaluated by both tools with their
default parallelism (EvalPlus: half the cores; passbench: from the cores and memory):

- `canonical`: every task's canonical solution;
- `model-like`: a mix drawn from the check set (benchmarks/evalplus_checkset.py) the way a
  mid-sized model's file looks: mostly correct answers, some wrong, a few slow ones and one in
  ten that never returns on some input (the samples that make a run slow).

Each tool runs `warm` (its expected outputs and timings already cached, the everyday case)
after one `cold` run (caches empty: EvalPlus computes its ground truth, passbench its expected
outputs). Runs alternate between the tools so that machine noise hits both. The result is
benchmarks/results/evalplus-speed.json with wall and CPU seconds, the load from other work
during each run, and the ratio passbench / EvalPlus (below 1: passbench is faster).
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
from evalplus_agreement import DEFAULT_CHECKSET, uncompressed

#: The model-like file: of every ten tasks, this many get a sample of each kind.
MIX = (
    ("canonical/completion", 6),
    ("mutant", 2),
    ("slow/sleep-1.5s-once", 1),
    ("slow/spin-forever-once", 1),
)


def sample_files(checkset: Path, folder: Path) -> dict[str, Path]:
    rows = [json.loads(line) for line in (checkset / "checkset.jsonl").read_text().splitlines()]
    families = json.loads((checkset / "families.json").read_text())
    by_task: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for family, row in zip(families, rows, strict=True):
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


def evalplus_argv(venv: Path, samples: Path) -> list[str]:
    return [
        str(venv / "bin" / "evalplus.evaluate"),
        "--dataset",
        "humaneval",
        "--samples",
        str(samples),
        "--i-just-wanna-run",
    ]


def passbench_argv(samples: Path, output: Path) -> list[str]:
    return [
        *default_command(),
        "evaluate",
        "--benchmark",
        "humanevalplus",
        "--samples",
        str(samples),
        "--output-dir",
        str(output),
        "--no-resume",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-venv", type=Path, required=True)
    parser.add_argument("--checkset", type=Path, default=DEFAULT_CHECKSET)
    parser.add_argument("--repeat", type=int, default=1, help="warm runs per tool and file")
    args = parser.parse_args(argv)

    folder = run_dir("evalplus-speed")
    files = sample_files(args.checkset, folder)
    evalplus_env = dict(os.environ)
    evalplus_env["HUMANEVAL_OVERRIDE_PATH"] = str(uncompressed("humaneval"))
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
            command, env = evalplus_argv(args.baseline_venv, copy), evalplus_env
        else:
            command, env = passbench_argv(samples, work), passbench_env
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
        "evalplus-speed",
        {"machine": machine_facts(), "mix": MIX, "summary": summary, "runs": runs},
    )
    print(f"result: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
