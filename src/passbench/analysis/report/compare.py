"""Comparing runs: per-task agreement, a paired difference in pass@1 and whether it is noise.

Two runs are compared on the tasks both evaluated. For each task, a run's *pass rate* is the
share of its samples that passed (its pass@1 estimate), so runs with different numbers of
samples compare fairly. Then:

- diff = pass@1(B) - pass@1(A), the mean per-task difference, with a paired percentile
  bootstrap interval (tasks resampled, both runs' values kept together);
- McNemar's exact test on solved / unsolved per task. A task counts as *solved* by a run when
  more than half of its samples pass (rule "majority"; with one sample, that sample's verdict),
  or with rule "any" when at least one does. Ties at exactly half are unsolved under
  "majority". With several samples per task the bootstrap uses all the information and is the
  primary result; McNemar is the classical check on the binary outcome;
- won / lost / tied: tasks where B's pass rate is higher / lower / equal.

The difference is called distinguishable from noise only when both agree: the interval
excludes zero and McNemar's p is below 1 - confidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from passbench.analysis.report.analysis import Options
from passbench.core import scoring
from passbench.stages.results import RunResults

RULES = ("majority", "any")


@dataclass(frozen=True)
class TaskAgreement:
    task_id: str
    rate_a: float
    rate_b: float
    solved_a: bool
    solved_b: bool


@dataclass(frozen=True)
class PairComparison:
    a: str
    b: str
    tasks_both: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    pass_at_1_a: float
    pass_at_1_b: float
    diff: float
    diff_ci: scoring.Interval
    mcnemar_p: float
    rule: str
    solved_both: int
    solved_only_a: int
    solved_only_b: int
    solved_neither: int
    won_b: int  # tasks where B's pass rate is higher
    won_a: int
    tied: int
    distinguishable: bool
    verdict: str
    tasks: tuple[TaskAgreement, ...]


def _solved(passed: int, n: int, rule: str) -> bool:
    if rule == "any":
        return passed > 0
    return 2 * passed > n


def compare_pair(
    run_a: RunResults,
    run_b: RunResults,
    options: Options | None = None,
    rule: str = "majority",
    names: tuple[str, str] | None = None,
) -> PairComparison:
    """Compare two runs on the tasks both have (see the module docstring)."""
    options = options or Options()
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: use {' or '.join(RULES)}")
    name_a, name_b = names or (run_a.name, run_b.name)
    counts_a, counts_b = run_a.counts(), run_b.counts()
    common = [task for task in counts_a if task in counts_b]
    common.sort(key=_task_order)
    agreements = []
    for task_id in common:
        n_a, c_a = counts_a[task_id]
        n_b, c_b = counts_b[task_id]
        agreements.append(
            TaskAgreement(
                task_id, c_a / n_a, c_b / n_b, _solved(c_a, n_a, rule), _solved(c_b, n_b, rule)
            )
        )
    rates_a = [t.rate_a for t in agreements]
    rates_b = [t.rate_b for t in agreements]
    size = len(agreements)
    p_a = sum(rates_a) / size if size else math.nan
    p_b = sum(rates_b) / size if size else math.nan
    interval = scoring.bootstrap_means(
        {"diff": [b - a for a, b in zip(rates_a, rates_b, strict=True)]},
        resamples=options.resamples,
        confidence=options.confidence,
        seed=options.seed,
        engine=options.engine,
    )["diff"]
    only_a_solved = sum(1 for t in agreements if t.solved_a and not t.solved_b)
    only_b_solved = sum(1 for t in agreements if t.solved_b and not t.solved_a)
    p_value = scoring.mcnemar_exact(only_a_solved, only_b_solved)
    alpha = 1.0 - options.confidence
    excludes_zero = size > 0 and (interval.low > 0 or interval.high < 0)
    significant = p_value < alpha
    diff = p_b - p_a
    return PairComparison(
        a=name_a,
        b=name_b,
        tasks_both=size,
        only_a=tuple(sorted((t for t in counts_a if t not in counts_b), key=_task_order)),
        only_b=tuple(sorted((t for t in counts_b if t not in counts_a), key=_task_order)),
        pass_at_1_a=p_a,
        pass_at_1_b=p_b,
        diff=diff,
        diff_ci=interval,
        mcnemar_p=p_value,
        rule=rule,
        solved_both=sum(1 for t in agreements if t.solved_a and t.solved_b),
        solved_only_a=only_a_solved,
        solved_only_b=only_b_solved,
        solved_neither=sum(1 for t in agreements if not t.solved_a and not t.solved_b),
        won_b=sum(1 for t in agreements if t.rate_b > t.rate_a),
        won_a=sum(1 for t in agreements if t.rate_a > t.rate_b),
        tied=sum(1 for t in agreements if t.rate_a == t.rate_b),
        distinguishable=excludes_zero and significant,
        verdict=_verdict(name_a, name_b, diff, interval, p_value, options.confidence, size),
        tasks=tuple(agreements),
    )


def _verdict(
    name_a: str,
    name_b: str,
    diff: float,
    interval: scoring.Interval,
    p_value: float,
    confidence: float,
    size: int,
) -> str:
    if size == 0:
        return f"{name_a} and {name_b} share no tasks: nothing to compare."
    level = f"{round(confidence * 100)}%"
    points = f"{abs(100 * diff):.1f} points"
    evidence = (
        f"{level} CI of the difference [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}] "
        f"points, McNemar p = {p_value:.3g}"
    )
    excludes_zero = interval.low > 0 or interval.high < 0
    significant = p_value < 1.0 - confidence
    higher, lower = (name_b, name_a) if diff > 0 else (name_a, name_b)
    if excludes_zero and significant:
        return f"{higher} beats {lower} by {points}: distinguishable from noise ({evidence})."
    if not excludes_zero and not significant:
        return (
            f"No distinguishable difference: {points} is within noise ({evidence})."
            if diff
            else f"Identical pass@1 ({evidence})."
        )
    return (
        f"Borderline: {higher} is ahead by {points}, but the two tests disagree ({evidence}); "
        "treat the difference as not established."
    )


def _task_order(task_id: str) -> tuple[str, int, str]:
    prefix, _, number = task_id.rpartition("/")
    return (prefix, int(number), "") if number.isdigit() else (task_id, -1, task_id)


def compare_all(
    runs: Sequence[RunResults], options: Options | None = None, rule: str = "majority"
) -> list[PairComparison]:
    """Every pair (i < j) of runs, in the order given; names made unique when they clash."""
    names = unique_names(runs)
    return [
        compare_pair(runs[i], runs[j], options, rule, (names[i], names[j]))
        for i in range(len(runs))
        for j in range(i + 1, len(runs))
    ]


def unique_names(runs: Sequence[RunResults]) -> list[str]:
    """Run names, with the file stem added where two runs share a model name."""
    names = [run.name for run in runs]
    result = []
    for run, name in zip(runs, names, strict=True):
        if names.count(name) > 1:
            name = f"{name} ({run.path.name})"
        result.append(name)
    if len(set(result)) < len(result):
        result = [f"{name} #{i + 1}" for i, name in enumerate(result)]
    return result
