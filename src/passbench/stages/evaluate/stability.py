"""Repeated execution: `evaluate --runs N` for samples and for the ground truth.

Every run after the first has a journal of its own (`.<stem>.run<r>.journal.sqlite`), so each
run really executes every program again, and an interrupted repetition resumes where it
stopped. The first run is the plain evaluation (its journal, its verdicts): pass@k counts it
(passbench.core.stability says why). The ground truth's stability run records the references
that did not pass in every run in the cache, keyed like the ground-truth cache (dataset,
environment, limits), and every later evaluation of samples on that setup quarantines their
tasks (left out of pass@k, named in the pass@k file with the denominator used).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from passbench.core.records import Isolation, Sample, Task
from passbench.core.samplefile import write_json_atomic
from passbench.core.stability import flaky_summary, is_flaky, verdict_counts
from passbench.stages.evaluate.execution import Execution, weakest
from passbench.stages.evaluate.outcomes import GroundTruth, SampleVerdicts
from passbench.stages.evaluate.style import EvaluationStyle


def journal_for_run(first: Path, run: int) -> Path:
    """The journal of run `run` (1-based): the first run's own for run 1."""
    if run == 1:
        return first
    return first.with_name(first.name.replace(".journal.sqlite", f".run{run}.journal.sqlite"))


def repeat_sample_runs(
    style: EvaluationStyle,
    samples: Sequence[Sample],
    codes: Sequence[str],
    tasks: Mapping[str, Task],
    first_journal: Path,
    runs: int,
) -> list[SampleVerdicts]:
    """Runs 2..`runs` of every sample (the first is the caller's)."""
    return [
        style.verdicts(samples, codes, tasks, journal_for_run(first_journal, run))
        for run in range(2, runs + 1)
    ]


def add_run_counts(
    entries: Sequence[dict[str, Any]],
    first: SampleVerdicts,
    repeats: Sequence[SampleVerdicts],
    left_out: Collection[str] = (),
) -> tuple[dict[str, Any], Isolation]:
    """Give each sample entry its verdict counts over every run (`runs`) and `flaky`; return
    the pass@k file's `stability` block and the weakest isolation of the repeats.

    The block is over the samples pass@k scores: the tasks in `left_out` (quarantined) keep
    their counts in their entries but stay out of the flaky rate and the pass@1 bounds, which
    are then comparable with the run's pass@1."""
    rows = []
    for position, entry in enumerate(entries):
        statuses = [first.verdicts[position][0].status]
        statuses += [repeat.verdicts[position][0].status for repeat in repeats]
        counts = verdict_counts(statuses)
        entry["runs"] = counts
        entry["flaky"] = is_flaky(counts)
        task_id = str(entry["task_id"])
        if task_id not in left_out:
            rows.append((task_id, int(entry.get("sample_index", 0)), statuses[0], counts))
    isolation = weakest(first.isolation, *(repeat.isolation for repeat in repeats))
    return flaky_summary(rows, 1 + len(repeats)), isolation


# ---- the ground truth ----------------------------------------------------------------------


def repeat_ground_truth(
    rerun: Callable[[Path], tuple[GroundTruth, Isolation]], first_journal: Path, runs: int
) -> tuple[list[GroundTruth], Isolation]:
    """The reference solutions run `runs` times, each run with its own journal."""
    truths, isolations = [], []
    for run in range(1, runs + 1):
        truth, isolation = rerun(journal_for_run(first_journal, run))
        truths.append(truth)
        isolations.append(isolation)
    return truths, weakest(*isolations)


def reference_stability(truths: Sequence[GroundTruth]) -> dict[str, Any]:
    """The `stability` block of ground_truth.json: each task's verdict counts over the runs,
    the unstable tasks (passed in some runs, not in others: quarantined), and which tasks the
    scores of samples are computed over."""
    first = truths[0]
    counts = {
        task_id: verdict_counts(str(truth.tasks[task_id]["status"]) for truth in truths)
        for task_id in first.tasks
    }
    unstable = {task_id: c for task_id, c in counts.items() if is_flaky(c)}
    never = [task_id for task_id, c in counts.items() if not c.get("pass")]
    stable = len(counts) - len(unstable)
    return {
        "runs": len(truths),
        "unstable_tasks": unstable,
        "quarantined_tasks": list(unstable),
        "failing_in_every_run": never,
        "stable_pass_rate": (stable - len(never)) / stable if stable else None,
        "denominator": (
            f"{stable} of {len(counts)} tasks: samples of the {len(unstable)} unstable tasks are "
            "left out of pass@k (numerator and denominator) by every later evaluation on this "
            "dataset and environment"
        ),
    }


def quarantine_path(execution: Execution) -> Path:
    """Where the unstable references of this dataset, environment and limits are kept."""
    key = execution.verdict_fingerprint("reference-stability")
    return execution.cache_folder / f"unstable-references-{key[:32]}.json"


def save_quarantine(execution: Execution, stability: Mapping[str, Any]) -> Path:
    path = quarantine_path(execution)
    document = {
        "runs": stability["runs"],
        "unstable_tasks": stability["unstable_tasks"],
    }
    write_json_atomic(path, document)
    return path


def load_quarantine(execution: Execution) -> dict[str, dict[str, Any]]:
    """Tasks a stability run of the ground truth found unstable, with why (empty: none ran)."""
    path = quarantine_path(execution)
    if not path.is_file():
        return {}
    document = json.loads(path.read_text(encoding="utf-8"))
    runs = document.get("runs")
    return {
        str(task_id): {
            "category": "unstable_reference",
            "reason": (
                f"the reference solution did not pass consistently: {dict(counts)} over "
                f"{runs} runs (evaluate --ground-truth --runs)"
            ),
            "verdicts": dict(counts),
        }
        for task_id, counts in (document.get("unstable_tasks") or {}).items()
    }
