"""Where two BigCodeBench evaluation environments give different verdicts on the same samples.

    python perf/env_differential.py --env-a DIR --env-b DIR [--subset hard|full]
        [--mutants N] [--seed S] [--tasks ID,ID]

Differential testing of environments (e.g. the Python 3.11 lock against the official Python
3.10 one): the same sample file is evaluated by passbench in each environment, with the same
settings and NLTK data, and every sample whose status differs is listed with both reasons.
The samples are each task's canonical solution plus `--mutants` AST mutants of it (a
comparison, an operator, a constant or a boolean changed, as perf/evalplus_checkset.py
does for HumanEval+), which exercise the libraries along paths the canonical solution does not.
Writes perf/results/env-differential.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

from _common import REPO_ROOT, data_dir, load_dataset, run_dir, write_jsonl, write_result
from _passbench import default_command
from evalplus_checkset import _Mutator


def mutants(program: str, first_line: int, count: int, rng: random.Random) -> list[str]:
    counter = _Mutator(first_line, target=-1)
    counter.visit(ast.parse(program))
    points = list(range(counter.seen))
    rng.shuffle(points)
    made: list[str] = []
    original = ast.unparse(ast.parse(program))
    for point in points:
        if len(made) == count:
            break
        mutator = _Mutator(first_line, point)
        mutated = ast.unparse(mutator.visit(ast.parse(program)))
        if mutator.done and mutated != original and mutated not in made:
            made.append(mutated)
    return made


def sample_rows(
    tasks: dict[str, dict[str, Any]], ids: list[str], n_mutants: int, seed: int
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for task_id in ids:
        task = tasks[task_id]
        program = task["complete_prompt"] + "\n" + task["canonical_solution"]
        rows.append({"task_id": task_id, "solution": program, "kind": "canonical"})
        first_line = task["complete_prompt"].count("\n") + 1
        for mutant in mutants(program, first_line, n_mutants, rng):
            rows.append({"task_id": task_id, "solution": mutant, "kind": "mutant"})
    return rows


def evaluate(
    env: Path, samples: Path, output: Path, subset: str, timeout: float | None
) -> dict[str, list[Any]]:
    argv = [*default_command(), "evaluate", "--benchmark", "bigcodebench", "--subset", subset]
    argv += ["--samples", str(samples), "--output-dir", str(output), "--env-dir", str(env)]
    argv += ["--no-calibrated", "--no-resume"]
    if timeout is not None:
        argv += ["--timeout-per-task", str(timeout)]
    nltk = data_dir() / "nltk_data"
    if nltk.is_dir():
        argv += ["--nltk-data", str(nltk)]
    environ = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir()))
    subprocess.run(argv, env=environ, check=True, cwd=REPO_ROOT, stdout=subprocess.DEVNULL)
    document = json.loads((output / f"{samples.stem}_eval_results.json").read_text())
    return {
        task_id: sorted(entries, key=lambda entry: entry.get("sample_index", 0))
        for task_id, entries in document["eval"].items()
    }


def _read(output: Path, stem: str) -> dict[str, list[Any]]:
    document = json.loads((output / f"{stem}_eval_results.json").read_text())
    return {
        task_id: sorted(entries, key=lambda entry: entry.get("sample_index", 0))
        for task_id, entries in document["eval"].items()
    }


def recheck(
    differences: list[dict[str, Any]],
    envs: tuple[tuple[str, Path], ...],
    folder: Path,
    times: int,
    timeout: float | None,
) -> None:
    """Run the differing samples `times` more times in each environment; a difference whose
    statuses never change within an environment is the environments', else it is flaky."""
    samples = folder / "recheck.jsonl"
    write_jsonl(
        samples, [{"task_id": d["task_id"], "solution": d["solution"]} for d in differences]
    )
    seen: dict[str, int] = {}
    positions = []
    for item in differences:
        positions.append(seen.get(item["task_id"], 0))
        seen[item["task_id"]] = positions[-1] + 1
    for item in differences:
        item["rechecked"] = {"a": [], "b": []}
    for round_ in range(times):
        for name, env in envs:
            verdicts = evaluate(env, samples, folder / f"recheck-{name}-{round_}", "full", timeout)
            for item, position in zip(differences, positions, strict=True):
                item["rechecked"][name].append(verdicts[item["task_id"]][position]["status"])
    for item in differences:
        a = {item["a"][0], *item["rechecked"]["a"]}
        b = {item["b"][0], *item["rechecked"]["b"]}
        item["verdict"] = "environments" if len(a) == len(b) == 1 else "flaky"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env-a", type=Path, required=True)
    parser.add_argument("--env-b", type=Path, required=True)
    parser.add_argument("--subset", choices=("full", "hard"), default="hard")
    parser.add_argument("--mutants", type=int, default=2, help="mutants per task [2]")
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--tasks", help="only these task ids (comma-separated)")
    parser.add_argument(
        "--timeout-per-task",
        type=float,
        help="per-task limit, s (default: the official 240); each sample still gets its task's "
        "ground-truth time + 1 s at least. Mutants that never end hold a worker this long, in "
        "both environments alike.",
    )
    parser.add_argument(
        "--recheck",
        type=int,
        default=0,
        help="run each differing sample this many more times in each environment, to tell a "
        "difference of the environments (the same every time) from a flaky one",
    )
    parser.add_argument(
        "--reuse",
        type=Path,
        help="a previous run's folder (perf/results/runs/env-differential-...): compare "
        "its verdicts again instead of evaluating (same --subset/--tasks/--mutants/--seed)",
    )
    args = parser.parse_args(argv)

    tasks = load_dataset()
    if args.tasks:
        ids = [t if "/" in t else f"BigCodeBench/{t}" for t in args.tasks.split(",")]
    elif args.subset == "hard":
        hard = json.loads((data_dir() / "bigcodebench" / "hard-task-ids.json").read_text())
        ids = [task_id for task_id in tasks if task_id in set(hard["task_ids"])]
    else:
        ids = list(tasks)
    rows = sample_rows(tasks, ids, args.mutants, args.seed)
    subset = "full" if args.tasks else args.subset
    envs = (("a", args.env_a), ("b", args.env_b))
    if args.reuse:
        folder = args.reuse
        samples = folder / "samples.jsonl"
        stored = [json.loads(text)["solution"] for text in samples.read_text().splitlines()]
        if stored != [row["solution"] for row in rows]:
            raise SystemExit(f"{samples} was made with other --subset/--tasks/--mutants/--seed")
        verdicts = {name: _read(folder / name, samples.stem) for name, _ in envs}
    else:
        folder = run_dir("env-differential")
        samples = folder / "samples.jsonl"
        write_jsonl(samples, [{"task_id": r["task_id"], "solution": r["solution"]} for r in rows])
        verdicts = {
            name: evaluate(env, samples, folder / name, subset, args.timeout_per_task)
            for name, env in envs
        }
    seen: dict[str, int] = {}
    differences = []
    for row in rows:
        index = seen.get(row["task_id"], 0)
        seen[row["task_id"]] = index + 1
        a = verdicts["a"][row["task_id"]][index]
        b = verdicts["b"][row["task_id"]][index]
        if a["status"] != b["status"]:
            differences.append(
                {
                    "task_id": row["task_id"],
                    "index": index,
                    "kind": row["kind"],
                    "solution": row["solution"],
                    "a": [a["status"], a.get("reason", "")[:300]],
                    "b": [b["status"], b.get("reason", "")[:300]],
                }
            )
    if args.recheck and differences:
        recheck(differences, envs, folder, args.recheck, args.timeout_per_task)
    report = {
        "env_a": str(args.env_a),
        "env_b": str(args.env_b),
        "timeout_per_task": args.timeout_per_task,
        "samples": len(rows),
        "canonical": sum(1 for r in rows if r["kind"] == "canonical"),
        "differences": differences,
    }
    path = write_result("env-differential", report)
    print(f"{len(rows)} samples ({report['canonical']} canonical), {len(differences)} differ")
    for item in differences:
        where = f"{item['task_id']}#{item['index']} {item['kind']}"
        print(f"  {where}: A {item['a'][0]}, B {item['b'][0]}")
        print(f"      A: {item['a'][1][:150]}")
        print(f"      B: {item['b'][1][:150]}")
        if "rechecked" in item:
            again = item["rechecked"]
            print(f"      again: A {again['a']}, B {again['b']}: {item['verdict']}")
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
