"""Run-to-run statistics: flaky verdicts across repeated executions, and pass@1 across epochs.

Pure functions over verdicts, shared by the evaluator (which writes them), inspect and compare
(which read them). docs/evaluate.md and docs/run.md say what each number means.

- **Flaky sample** (`evaluate --runs N`): a sample executed N times whose verdict is "pass" in
  some runs and not in others. Only pass / not-pass decides pass@k, so a sample that fails in
  some runs and times out in others is not flaky (its counts still show both).
- **Counted verdict**: pass@k counts each sample's *first* run, the run a plain `evaluate`
  makes. Repeating never moves the headline score away from the one-execution protocol the
  official tools use (and a resumed plain evaluation is the first run); the repeats say how
  far the score could move, as the bounds with every flaky sample failing or passing.
- **Epochs** (`run --epochs N`): N independent generations per task. Each epoch's pass@1 is
  computed on its own; the reported pass@1 is their mean, with a Student-t interval from the
  standard error of the per-epoch means (sd / sqrt(N), N - 1 degrees of freedom), clipped to
  [0, 1]. That
  interval is the run-to-run (generation) noise only: the tasks are the same in every epoch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from passbench.core.scoring import DEFAULT_CONFIDENCE, beta_quantile

#: Which run's verdict pass@k counts when samples are executed several times.
COUNTED_RUN = "first"


def verdict_counts(statuses: Iterable[str]) -> dict[str, int]:
    """How often each status occurred, in a stable order (pass, fail, timeout, others)."""
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    order = {"pass": 0, "fail": 1, "timeout": 2}
    return dict(sorted(counts.items(), key=lambda item: (order.get(item[0], 3), item[0])))


def is_flaky(counts: Mapping[str, int]) -> bool:
    """Whether a sample passed in some runs and not in others."""
    passed = counts.get("pass", 0)
    return 0 < passed < sum(counts.values())


@dataclass(frozen=True)
class FlakySample:
    task_id: str
    sample_index: int
    counts: Mapping[str, int]  # status -> runs


def flaky_summary(
    samples: Sequence[tuple[str, int, str, Mapping[str, int]]], runs: int
) -> dict[str, object]:
    """The `stability` block of a pass@k file from (task_id, sample_index, counted status,
    counts over every run) per sample: the flaky samples with their counts, the flaky rate
    (flaky samples / samples) and the pass@1 bounds with every flaky sample failing / passing.
    """
    flaky = [
        FlakySample(task_id, index, counts)
        for task_id, index, _, counts in samples
        if is_flaky(counts)
    ]
    flaky_keys = {(s.task_id, s.sample_index) for s in flaky}
    per_task: dict[str, list[tuple[bool, bool]]] = {}
    for task_id, index, status, _ in samples:
        unsure = (task_id, index) in flaky_keys
        per_task.setdefault(task_id, []).append((status == "pass" and not unsure, unsure))
    low = _mean(sum(ok for ok, _ in rows) / len(rows) for rows in per_task.values())
    high = _mean(sum(ok or unsure for ok, unsure in rows) / len(rows) for rows in per_task.values())
    return {
        "runs": runs,
        "counted_run": COUNTED_RUN,
        "n_samples": len(samples),
        "flaky_rate": len(flaky) / len(samples) if samples else None,
        "flaky_tasks": sorted({s.task_id for s in flaky}),
        "flaky_samples": [
            {"task_id": s.task_id, "sample_index": s.sample_index, "verdicts": dict(s.counts)}
            for s in flaky
        ],
        "pass@1_if_flaky_fail": low,
        "pass@1_if_flaky_pass": high,
    }


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided Student-t critical value: P(|T| <= t) = confidence with `df` degrees of
    freedom (from the incomplete beta function, so no scipy is needed)."""
    alpha = 1.0 - confidence
    x = beta_quantile(alpha, df / 2.0, 0.5)  # I_x(df/2, 1/2) = P(|T| > t), x = df/(df+t^2)
    return math.sqrt(df * (1.0 - x) / x)


@dataclass(frozen=True)
class EpochScore:
    """pass@1 across epochs: each epoch's value, their mean and the t interval of the mean."""

    per_epoch: tuple[float, ...]
    mean: float
    stderr: float | None  # None with one epoch
    low: float | None
    high: float | None
    confidence: float

    def to_json(self) -> dict[str, object]:
        return {
            "epochs": len(self.per_epoch),
            "pass@1_per_epoch": list(self.per_epoch),
            "pass@1_mean": self.mean,
            "pass@1_stderr": self.stderr,
            "pass@1_ci": [self.low, self.high] if self.low is not None else None,
            "confidence": self.confidence,
            "method": "student-t over per-epoch pass@1 (sd / sqrt(epochs)), clipped to [0, 1]",
        }


def epoch_score(per_epoch: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> EpochScore:
    """The mean of the per-epoch pass@1 values and its Student-t confidence interval."""
    if not per_epoch:
        raise ValueError("no epochs")
    mean = statistics.fmean(per_epoch)
    if len(per_epoch) < 2:
        return EpochScore(tuple(per_epoch), mean, None, None, None, confidence)
    stderr = statistics.stdev(per_epoch) / math.sqrt(len(per_epoch))
    half = t_quantile(confidence, len(per_epoch) - 1) * stderr
    # pass@1 lies in [0, 1]: with few epochs the t band can reach past either end
    low, high = max(0.0, mean - half), min(1.0, mean + half)
    return EpochScore(tuple(per_epoch), mean, stderr, low, high, confidence)


def epoch_of(sample_index: int, samples_per_epoch: int) -> int:
    """Epoch e holds the sample indices [e * n, (e + 1) * n): `run --epochs` asks n samples per
    task per epoch, numbered on from the previous epoch's."""
    return sample_index // samples_per_epoch


def per_epoch_pass_at_1(
    samples: Iterable[tuple[str, int, bool]], epochs: int, samples_per_epoch: int
) -> list[float]:
    """Each epoch's pass@1 from (task_id, sample_index, passed): the mean over the epoch's tasks
    of the share of its samples that passed."""
    tables: list[dict[str, list[int]]] = [{} for _ in range(epochs)]
    for task_id, index, passed in samples:
        epoch = epoch_of(index, samples_per_epoch)
        if epoch >= epochs:
            continue
        n_c = tables[epoch].setdefault(task_id, [0, 0])
        n_c[0] += 1
        n_c[1] += passed
    return [
        sum(c / n for n, c in table.values()) / len(table) if table else math.nan
        for table in tables
    ]
