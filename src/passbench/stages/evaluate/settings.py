"""What one evaluation depends on, and the official time limits derived from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from passbench.stages import differential
from passbench.stages.benchmarks import DEFAULT_BENCHMARK
from passbench.stages.benchmarks.selection import DateWindow
from passbench.stages.sandbox.base import Limits

#: The official default `--min_time_limit`.
OFFICIAL_MIN_TIME_LIMIT_S = 1.0
#: What the official evaluator assumes for a task whose ground truth failed.
OFFICIAL_FAILED_GT_TIME_S = 20.0


@dataclass(frozen=True)
class EvaluateSettings:
    """Everything one evaluation depends on (resolved by settings.resolve in the CLI)."""

    benchmark: str = DEFAULT_BENCHMARK
    version: str | None = None
    split: str = "complete"
    subset: str = "full"
    samples: Path | None = None
    output_dir: Path | None = None
    task_ids: tuple[str, ...] | None = None  # selection; None = every task of the subset
    id_range: tuple[int, int] | None = None  # positions low <= i < high (benchmarks.selection)
    window: DateWindow = field(
        default_factory=DateWindow
    )  # contest dates (--since / --until; dated benchmarks)
    calibrated: bool = True
    pass_k: tuple[int, ...] = (1, 5, 10)
    timeout_per_task_s: float | None = None  # None = the benchmark's official default
    min_time_limit_s: float = OFFICIAL_MIN_TIME_LIMIT_S
    # differential benchmarks: each input's limit is max(min_time_limit, factor x reference time)
    gt_time_limit_factor: float = differential.DEFAULT_GT_TIME_LIMIT_FACTOR
    check_ground_truth: bool = True  # official: ground truth runs (or is cached) before samples
    workers: int = 0
    limits: Limits = field(default_factory=Limits)
    env_dir: Path | None = None
    dataset_path: Path | None = None
    nltk_data: Path | None = None
    allow_unsandboxed: bool = False  # run without bubblewrap (rlimits only) rather than refuse
    resume: bool = True
    backend: str = "local"  # sandbox backend (passbench.stages.sandbox.BACKENDS)
    endpoint: str | None = None  # remote backends: the server's URL
    image: str | None = None  # docker/podman: the image; e2b: the template
    ray_address: str | None = None  # ray: the cluster (None: RAY_ADDRESS, else a local one)
    token: str | None = field(default=None, repr=False)  # remote backends: bearer token
    # remote backends: this fraction of what the backend ran is run again here and compared
    verify_fraction: float = 0.0
    # every sample (or reference) executed this many times: flaky verdicts (stability.py)
    runs: int = 1
    # the samples are this many independent generations per task (`run --epochs`): sample i
    # belongs to epoch i // (samples per task / epochs); pass@1 gets an interval across them
    epochs: int = 1

    def timeout_per_task(self, default_s: float) -> float:
        """The per-task limit: the one asked for, else the benchmark's official default."""
        return self.timeout_per_task_s if self.timeout_per_task_s is not None else default_s


@dataclass(frozen=True)
class TimeLimits:
    """One evaluation's time limits, resolved once (`Execution.time_limits`) from the settings
    and the benchmark's official default. Every style takes its programs' limits from here, so
    the ground truth, the samples and the differential inputs cannot drift apart."""

    per_task_s: float  # --timeout-per-task, else the benchmark's official default
    min_s: float  # --min-time-limit
    gt_factor: float  # differential inputs: max(min, factor x the reference's time)

    @classmethod
    def resolve(cls, settings: EvaluateSettings, default_s: float) -> TimeLimits:
        return cls(
            settings.timeout_per_task(default_s),
            settings.min_time_limit_s,
            settings.gt_time_limit_factor,
        )

    def program_s(self, reference_s: float | None = None) -> float:
        """The official limit of a unittest or script program, one formula for the ground
        truth (no reference time) and the samples (their task's ground-truth time):
        max(per-task, min, reference) + 1 (BigCodeBench's trusted_check / untrusted_check)."""
        return max(self.per_task_s, self.min_s, reference_s or 0.0) + 1.0

    def sample_s(self, gt_time_s: float | None, *, has_reference: bool = True) -> float:
        """A sample's limit: from its task's ground-truth time (20 s when the ground truth
        failed or was not run, as the official evaluator assumes); a benchmark without
        reference solutions (MultiPL-E) keeps its own per-task limit."""
        if not has_reference:
            return self.per_task_s
        return self.program_s(OFFICIAL_FAILED_GT_TIME_S if gt_time_s is None else gt_time_s)

    def inputs_s(self, expected: differential.ExpectedPhase) -> tuple[float, ...]:
        """A differential phase's per-input limits (EvalPlus's)."""
        return differential.time_limits(expected, self.min_s, self.gt_factor)
