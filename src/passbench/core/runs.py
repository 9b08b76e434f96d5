"""A stored evaluation run, as every reader gives it: one record per sample's verdict and one
per run, whatever file it was read from (passbench's `_eval_results.json`, the official
BigCodeBench evaluator's, or a benchmark's own result format such as LiveCodeBench's). They sit
in core because they cross stages: `stages/results` reads passbench's files into them, a
benchmark's subpackage reads its own official files into them, and analysis and apps consume
them. The layout of the files is in `stages/results/read.py` and `write.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passbench.core.records import ErrorCategory

EVAL_RESULTS_SUFFIX = "eval_results.json"
PASS_AT_K_SUFFIX = "pass_at_k.json"
#: The verdict of a failing sample whose answer was cut short (token limit, unclosed thinking):
#: it counts against pass@k as the official tools count it, but it is not a test failure.
NO_ANSWER_TRUNCATED = "no answer (truncated)"


@dataclass(frozen=True)
class SampleResult:
    """The stored verdict on one sample. Fields a file does not carry are None."""

    task_id: str
    sample_index: int
    status: str  # "pass" | "fail" | "timeout"
    solution: str
    details: Mapping[str, str]  # failing test name -> traceback ("ALL" for a whole-program error)
    category: ErrorCategory | None = None  # as recorded; None for a pass or an official file
    reason: str | None = None
    duration_s: float | None = None
    wall_s: float | None = None
    tests_run: int | None = None
    isolation: str | None = None  # "bubblewrap" or "rlimit"; None in official and older files
    multipl_e_status: str | None = None  # MultiPL-E's OK / SyntaxError / Exception / Timeout
    functional: bool | None = None  # CWEval: every functionality case passed
    secure: bool | None = None  # CWEval: every security case passed
    raw_solution: str | None = None  # the model's answer, when the samples carried it
    truncated: str | None = None  # why the answer was cut short, when it was
    sanitize_error: str | None = None  # why the sanitizer found no usable program, if it did not
    # the language of the sample's task as reports show it ("C++"), recorded when the tasks of
    # its benchmark are in several languages (None: the benchmark's one language)
    language: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def no_answer(self) -> bool:
        """Failed because the answer was cut short: "no answer (truncated)", not a test failure."""
        return not self.passed and bool(self.truncated)


@dataclass(frozen=True)
class RunResults:
    """One evaluation run as stored on disk."""

    path: Path
    date: str | None
    tasks: Mapping[str, tuple[SampleResult, ...]]  # task_id -> samples, by sample_index
    meta: Mapping[str, Any] = field(default_factory=dict)  # the "passbench" block; {} if official
    pass_at_k_file: Mapping[str, Any] | None = None  # the sibling _pass_at_k.json, when found
    pass_at_k_path: Path | None = None
    # per-task facts a file carries beside the verdicts (a benchmark with contest dates:
    # contest_date, difficulty, platform), by task id
    task_info: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # "eval_results", or the name of a benchmark's own file format its reader gave the run
    format: str = "eval_results"
    # the benchmark when the file does not name it: read from an official file's task ids, or
    # given by the benchmark whose own file format this is (None: unknown)
    known_benchmark: str | None = None

    @property
    def origin(self) -> str:
        """ "passbench" when the file carries our block, else "official"."""
        return "passbench" if self.meta else "official"

    @property
    def name(self) -> str:
        """A short label for the run: the model from _pass_at_k.json, else the file stem."""
        model = (self.pass_at_k_file or {}).get("model")
        if isinstance(model, str) and model:
            return model
        return results_stem(self.path)

    def _setting(self, key: str) -> Any:
        if key in self.meta:
            return self.meta[key]
        return (self.pass_at_k_file or {}).get(key)

    @property
    def try_pass_rates(self) -> dict[int, float]:
        """pass@1 after each try of a multi-turn run (`run --tries N`): try -> the pass@k
        file's `pass_rate_<try>`, for tries 1, 2, ... as far as they go; {} for a run of one
        try (a benchmark's own `pass_rate_1` alone is not a multi-turn run)."""
        stored = self.pass_at_k_file or {}
        rates: dict[int, float] = {}
        while isinstance(value := stored.get(f"pass_rate_{len(rates) + 1}"), (int, float)):
            if isinstance(value, bool):
                break
            rates[len(rates) + 1] = float(value)
        return rates if len(rates) > 1 else {}

    @property
    def benchmark(self) -> str | None:
        value = self.meta.get("benchmark")
        if isinstance(value, str):
            return value
        return self.known_benchmark

    @property
    def dataset_version(self) -> str | None:
        value = self.meta.get("dataset_version")
        return value if isinstance(value, str) else None

    @property
    def split(self) -> str | None:
        value = self._setting("split")
        return value if isinstance(value, str) else None

    @property
    def subset(self) -> str | None:
        value = self._setting("subset")
        return value if isinstance(value, str) else None

    @property
    def calibrated(self) -> bool | None:
        value = self._setting("calibrated")
        return value if isinstance(value, bool) else None

    @property
    def isolation(self) -> str | None:
        value = self.meta.get("isolation")
        return value if isinstance(value, str) else None

    @property
    def unsandboxed(self) -> bool:
        """Whether any verdict of the run ran without sandbox isolation (rlimits only): what
        the run says of itself, or of any of its samples."""
        if self.meta.get("unsandboxed") is True or self.meta.get("isolation") == "rlimit":
            return True
        return any(
            sample.isolation not in (None, "bubblewrap")
            for samples in self.tasks.values()
            for sample in samples
        )

    @property
    def pass_at_k(self) -> dict[str, float]:
        """The run's scores from its _pass_at_k.json ("pass@1": 0.42, ...); {} without one
        (and for a ground-truth file, which has `gt_pass_rate` instead)."""
        return {
            key: float(value)
            for key, value in (self.pass_at_k_file or {}).items()
            if key.startswith("pass@")
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        }

    @property
    def gt_pass_rate(self) -> float | None:
        value = (self.pass_at_k_file or {}).get("gt_pass_rate")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return None

    @property
    def gt_failed_tasks(self) -> tuple[str, ...]:
        value = (self.pass_at_k_file or {}).get("failed_tasks")
        if isinstance(value, list):
            return tuple(str(item) for item in value)
        return ()

    @property
    def gt_failures(self) -> dict[str, dict[str, Any]]:
        """Why each failing canonical solution failed (passbench pass@k files), by task."""
        value = (self.pass_at_k_file or {}).get("gt_failures")
        if not isinstance(value, dict):
            return {}
        return {str(k): v for k, v in value.items() if isinstance(v, dict)}

    @property
    def recorded_missing_tasks(self) -> tuple[str, ...]:
        """Tasks the run itself says it did not evaluate (passbench files only)."""
        value = self.meta.get("missing_tasks")
        if isinstance(value, list):
            return tuple(str(item) for item in value)
        return ()

    @property
    def quarantined_tasks(self) -> dict[str, dict[str, Any]]:
        """Tasks the evaluation left out of every score, with why (CWEval: references that
        fail the oracle self-check), from the pass@k file."""
        value = (self.pass_at_k_file or {}).get("quarantined_tasks")
        return {str(k): dict(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def counts(self) -> dict[str, tuple[int, int]]:
        """(n, c) per task: samples and passing samples, the input of pass@k."""
        return {
            task_id: (len(samples), sum(1 for sample in samples if sample.passed))
            for task_id, samples in self.tasks.items()
            if samples
        }


def results_stem(path: Path) -> str:
    """`model--bigcodebench-complete--...` from `<stem>_eval_results.json`."""
    name = path.name
    for suffix in ("_" + EVAL_RESULTS_SUFFIX, "_" + PASS_AT_K_SUFFIX, ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
