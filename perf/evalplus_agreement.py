"""Per-sample verdict agreement between passbench and EvalPlus 0.3.1 on HumanEval+ or MBPP+.

    python perf/evalplus_agreement.py --baseline-venv VENV [--dataset humaneval|mbpp]
        [--checkset DIR]
        [--reuse-evalplus EVAL_RESULTS.json] [--reuse-passbench EVAL_RESULTS.json]

Both tools evaluate the same sample file (built by perf/evalplus_checkset.py) with their
defaults (EvalPlus: `evalplus.evaluate --dataset humaneval|mbpp`; passbench: `evaluate
--benchmark humanevalplus|mbppplus`); for every sample the pair (base_status, plus_status) is
compared. Prints the agreement overall and per family, every disagreement with passbench's
reason, and writes a JSON report to perf/results/evalplus-agreement[-mbpp].json.
EvalPlus reads the shared dataset (uncompressed, through `HUMANEVAL_OVERRIDE_PATH` /
`MBPP_OVERRIDE_PATH`) and keeps its cache in a folder of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from _common import REPO_ROOT, RESULTS_DIR, data_dir
from _passbench import default_command

DEFAULT_CHECKSET = REPO_ROOT.parent / "baseline" / "evalplus-checkset"


#: `--dataset` -> (shared data file, its uncompressed name, EvalPlus's override variable,
#: passbench's benchmark)
DATASETS = {
    "humaneval": (
        "humaneval/HumanEvalPlus.jsonl.gz",
        "HumanEvalPlus-v0.1.10.jsonl",
        "HUMANEVAL_OVERRIDE_PATH",
        "humanevalplus",
    ),
    "mbpp": (
        "mbpp/MbppPlus-v0.2.0.jsonl.gz",
        "MbppPlus-v0.2.0.jsonl",
        "MBPP_OVERRIDE_PATH",
        "mbppplus",
    ),
}


def uncompressed(dataset: str = "humaneval") -> Path:
    """The dataset as plain JSONL: EvalPlus hashes the file's bytes (md5), and its published
    `hash` is that of the uncompressed release."""
    import gzip

    relpath, name, _, _ = DATASETS[dataset]
    target = RESULTS_DIR / "cache" / name
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        with gzip.open(data_dir() / relpath, "rb") as source:
            partial.write_bytes(source.read())
        partial.replace(target)
    return target


def run_evalplus(
    venv: Path, samples: Path, workdir: Path, parallel: int | None, dataset: str = "humaneval"
) -> Path:
    """`evalplus.evaluate` on a copy of `samples` in `workdir`; its result file."""
    workdir.mkdir(parents=True, exist_ok=True)
    copy = workdir / samples.name
    copy.write_bytes(samples.read_bytes())
    env = dict(os.environ)
    env[DATASETS[dataset][2]] = str(uncompressed(dataset))
    env["XDG_CACHE_HOME"] = str(workdir / "cache")
    argv = [str(venv / "bin" / "evalplus.evaluate"), "--dataset", dataset]
    argv += ["--samples", str(copy), "--i-just-wanna-run"]
    if parallel:
        argv += ["--parallel", str(parallel)]
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=workdir)
    return copy.with_name(copy.stem + "_eval_results.json")


def run_passbench(
    samples: Path, workdir: Path, workers: int | None, dataset: str = "humaneval"
) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [*default_command(), "evaluate", "--benchmark", DATASETS[dataset][3]]
    argv += ["--samples", str(samples), "--output-dir", str(workdir), "--no-resume"]
    if workers:
        argv += ["--workers", str(workers)]
    env = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir()))
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=REPO_ROOT)
    return workdir / (samples.stem + "_eval_results.json")


def verdicts(eval_results: Path) -> dict[str, list[dict[str, Any]]]:
    """task id -> its samples' entries, in sample-file order."""
    document = json.loads(eval_results.read_text())
    out: dict[str, list[dict[str, Any]]] = {}
    for task_id, entries in document["eval"].items():
        if entries and "sample_index" in entries[0]:
            entries = sorted(entries, key=lambda entry: entry["sample_index"])
        out[task_id] = entries
    return out


def compare(
    samples: Path,
    families: list[str],
    evalplus: dict[str, list[dict[str, Any]]],
    passbench: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    per_family: dict[str, Counter[str]] = defaultdict(Counter)
    disagreements: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    lines = samples.read_text().splitlines()
    for family, line in zip(families, lines, strict=True):
        task_id = json.loads(line)["task_id"]
        index = seen[task_id]
        seen[task_id] += 1
        ours = passbench[task_id][index]
        theirs = evalplus[task_id][index]
        pair_ours = (ours["base_status"], ours["plus_status"])
        pair_theirs = (theirs["base_status"], theirs["plus_status"])
        agree = pair_ours == pair_theirs
        per_family[family]["agree" if agree else "differ"] += 1
        if not agree:
            disagreements.append(
                {
                    "task_id": task_id,
                    "index": index,
                    "family": family,
                    "evalplus": pair_theirs,
                    "passbench": pair_ours,
                    "passbench_reason": ours.get("reason", ""),
                    "evalplus_fail_tests": [
                        len(theirs.get("base_fail_tests", [])),
                        len(theirs.get("plus_fail_tests", [])),
                    ],
                }
            )
    total = sum(sum(counts.values()) for counts in per_family.values())
    agreed = sum(counts["agree"] for counts in per_family.values())
    return {
        "samples": total,
        "agreed": agreed,
        "agreement": agreed / total if total else 0.0,
        "families": {
            family: {"samples": sum(c.values()), "agreed": c["agree"]}
            for family, c in sorted(per_family.items())
        },
        "disagreements": disagreements,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-venv", type=Path, help="EvalPlus 0.3.1's venv")
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="humaneval")
    parser.add_argument("--checkset", type=Path, help=f"default: {DEFAULT_CHECKSET} (+ -mbpp)")
    parser.add_argument("--reuse-evalplus", type=Path, help="an EvalPlus result file to reuse")
    parser.add_argument("--reuse-passbench", type=Path, help="a passbench result file to reuse")
    parser.add_argument("--parallel", type=int, help="EvalPlus workers (default: its own)")
    parser.add_argument("--workers", type=int, help="passbench workers (default: its own)")
    parser.add_argument(
        "--report", type=Path, help="default: results/evalplus-agreement[-mbpp].json"
    )
    args = parser.parse_args(argv)
    suffix = "" if args.dataset == "humaneval" else f"-{args.dataset}"
    checkset = args.checkset or DEFAULT_CHECKSET.with_name(DEFAULT_CHECKSET.name + suffix)
    args.report = args.report or RESULTS_DIR / f"evalplus-agreement{suffix}.json"

    samples = checkset / "checkset.jsonl"
    families = json.loads((checkset / "families.json").read_text())
    with tempfile.TemporaryDirectory(prefix="evalplus-agreement-") as scratch:
        work = Path(scratch)
        if args.reuse_evalplus:
            theirs = args.reuse_evalplus
        elif args.baseline_venv:
            theirs = run_evalplus(
                args.baseline_venv, samples, work / "evalplus", args.parallel, args.dataset
            )
        else:
            parser.error("give --baseline-venv or --reuse-evalplus")
        ours = args.reuse_passbench or run_passbench(
            samples, work / "passbench", args.workers, args.dataset
        )
        report = compare(samples, families, verdicts(theirs), verdicts(ours))

    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=1))
    print(f"{'family':32} {'samples':>8} {'agree':>8}")
    for family, counts in report["families"].items():
        share = counts["agreed"] / counts["samples"]
        print(f"{family:32} {counts['samples']:8d} {share:8.2%}")
    print(
        f"{'all':32} {report['samples']:8d} {report['agreement']:8.2%}"
        f"  ({report['samples'] - report['agreed']} disagreements)"
    )
    for item in report["disagreements"]:
        print(
            f"  {item['task_id']}#{item['index']} {item['family']}: evalplus {item['evalplus']}"
            f" passbench {item['passbench']}: {item['passbench_reason'][:150]}"
        )
    print(f"report: {args.report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
