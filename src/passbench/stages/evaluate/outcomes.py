"""What an evaluation returns: the ground truth, and the outcome of a run of samples."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passbench.core.records import ExecResult, Isolation, Program
from passbench.stages.results import ground_truth_entry
from passbench.stages.results import task_order as _task_order


@dataclass(frozen=True)
class GroundTruth:
    """Per-task ground-truth verdicts and test durations."""

    tasks: Mapping[str, Mapping[str, Any]]  # task id -> {status, duration_s, reason, category}

    @classmethod
    def from_results(
        cls,
        programs: Sequence[Program],
        results: Mapping[str, ExecResult],
        fields: Callable[[ExecResult], Mapping[str, Any]] | None = None,
    ) -> GroundTruth:
        """The canonical programs' verdicts, by task; `fields`: what the benchmark reads
        from a verdict beyond pass/fail (SWE-bench: the environment it ran in), added to
        each task's entry as to a sample's."""
        return cls(
            {
                program.task_id: {
                    **(fields(results[program.key]) if fields is not None else {}),
                    **ground_truth_entry(results[program.key]),
                }
                for program in programs
            }
        )

    @property
    def pass_rate(self) -> float:
        if not self.tasks:
            return float("nan")
        passed = sum(1 for entry in self.tasks.values() if entry["status"] == "pass")
        return passed / len(self.tasks)

    @property
    def failed_tasks(self) -> list[str]:
        return sorted(
            (task for task, entry in self.tasks.items() if entry["status"] != "pass"),
            key=_task_order,
        )

    def expected_time(self, task_id: str) -> float | None:
        entry = self.tasks.get(task_id)
        if entry is None or entry["status"] != "pass":
            return None
        return float(entry["duration_s"])

    def failures(self) -> dict[str, dict[str, Any]]:
        """Why each failing canonical solution failed (inspect names environment gaps from
        it: `gt_failures` in the pass@k file)."""
        return {
            task: {
                "category": self.tasks[task].get("category"),
                "reason": str(self.tasks[task].get("reason", ""))[:500],
            }
            for task in self.failed_tasks
        }


@dataclass(frozen=True)
class EvaluationOutcome:
    eval_results_path: Path
    pass_at_k_path: Path
    pass_at_k: Mapping[str, float]
    n_tasks: int
    n_samples: int
    missing_tasks: tuple[str, ...]
    ground_truth: GroundTruth | None
    isolation: Isolation
    reused: int  # verdicts taken from the journal instead of re-running
    # a benchmark's scores beside pass@k (CWEval: func@k, func-sec@k, secure_given_functional)
    extra_scores: Mapping[str, Any] = field(default_factory=dict)
    # tasks left out of every score, with why (CWEval: references failing the self-check)
    quarantined: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # tasks with samples that the benchmark's version excluded from the release it corrects
    excluded_tasks: tuple[str, ...] = ()
    # --runs N: the pass@k file's `stability` block (flaky samples, flaky rate, bounds)
    stability: Mapping[str, Any] | None = None
    # --epochs N: pass@1 per epoch, their mean and interval (the pass@k file's `epochs`)
    epochs: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class GroundTruthOutcome:
    path: Path
    ground_truth: GroundTruth
    isolation: Isolation
    # --runs N: ground_truth.json's `stability` block (unstable references, quarantined)
    stability: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SampleVerdicts:
    """The verdicts of a run of samples, one per sample in order, with the result-file fields
    a benchmark's style adds to each (EvalPlus's `base_status`, ...)."""

    verdicts: list[tuple[ExecResult, dict[str, Any]]]
    ground_truth: GroundTruth | None  # None when the ground truth was not checked
    isolation: Isolation  # the weakest any of them (ground truth included) ran under
    reused: int
