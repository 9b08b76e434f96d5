"""Sanitizer recovery, measured by execution: do the sanitized programs still pass the tests?

For every BigCodeBench task the canonical program is dressed up as a chat answer (cycling
through the answer styles of passbench.stages.sanitize.wrappers: prose, thinking sections, decoy
drafts, usage and test blocks, unfenced code, CRLF...), sanitized as `passbench sanitize` does
for the Complete split, and the sanitized program alone is run against the task's tests in the
real sandbox, uncalibrated (--no-calibrated: nothing of the prompt is added back, so the
sanitizer must have kept every import and helper). The ground truth runs through the same
Evaluator. Reported:

    recovery rate = tasks whose sanitized program passes and whose ground truth passes
                    / tasks whose ground truth passes

with the tasks that the sanitizer lost, by answer style. Needs the BigCodeBench evaluation
environment (`passbench env create bigcodebench`).

    .venv/bin/python perf/sanitizer_recovery.py                 # all 1,140 tasks
    .venv/bin/python perf/sanitizer_recovery.py --subset hard   # the 148 hard ones
    .venv/bin/python perf/sanitizer_recovery.py --tasks 0-49

Writes perf/results/sanitizer_recovery[-hard].json (and a dated copy).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import data_dir, machine_facts, parse_task_ids, run_dir, write_result

from passbench.core.progress import NullProgress
from passbench.core.settings import paths_from
from passbench.stages.benchmarks import get_benchmark, load_benchmark
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.sanitize import sanitize
from passbench.stages.sanitize.wrappers import WRAPPERS, wrap_answer


class _Dots(NullProgress):
    """Prints a line per stage and a dot per hundred programs: enough to see it is alive."""

    def start(self, total: int, description: str) -> None:
        self._done = 0
        print(f"{description}: {total} programs", flush=True)

    def advance(self, n: int = 1, *, info: str = "") -> None:
        before, self._done = self._done, self._done + n
        if before // 100 != self._done // 100:
            print(f"  {self._done}", flush=True)

    def warn(self, message: str) -> None:
        print(f"warning: {message}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subset", default="full", choices=("full", "hard"))
    parser.add_argument("--tasks", help="Task numbers, e.g. 0-49 or 3,7,12 (default: all).")
    parser.add_argument("--workers", type=int, default=0, help="Sandbox workers (0: the cores).")
    args = parser.parse_args()
    facts = machine_facts()  # before the run: its load average is the other work's
    begun = time.monotonic()

    paths = paths_from(os.environ, data_dir())
    loaded = load_benchmark(
        "bigcodebench", subset=args.subset, data_dir=paths.data_dir, cache_dir=paths.cache_dir
    )
    bench = get_benchmark("bigcodebench")
    ids = [task.task_id for task in loaded]
    chosen = set(parse_task_ids(args.tasks, ids)) if args.tasks else set(ids)
    tasks = [task for task in loaded if task.task_id in chosen]

    folder = run_dir("sanitizer-recovery")
    samples_path = folder / "wrapped-sanitized.jsonl"
    styles: dict[str, str] = {}
    not_extracted: list[str] = []
    started = time.monotonic()
    with open(samples_path, "w", encoding="utf-8") as handle:
        for task, style in zip(tasks, itertools.cycle(WRAPPERS), strict=False):
            prompt = task.prompts["complete"]
            answer = wrap_answer(
                bench.canonical_code(task), style, entry_point=task.entry_point, prompt=prompt
            )
            result = sanitize(answer, task.entry_point, prompt=prompt)
            styles[task.task_id] = style
            if not result.ok:
                not_extracted.append(task.task_id)
            row = {"task_id": task.task_id, "solution": result.code, "raw_solution": answer}
            handle.write(json.dumps(row) + "\n")
    sanitize_s = time.monotonic() - started

    settings = EvaluateSettings(
        benchmark="bigcodebench",
        subset=args.subset,
        split="complete",
        task_ids=tuple(task.task_id for task in tasks),
        calibrated=False,
        pass_k=(1,),
        workers=args.workers,
    )
    evaluator = Evaluator(settings, paths, _Dots())
    outcome = evaluator.evaluate_samples(samples_path, folder)
    assert outcome.ground_truth is not None
    truth = outcome.ground_truth.tasks
    verdicts = json.loads(outcome.eval_results_path.read_text(encoding="utf-8"))["eval"]
    sample_pass = {task_id: entries[0]["status"] == "pass" for task_id, entries in verdicts.items()}
    gt_pass = {task_id: entry["status"] == "pass" for task_id, entry in truth.items()}

    gt_passing = [task_id for task_id in sample_pass if gt_pass.get(task_id)]
    recovered = [task_id for task_id in gt_passing if sample_pass[task_id]]
    lost = [task_id for task_id in gt_passing if not sample_pass[task_id]]
    per_style: dict[str, dict[str, int]] = {}
    for task_id in gt_passing:
        entry = per_style.setdefault(styles[task_id], {"tasks": 0, "recovered": 0})
        entry["tasks"] += 1
        entry["recovered"] += int(sample_pass[task_id])
    payload: dict[str, Any] = {
        "what": "canonical programs wrapped as chat answers, sanitized, run uncalibrated",
        "subset": args.subset,
        "dataset_version": loaded.version,
        "tasks": len(tasks),
        "gt_passing": len(gt_passing),
        "gt_pass_rate": len(gt_passing) / len(sample_pass),
        "sanitized_passing": sum(sample_pass.values()),
        "sanitized_pass_rate": sum(sample_pass.values()) / len(sample_pass),
        "recovered": len(recovered),
        "recovery_rate": len(recovered) / len(gt_passing) if gt_passing else None,
        "lost": [
            {
                "task_id": task_id,
                "style": styles[task_id],
                "extracted": task_id not in not_extracted,
                "reason": verdicts[task_id][0]["reason"],
            }
            for task_id in lost
        ],
        "passing_though_ground_truth_fails": [
            task_id for task_id in sample_pass if sample_pass[task_id] and not gt_pass.get(task_id)
        ],
        "per_style": dict(sorted(per_style.items())),
        "styles_used": dict(Counter(styles.values())),
        "sanitize_s": round(sanitize_s, 2),
        "isolation": outcome.isolation.value,
        "run_dir": str(folder),
        "wall_s": round(time.monotonic() - begun, 1),
        "machine": facts,
    }
    name = "sanitizer_recovery" + ("-hard" if args.subset == "hard" else "")
    path = write_result(name, payload)
    print(
        f"{len(tasks)} tasks; ground truth passes {len(gt_passing)}; sanitized programs pass "
        f"{payload['sanitized_passing']}; recovery {len(recovered)}/{len(gt_passing)} = "
        f"{payload['recovery_rate']:.4f}"
    )
    for item in payload["lost"]:
        print(f"  lost {item['task_id']} ({item['style']}): {item['reason'][:100]}")
    print(f"Wrote {Path(path)}")


if __name__ == "__main__":
    main()
