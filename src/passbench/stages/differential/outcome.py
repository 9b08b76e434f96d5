"""A sample's phases (base, plus) combined into one verdict, and EvalPlus's result fields."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from passbench.core.records import ExecResult
from passbench.stages.benchmarks.base import Phase


@dataclass(frozen=True)
class PhaseOutcome:
    """One phase's judged verdict on one sample."""

    phase: Phase
    result: ExecResult


def combine(key: str, outcomes: Sequence[PhaseOutcome]) -> ExecResult:
    """One verdict: "pass" when every phase passes; otherwise the first phase that did not
    (base before plus) gives the status, category and reason, as EvalPlus's `plus` verdict
    requires `base_status == plus_status == "pass"`."""
    results = [outcome.result for outcome in outcomes]
    failing = next((result for result in results if result.status != "pass"), None)
    first = failing or results[0]
    details: dict[str, str] = {}
    for result in results:
        details.update(result.details)
    return ExecResult(
        key=key,
        task_id=first.task_id,
        status=first.status,
        category=first.category,
        details=details,
        duration_s=sum(result.duration_s for result in results),
        wall_s=sum(result.wall_s for result in results),
        isolation=first.isolation,
        reason=first.reason,
        tests_run=sum(result.tests_run for result in results),
        stdout_tail=first.stdout_tail,
        network=any(result.network for result in results),
    )


def evalplus_fields(outcomes: Sequence[PhaseOutcome]) -> dict[str, Any]:
    """`base_status`, `plus_status`, `base_fail_tests`, `plus_fail_tests` as EvalPlus writes
    them: the failing input is `inputs[progress - 1]`, the last one judged (for a timeout, the
    last one that finished: EvalPlus's quirk, kept so its readers agree)."""
    fields: dict[str, Any] = {"plus_status": None, "plus_fail_tests": []}
    for outcome in outcomes:
        result = outcome.result
        name = outcome.phase.name
        fields[f"{name}_status"] = result.status
        done = result.inputs_done or 0
        failed: list[Any] = []
        if result.status != "pass" and done > 0:
            shown = outcome.phase.reported_inputs or outcome.phase.inputs
            failed = [shown[done - 1]]
        fields[f"{name}_fail_tests"] = failed
    return fields
