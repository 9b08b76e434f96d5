"""Several runs side by side, by language: the runs listed with their language, and per
language pass@1, counts and, for MultiPL-E, its statuses (OK / SyntaxError / Exception /
Timeout). What `passbench inspect A B ...` and its HTML report show when the runs are in more
than one language. Pure: it reads RunResults and returns plain records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from passbench.core.records import ErrorCategory
from passbench.stages.benchmarks import benchmark_language
from passbench.stages.results import RunResults, SampleResult

#: MultiPL-E's statuses, in the order reports show them
MULTIPLE_STATUSES = ("OK", "SyntaxError", "Exception", "Timeout")


@dataclass(frozen=True)
class RunRow:
    """One run in a list of runs."""

    name: str
    path: str
    benchmark: str
    language: str
    tasks: int
    samples: int
    pass_at_1: float


@dataclass(frozen=True)
class LanguageScore:
    """The runs of one language taken together (a task of each run counts once)."""

    language: str
    benchmarks: tuple[str, ...]
    runs: int
    tasks: int
    samples: int
    passed: int  # passing samples
    solved: int  # tasks with at least one passing sample
    pass_at_1: float  # the mean over tasks of their pass rate
    # MultiPL-E's statuses -> samples; empty for the Python benchmarks
    statuses: Mapping[str, int]


def multiple_status(sample: SampleResult) -> str:
    """MultiPL-E's status of a sample: as stored, else from the verdict (the mapping of
    docs/benchmarks.md: pass OK, syntax_error SyntaxError, timeout Timeout, else Exception)."""
    if sample.multipl_e_status:
        return sample.multipl_e_status
    if sample.status == "pass":
        return "OK"
    if sample.status == "timeout":
        return "Timeout"
    if sample.category == ErrorCategory.SYNTAX_ERROR:
        return "SyntaxError"
    return "Exception"


def _pass_at_1(run: RunResults) -> float:
    rates = [
        sum(s.passed for s in samples) / len(samples) for samples in run.tasks.values() if samples
    ]
    return sum(rates) / len(rates) if rates else 0.0


def run_rows(runs: Sequence[RunResults]) -> tuple[RunRow, ...]:
    return tuple(
        RunRow(
            name=run.name,
            path=str(run.path),
            benchmark=run.benchmark or "unknown",
            language=benchmark_language(run.benchmark),
            tasks=len(run.tasks),
            samples=sum(len(samples) for samples in run.tasks.values()),
            pass_at_1=_pass_at_1(run),
        )
        for run in runs
    )


def task_languages(run: RunResults) -> dict[str, str]:
    """Task id -> its language: as its samples recorded it at evaluation time (the benchmark's
    `language_of`, for a benchmark whose tasks are in several languages), else the run's
    benchmark's one language."""
    default = benchmark_language(run.benchmark)
    return {
        task_id: next((s.language for s in samples if s.language), default)
        for task_id, samples in run.tasks.items()
    }


def language_breakdown(runs: Sequence[RunResults]) -> tuple[LanguageScore, ...]:
    """One row per language, in the order the languages first appear; a run whose tasks are
    in several languages (Aider's polyglot) counts in each of them."""
    grouped: dict[str, list[tuple[RunResults, tuple[SampleResult, ...]]]] = {}
    for run in runs:
        languages = task_languages(run)
        for task_id, samples_of_task in run.tasks.items():
            grouped.setdefault(languages[task_id], []).append((run, tuple(samples_of_task)))
    scores = []
    for language, members in grouped.items():
        rates: list[float] = []
        statuses: Counter[str] = Counter()
        samples = passed = solved = 0
        # MultiPL-E's statuses are those of programs built and run outside Python
        multiple = language != "Python"
        for _, task_samples in members:
            if not task_samples:
                continue
            good = sum(sample.passed for sample in task_samples)
            rates.append(good / len(task_samples))
            samples += len(task_samples)
            passed += good
            solved += good > 0
            statuses.update(multiple_status(sample) for sample in task_samples)
        member_runs = list({id(run): run for run, _ in members}.values())
        scores.append(
            LanguageScore(
                language=language,
                benchmarks=tuple(dict.fromkeys(run.benchmark or "unknown" for run in member_runs)),
                runs=len(member_runs),
                tasks=len(rates),
                samples=samples,
                passed=passed,
                solved=solved,
                pass_at_1=sum(rates) / len(rates) if rates else 0.0,
                statuses={name: statuses[name] for name in MULTIPLE_STATUSES} if multiple else {},
            )
        )
    return tuple(scores)


def several_languages(runs: Sequence[RunResults]) -> bool:
    return len({lang for run in runs for lang in task_languages(run).values()}) > 1


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


RUN_HEADER = ("run", "benchmark", "language", "tasks", "samples", "pass@1")


def run_cells(row: RunRow) -> tuple[str, ...]:
    """A run's row as text, in RUN_HEADER's order (every rendering shows the same cells)."""
    return (
        row.name,
        row.benchmark,
        row.language,
        str(row.tasks),
        str(row.samples),
        _percent(row.pass_at_1),
    )


def language_header(scores: Sequence[LanguageScore]) -> tuple[str, ...]:
    """The breakdown's columns; MultiPL-E's statuses when some language has them."""
    statuses = MULTIPLE_STATUSES if any(score.statuses for score in scores) else ()
    return ("language", "benchmarks", "runs", "tasks", "samples", "pass@1", "solved", *statuses)


def language_cells(score: LanguageScore, header: Sequence[str]) -> tuple[str, ...]:
    cells = [
        score.language,
        ", ".join(score.benchmarks),
        str(score.runs),
        str(score.tasks),
        str(score.samples),
        _percent(score.pass_at_1),
        str(score.solved),
    ]
    cells += [str(score.statuses[name]) if score.statuses else "" for name in header[7:]]
    return tuple(cells)


def languages_dict(rows: Sequence[RunRow], scores: Sequence[LanguageScore]) -> dict[str, object]:
    """JSON-ready: the runs and the per-language breakdown."""
    from dataclasses import asdict

    return {
        "runs": [asdict(row) for row in rows],
        "languages": [
            {
                **asdict(score),
                "benchmarks": list(score.benchmarks),
                "statuses": dict(score.statuses),
            }
            for score in scores
        ],
    }
