"""Evaluate: samples -> programs -> sandbox -> ExecResults -> result files.

Also the ground truth: the canonical solutions run through the same path, which gives the
ground-truth pass rate and the per-task timings the official time limits are derived from.
Verdicts are journaled as they arrive, so an interrupted run resumes without re-executing
finished samples; the result files are written once, atomically, at the end.

    settings.py    what one evaluation depends on; the official time limits
    execution.py   the sandbox programs run in and the journal verdicts go to (the one place
                   an evaluation touches a sandbox)
    style.py       how a benchmark's verdicts are reached, one interface for:
    tested.py        programs that carry their tests (BigCodeBench, HumanEval's check())
    judged.py        outputs judged on the host against expected outputs (HumanEval(+))
    outcomes.py    the ground truth and what an evaluation returns
    evaluator.py   the Evaluator: resolves the inputs, drives the style, writes result files
"""

from passbench.stages.evaluate.evaluator import Evaluator
from passbench.stages.evaluate.execution import weakest
from passbench.stages.evaluate.outcomes import EvaluationOutcome, GroundTruth, GroundTruthOutcome
from passbench.stages.evaluate.settings import (
    OFFICIAL_FAILED_GT_TIME_S,
    OFFICIAL_MIN_TIME_LIMIT_S,
    EvaluateSettings,
    TimeLimits,
)

__all__ = [
    "OFFICIAL_FAILED_GT_TIME_S",
    "OFFICIAL_MIN_TIME_LIMIT_S",
    "EvaluateSettings",
    "EvaluationOutcome",
    "Evaluator",
    "GroundTruth",
    "GroundTruthOutcome",
    "TimeLimits",
    "weakest",
]
