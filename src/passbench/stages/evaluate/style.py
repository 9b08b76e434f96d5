"""How a benchmark's verdicts are reached: the one interface the evaluator drives.

- `tested` (tested.py): the program carries its tests and the sandbox's verdict is the verdict
  (BigCodeBench, HumanEval's original `check()`).
- `judged` (judged.py): the program returns outputs, judged on the host against expected
  outputs computed from the reference (differential benchmarks: HumanEval, HumanEval+).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from passbench.core.records import Isolation, Sample, Task
from passbench.stages.benchmarks import Benchmark, DifferentialBenchmark, LoadedBenchmark
from passbench.stages.evaluate.execution import Execution
from passbench.stages.evaluate.judged import JudgedStyle
from passbench.stages.evaluate.outcomes import GroundTruth, SampleVerdicts
from passbench.stages.evaluate.tested import TestedStyle


class EvaluationStyle(Protocol):
    def metadata(self) -> dict[str, Any]:
        """Settings of this style every result file records."""
        ...

    def eval_results_extra(self) -> dict[str, Any] | None:
        """Top-level fields the eval-results file adds for this style's reference tool."""
        ...

    def ground_truth(self) -> tuple[GroundTruth, Isolation]:
        """The reference's verdicts for the selected tasks, from the cache where it has them."""
        ...

    def rerun_ground_truth(self, journal_path: Path) -> tuple[GroundTruth, Isolation]:
        """The reference run again, refreshing the cache (resumable through `journal_path`)."""
        ...

    def verdicts(
        self,
        samples: Sequence[Sample],
        codes: Sequence[str],
        tasks: Mapping[str, Task],
        journal_path: Path,
    ) -> SampleVerdicts:
        """One verdict per sample (`codes[i]` is sample i's whole solution), journaled in
        `journal_path` as they arrive."""
        ...


def style_for(
    benchmark: Benchmark, loaded: LoadedBenchmark, tasks: Sequence[Task], execution: Execution
) -> EvaluationStyle:
    if isinstance(benchmark, DifferentialBenchmark):
        return JudgedStyle(benchmark, loaded, tasks, execution)
    return TestedStyle(benchmark, tasks, execution)
