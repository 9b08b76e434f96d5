"""Between-run noise beside the difference between two models (`passbench compare`).

The paired bootstrap of compare.py answers "would the difference hold on other tasks like
these?" (task sampling). Two more sources of noise are measured when the runs carry them, and
are reported apart from it:

- **Generation noise** (`run --epochs N`): a model asked again gives other answers. Each run's
  pass@1 is computed per epoch on the tasks both runs share; the difference of the two epoch
  means has the standard error sqrt(se_A^2 + se_B^2) (se = sd of the per-epoch values /
  sqrt(epochs)), and its noise band is +/- t x se with Welch-Satterthwaite degrees of freedom.
  With epochs in only one run, that run's epoch-to-epoch sd stands for both (the other run is
  one draw: se = sd x sqrt(1/N + 1), N - 1 degrees of freedom). The difference *exceeds the
  run-to-run noise* when it lies outside that band.
- **Execution noise** (`evaluate --runs N`): flaky verdicts. Each run's pass@1 can move between
  its two bounds (every flaky sample failing / passing); a difference smaller than the two
  spans together could be reversed by re-executing the same samples.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from passbench.analysis.report.compare import PairComparison
from passbench.core.stability import per_epoch_pass_at_1, t_quantile
from passbench.stages.results import RunResults


@dataclass(frozen=True)
class RunNoise:
    """What one run says about its own run-to-run noise."""

    per_epoch: tuple[float, ...]  # pass@1 per epoch on the shared tasks; () without epochs
    flaky_span: float | None  # pass@1 if flaky pass - if flaky fail; None without --runs

    @property
    def epochs(self) -> int:
        return len(self.per_epoch)


def run_noise(run: RunResults, tasks: Collection[str]) -> RunNoise:
    """The run's epochs (pass@k file `epochs`), rescored on `tasks`, and its flaky span."""
    document = run.pass_at_k_file or {}
    per_epoch: tuple[float, ...] = ()
    block = document.get("epochs")
    if isinstance(block, Mapping) and int(block.get("epochs", 1)) > 1:
        rows = [
            (task_id, sample.sample_index, sample.passed)
            for task_id in tasks
            for sample in run.tasks.get(task_id, ())
        ]
        per_epoch = tuple(
            per_epoch_pass_at_1(rows, int(block["epochs"]), int(block["samples_per_epoch"]))
        )
    span = None
    stability = document.get("stability")
    if isinstance(stability, Mapping):
        low, high = stability.get("pass@1_if_flaky_fail"), stability.get("pass@1_if_flaky_pass")
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            span = float(high) - float(low)
    return RunNoise(per_epoch, span)


@dataclass(frozen=True)
class PairNoise:
    diff: float  # B - A (on epoch means when epochs are available, else compare's)
    generation_band: float | None  # half-width of the run-to-run noise band; None: unknown
    generation_exceeded: bool | None
    execution_span: float | None  # how far flaky verdicts could move the difference
    execution_exceeded: bool | None
    confidence: float
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {
            "diff": self.diff,
            "generation_noise": self.generation_band,
            "exceeds_generation_noise": self.generation_exceeded,
            "execution_noise": self.execution_span,
            "exceeds_execution_noise": self.execution_exceeded,
            "confidence": self.confidence,
            "summary": self.summary,
        }


def _stderr(values: tuple[float, ...]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values))


def _band(a: RunNoise, b: RunNoise, confidence: float) -> float | None:
    with_epochs = [noise for noise in (a, b) if noise.epochs > 1]
    if not with_epochs:
        return None
    if len(with_epochs) == 1:
        only = with_epochs[0]
        sd = statistics.stdev(only.per_epoch)
        return t_quantile(confidence, only.epochs - 1) * sd * math.sqrt(1 / only.epochs + 1)
    se_a, se_b = _stderr(a.per_epoch), _stderr(b.per_epoch)
    se = math.sqrt(se_a**2 + se_b**2)
    if se == 0.0:
        return 0.0
    df = se**4 / (se_a**4 / (a.epochs - 1) + se_b**4 / (b.epochs - 1))
    return t_quantile(confidence, max(1, math.floor(df))) * se


def pair_noise(pair: PairComparison, a: RunNoise, b: RunNoise, confidence: float) -> PairNoise:
    diff = pair.diff
    if a.epochs > 1 and b.epochs > 1:
        diff = statistics.fmean(b.per_epoch) - statistics.fmean(a.per_epoch)
    band = _band(a, b, confidence)
    generation = None if band is None else abs(diff) > band
    span = None
    if a.flaky_span is not None or b.flaky_span is not None:
        span = (a.flaky_span or 0.0) + (b.flaky_span or 0.0)
    execution = None if span is None else abs(diff) > span
    return PairNoise(
        diff, band, generation, span, execution, confidence, _summary(diff, band, span, confidence)
    )


def _summary(diff: float, band: float | None, span: float | None, confidence: float) -> str:
    points = f"{100 * abs(diff):.1f} points"
    parts = []
    if band is None:
        parts.append("run-to-run noise unknown (no epochs: `run --epochs N` measures it)")
    else:
        level = f"{round(100 * confidence)}%"
        relation = "exceeds" if abs(diff) > band else "is within"
        parts.append(
            f"the difference of {points} {relation} the run-to-run noise "
            f"(+/-{100 * band:.1f} points, {level}, across epochs)"
        )
    if span is not None:
        relation = "larger" if abs(diff) > span else "no larger"
        parts.append(
            f"it is {relation} than what flaky verdicts could move ({100 * span:.1f} points)"
        )
    return "; ".join(parts) + "."


def noise_for_pairs(
    runs: list[RunResults], pairs: list[PairComparison], confidence: float
) -> list[PairNoise]:
    """`pair_noise` for every pair `compare_all` made (i < j, in the order given)."""
    indices = [(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    result = []
    for (i, j), pair in zip(indices, pairs, strict=True):
        shared = [task.task_id for task in pair.tasks]
        result.append(
            pair_noise(pair, run_noise(runs[i], shared), run_noise(runs[j], shared), confidence)
        )
    return result
