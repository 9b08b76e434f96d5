"""What `passbench inspect` knows about one run: summary, failures, breakdowns, per-task rows.

Pure: it reads RunResults and a TaskCatalog and returns plain records that every output format
(terminal, JSON, CSV, Markdown, HTML) renders. Scores are recomputed from the stored verdicts,
never copied from the file, so `--pass-k` and the intervals re-score without re-running.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from passbench.analysis.report import envgaps
from passbench.analysis.report.categories import Failure, failure_label, failure_of
from passbench.analysis.report.domains import task_domains
from passbench.analysis.report.triage import Triage, triage
from passbench.core import scoring
from passbench.core.records import ErrorCategory
from passbench.core.runs import NO_ANSWER_TRUNCATED
from passbench.stages.benchmarks import benchmark_language, benchmark_names, get_benchmark
from passbench.stages.results import RunResults, SampleResult, task_order
from passbench.stages.results.taskinfo import TaskCatalog

#: The quarantine category of a task whose reference a ground-truth stability run found unstable.
UNSTABLE = "unstable_reference"

DEFAULT_KS = (1, 5, 10)
EXAMPLES_PER_GROUP = 5
TRACEBACK_LINES = 30  # lines of a traceback kept in reports (head and tail)


@dataclass(frozen=True)
class Options:
    """How to score: which k, and how to draw the intervals."""

    ks: tuple[int, ...] = DEFAULT_KS
    resamples: int = scoring.DEFAULT_RESAMPLES
    seed: int = scoring.DEFAULT_SEED
    confidence: float = scoring.DEFAULT_CONFIDENCE
    engine: str = "auto"


@dataclass(frozen=True)
class Summary:
    name: str
    path: str
    origin: str  # "passbench" or "official"
    benchmark: str | None
    split: str | None
    subset: str | None
    calibrated: bool | None
    dataset_version: str | None
    dataset_sha256: str | None
    isolation: str | None
    passbench_version: str | None
    evalenv: Mapping[str, Any] | None
    date: str | None
    n_tasks: int
    samples_per_task: Mapping[int, int]  # number of samples -> number of tasks with that many
    pass_at_k: Mapping[str, float]
    intervals: Mapping[str, scoring.Interval]  # bootstrap over tasks, per pass@k
    exact_pass_at_1: scoring.Interval | None  # Clopper-Pearson, when every task has 1 sample
    tasks_solved: int  # tasks with at least one passing sample
    missing_tasks: tuple[str, ...]
    unknown_tasks: tuple[str, ...]  # in the results but not in the benchmark
    gt_pass_rate: float | None
    gt_failed_tasks: tuple[str, ...]
    stored_pass_at_k: Mapping[str, float]  # what _pass_at_k.json says, to compare
    categories_from: str  # "recorded", "tracebacks" or "recorded and tracebacks"
    notes: tuple[str, ...] = ()
    unsandboxed: bool = False  # some verdicts ran without sandbox isolation (rlimits only)
    # task id -> what its ground truth lacked in this environment (NLTK data, the network)
    environment_gaps: Mapping[str, str] = field(default_factory=dict)
    language: str = "Python"  # benchmarks.benchmark_language
    # CWEval: func@k, func-sec@k, secure_given_functional (recomputed from the samples' flags)
    security_scores: Mapping[str, float] = field(default_factory=dict)
    # a multi-turn run (`run --tries N`): try -> pass@1 after it, as its pass@k file stored it
    try_pass_rates: Mapping[int, float] = field(default_factory=dict)

    @property
    def unsandboxed_warning(self) -> str:
        """The warning every rendering shows first when the run was not sandboxed ("" else)."""
        if not self.unsandboxed:
            return ""
        return (
            "UNSANDBOXED RUN: these samples ran without sandbox isolation (resource limits "
            "only, --allow-unsandboxed). They could read and change this machine's files and "
            "forge their verdicts; do not compare these scores with sandboxed ones."
        )


@dataclass(frozen=True)
class FailureGroup:
    """Failing samples that share a label: a category, or `exception:<Type>`."""

    label: str
    category: str
    exception_type: str | None
    samples: int
    tasks: int
    examples: tuple[str, ...]
    example_message: str


@dataclass(frozen=True)
class GroupScore:
    """pass@1 over the tasks of one library, domain or subset."""

    name: str
    tasks: int
    pass_at_1: float
    solved: int  # tasks with at least one passing sample
    interval: scoring.Interval | None = None


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    n: int
    passed: int
    statuses: tuple[str, ...]
    labels: tuple[str, ...]  # failure label per sample, "" for a pass
    messages: tuple[str, ...]  # one-line failure reason per sample, "" for a pass
    main_label: str  # the most common failure label, "" when every sample passed
    message: str  # the first failing sample's one-line reason
    libs: tuple[str, ...]
    domains: tuple[str, ...]
    hard: bool
    language: str = "Python"  # as its samples record it, else the benchmark's language

    @property
    def pass_rate(self) -> float:
        return self.passed / self.n if self.n else 0.0


@dataclass(frozen=True)
class Inspection:
    summary: Summary
    failures: tuple[FailureGroup, ...]
    by_domain: tuple[GroupScore, ...]
    by_library: tuple[GroupScore, ...]
    hard_subset: GroupScore | None
    tasks: tuple[TaskRow, ...]
    pass_at_k_curve: tuple[tuple[int, float], ...] = field(default=())
    triage: Triage | None = None  # every failing sample's class (triage.py)
    # pass@1 per language, when the run's tasks are in more than one (Aider's polyglot)
    by_language: tuple[GroupScore, ...] = ()


def inspect_run(
    run: RunResults, catalog: TaskCatalog, options: Options | None = None
) -> Inspection:
    """Everything `passbench inspect` reports about `run`."""
    options = options or Options()
    failures = {
        task_id: [failure_of(sample) for sample in samples]
        for task_id, samples in run.tasks.items()
    }
    language = benchmark_language(run.benchmark)
    rows = tuple(
        _task_row(task_id, run.tasks[task_id], failures[task_id], catalog, language)
        for task_id in _ordered(run.tasks)
    )
    summary = _summary(run, catalog, options, failures)
    quarantined = run.quarantined_tasks
    counts = {task: nc for task, nc in run.counts().items() if task not in quarantined}
    curve: tuple[tuple[int, float], ...] = ()
    if counts:
        smallest = min(n for n, _ in counts.values())
        curve = tuple(
            (k, scoring.mean_pass_at_k(counts.values(), k)) for k in range(1, smallest + 1)
        )
    return Inspection(
        summary=summary,
        failures=_failure_groups(run.tasks, failures),
        by_domain=_group_scores(rows, lambda row: row.domains, options, with_interval=True),
        by_library=_group_scores(rows, lambda row: row.libs, options, with_interval=False),
        hard_subset=_hard_subset(rows, run, catalog, options),
        tasks=rows,
        pass_at_k_curve=curve,
        triage=_triage(run, catalog, failures),
        by_language=_by_language([row for row in rows if row.task_id not in quarantined], options),
    )


def _by_language(rows: Sequence[TaskRow], options: Options) -> tuple[GroupScore, ...]:
    """pass@1 per language with its interval, in the order the languages first appear; ()
    when every task is in one language."""
    if len({row.language for row in rows}) < 2:
        return ()
    members: dict[str, list[TaskRow]] = defaultdict(list)
    for row in rows:
        members[row.language].append(row)
    return tuple(_score(name, group, options, True) for name, group in members.items())


def _triage(
    run: RunResults, catalog: TaskCatalog, failures: Mapping[str, Sequence[Failure | None]]
) -> Triage:
    tasks = catalog.tasks
    # official files name the failing ground truths without their reasons
    gt: dict[str, Mapping[str, Any]] = {task_id: {} for task_id in run.gt_failed_tasks} | dict(
        run.gt_failures
    )
    return triage(
        run.tasks,
        failures,
        entry_points={task_id: task.entry_point for task_id, task in tasks.items()},
        libs={task_id: task.libs for task_id, task in tasks.items()},
        gt_failures=gt,
        order=_ordered(run.tasks),
    )


def _ordered(tasks: Iterable[str]) -> list[str]:
    """Task ids in benchmark order: "BigCodeBench/2" before "BigCodeBench/10"."""
    return sorted(tasks, key=task_order)


def _task_row(
    task_id: str,
    samples: Sequence[SampleResult],
    failures: Sequence[Failure | None],
    catalog: TaskCatalog,
    language: str,
) -> TaskRow:
    labels = tuple(failure_label(f) if f else "" for f in failures)
    failing = [label for label in labels if label]
    main = Counter(failing).most_common(1)[0][0] if failing else ""
    message = next(
        (f.message for f, label in zip(failures, labels, strict=True) if f and label == main), ""
    )
    task = catalog.tasks.get(task_id)
    libs = task.libs if task else ()
    return TaskRow(
        task_id=task_id,
        n=len(samples),
        passed=sum(1 for sample in samples if sample.passed),
        statuses=tuple(sample.status for sample in samples),
        labels=labels,
        messages=tuple(f.message if f else "" for f in failures),
        main_label=main,
        message=message,
        libs=libs,
        domains=task_domains(libs) if task else (),
        hard=task_id in catalog.hard_ids,
        # what the run recorded (its benchmark's `language_of` at evaluation time)
        language=next((s.language for s in samples if s.language), language),
    )


def _summary(
    run: RunResults,
    catalog: TaskCatalog,
    options: Options,
    failures: Mapping[str, Sequence[Failure | None]],
) -> Summary:
    quarantined = run.quarantined_tasks
    counts = {task: nc for task, nc in run.counts().items() if task not in quarantined}
    notes: list[str] = []
    if quarantined:
        unstable = {t for t, why in quarantined.items() if why.get("category") == UNSTABLE}
        # why the references are not trusted: unstable over a ground-truth stability run
        # (evaluate --ground-truth --runs N), or failing the benchmark's own self-check
        reasons = [
            text
            for text, present in (
                ("unstable over a ground-truth stability run", unstable),
                ("failing the oracle self-check", set(quarantined) - unstable),
            )
            if present
        ]
        notes.append(
            f"{len(quarantined)} task(s) quarantined and left out of every score (their "
            f"references are {' or '.join(reasons)}): {', '.join(_ordered(quarantined))}"
        )
    security = _security_scores(run, quarantined, options.ks)
    sizes = Counter(n for n, _ in counts.values())
    table = scoring.pass_at_k_table(counts, options.ks)
    skipped = [k for k in options.ks if f"pass@{k}" not in table]
    if skipped and counts:
        notes.append(
            f"pass@{', pass@'.join(map(str, skipped))} not computed: tasks have as few as "
            f"{min(sizes)} sample(s)"
        )
    intervals = scoring.pass_at_k_intervals(
        counts,
        options.ks,
        resamples=options.resamples,
        confidence=options.confidence,
        seed=options.seed,
        engine=options.engine,
    )
    exact = None
    if counts and set(sizes) == {1}:
        solved = sum(c for _, c in counts.values())
        low, high = scoring.clopper_pearson(solved, len(counts), options.confidence)
        exact = scoring.Interval(low, high, "clopper-pearson", options.confidence)

    expected: set[str] = set()
    subset = run.subset
    if catalog.tasks:
        expected = set(catalog.tasks)
        if subset == "hard" and catalog.hard_ids:
            expected = set(catalog.hard_ids)
        elif subset is None and catalog.hard_ids and set(run.tasks) <= catalog.hard_ids:
            expected = set(catalog.hard_ids)
            subset = "hard"
            notes.append("subset taken as hard: every task id is a BigCodeBench-Hard task")
    missing = set(run.recorded_missing_tasks) | (expected - set(run.tasks) if expected else set())
    unknown = set(run.tasks) - set(catalog.tasks) if catalog.tasks else set()
    gaps = envgaps.environment_gaps(run.gt_failures)
    if gaps:
        notes.append(envgaps.describe(gaps, _ordered(gaps)))
    if catalog.note:
        notes.append(f"no library/domain breakdown: {catalog.note}")
    if unknown:
        notes.append(f"{len(unknown)} task id(s) are not in the benchmark data")
    recorded_hash = run.meta.get("dataset_sha256")
    if catalog.sha256 and isinstance(recorded_hash, str) and recorded_hash != catalog.sha256:
        notes.append(
            f"the run's dataset_sha256 {recorded_hash[:12]} differs from the loaded data's "
            f"{catalog.sha256[:12]} ({catalog.source}): libraries and tests shown may not match"
        )

    recorded = derived = False
    for task_failures in failures.values():
        for failure in task_failures:
            if failure is not None:
                derived |= failure.derived
                recorded |= not failure.derived
    categories_from = (
        "recorded and tracebacks"
        if recorded and derived
        else "tracebacks"
        if derived
        else "recorded"
        if recorded
        else "no failures"
    )
    stored = {
        key: float(value)
        for key, value in (run.pass_at_k_file or {}).items()
        if key.startswith("pass@") and isinstance(value, (int, float))
    }
    for key, value in stored.items():
        if key in table and abs(table[key] - value) > 1e-9:
            notes.append(
                f"{key} stored in {run.pass_at_k_path} is {value:.4f}, recomputed {table[key]:.4f}"
            )
    meta = run.meta
    evalenv = meta.get("evalenv")
    return Summary(
        name=run.name,
        path=str(run.path),
        origin=run.origin,
        benchmark=run.benchmark,
        language=benchmark_language(run.benchmark),
        split=run.split,
        subset=subset,
        calibrated=run.calibrated,
        dataset_version=run.dataset_version,
        dataset_sha256=_str_or_none(meta.get("dataset_sha256")),
        isolation=run.isolation,
        passbench_version=_str_or_none(meta.get("passbench_version")),
        evalenv=evalenv if isinstance(evalenv, dict) else None,
        date=run.date,
        n_tasks=len(counts),
        samples_per_task=dict(sorted(sizes.items())),
        pass_at_k=table,
        intervals=intervals,
        exact_pass_at_1=exact,
        tasks_solved=sum(1 for _, c in counts.values() if c > 0),
        missing_tasks=tuple(_ordered(missing)),
        unknown_tasks=tuple(_ordered(unknown)),
        gt_pass_rate=run.gt_pass_rate,
        gt_failed_tasks=run.gt_failed_tasks,
        stored_pass_at_k=stored,
        categories_from=categories_from,
        notes=tuple(notes),
        unsandboxed=run.unsandboxed,
        environment_gaps=gaps,
        security_scores=security,
        try_pass_rates=run.try_pass_rates,
    )


def _security_scores(
    run: RunResults, quarantined: Mapping[str, Any], ks: Sequence[int]
) -> dict[str, float]:
    """The benchmark's scores beyond pass@k (`extra_scores`: CWEval's func@k, func-sec@k and
    secure_given_functional), recomputed from the samples' flags when every sample carries
    them; {} otherwise (and for a run whose benchmark is not registered)."""
    samples = [
        sample
        for task, task_samples in run.tasks.items()
        if task not in quarantined
        for sample in task_samples
    ]
    if not samples or any(s.functional is None or s.secure is None for s in samples):
        return {}
    if run.benchmark is None or run.benchmark not in benchmark_names():
        return {}
    entries = [
        {"task_id": s.task_id, "status": s.status, "functional": s.functional, "secure": s.secure}
        for s in samples
    ]
    scores = get_benchmark(run.benchmark).extra_scores(entries, ks)
    # the scores (fractions), not the counts kept beside them or those left undefined
    return {key: float(value) for key, value in scores.items() if isinstance(value, float)}


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _failure_groups(
    tasks: Mapping[str, Sequence[SampleResult]],
    failures: Mapping[str, Sequence[Failure | None]],
) -> tuple[FailureGroup, ...]:
    samples: Counter[str] = Counter()
    task_sets: dict[str, list[str]] = defaultdict(list)
    first: dict[str, Failure] = {}
    for task_id in _ordered(tasks):
        for failure in failures[task_id]:
            if failure is None:
                continue
            label = failure_label(failure)
            samples[label] += 1
            if not task_sets[label] or task_sets[label][-1] != task_id:
                task_sets[label].append(task_id)
            first.setdefault(label, failure)
    groups = [
        FailureGroup(
            label=label,
            category="truncated" if first[label].truncated else first[label].category.value,
            exception_type=first[label].exception_type,
            samples=count,
            tasks=len(task_sets[label]),
            examples=tuple(task_sets[label][:EXAMPLES_PER_GROUP]),
            example_message=first[label].message,
        )
        for label, count in samples.items()
    ]
    groups.sort(key=lambda group: (-group.samples, group.label))
    return tuple(groups)


def _group_scores(
    rows: Sequence[TaskRow],
    names_of: Any,
    options: Options,
    *,
    with_interval: bool,
) -> tuple[GroupScore, ...]:
    members: dict[str, list[TaskRow]] = defaultdict(list)
    for row in rows:
        for name in names_of(row):
            members[name].append(row)
    scores = [_score(name, group, options, with_interval) for name, group in members.items()]
    scores.sort(key=lambda score: (-score.tasks, score.name))
    return tuple(scores)


def _score(name: str, rows: Sequence[TaskRow], options: Options, with_interval: bool) -> GroupScore:
    rates = [row.pass_rate for row in rows]
    interval = None
    if with_interval and rates:
        interval = scoring.bootstrap_means(
            {"pass@1": rates},
            resamples=options.resamples,
            confidence=options.confidence,
            seed=options.seed,
            engine=options.engine,
        )["pass@1"]
    return GroupScore(
        name=name,
        tasks=len(rows),
        pass_at_1=sum(rates) / len(rates) if rates else 0.0,
        solved=sum(1 for row in rows if row.passed > 0),
        interval=interval,
    )


def _hard_subset(
    rows: Sequence[TaskRow], run: RunResults, catalog: TaskCatalog, options: Options
) -> GroupScore | None:
    """pass@1 on the Hard tasks of a run that has others too (a Full run)."""
    hard_rows = [row for row in rows if row.hard]
    if not hard_rows or len(hard_rows) == len(rows):
        return None
    return _score("hard", hard_rows, options, with_interval=True)


# --- filters and per-task detail ------------------------------------------------------------


def matches_category(row: TaskRow, wanted: str) -> bool:
    """True when a sample of `row` failed with `wanted`: a category ("exception",
    "assertion_failed"), a label ("exception:KeyError") or an exception type ("KeyError")."""
    wanted = wanted.strip()
    for label in row.labels:
        if not label:
            continue
        category, _, exception_type = label.partition(":")
        if wanted in (label, category, exception_type):
            return True
        if label == NO_ANSWER_TRUNCATED and wanted == "truncated":
            return True
    return False


def filter_tasks(
    rows: Iterable[TaskRow],
    *,
    statuses: Sequence[str] = (),
    categories: Sequence[str] = (),
    libs: Sequence[str] = (),
) -> list[TaskRow]:
    """Rows with a sample of one of `statuses`, a failure in one of `categories`, and one of
    `libs` among their libraries; an empty filter lets everything through."""
    kept = []
    for row in rows:
        if statuses and not set(statuses) & set(row.statuses):
            continue
        if categories and not any(matches_category(row, wanted) for wanted in categories):
            continue
        if libs and not set(libs) & set(row.libs):
            continue
        kept.append(row)
    return kept


@dataclass(frozen=True)
class SampleDetail:
    index: int
    status: str
    label: str
    message: str
    duration_s: float | None
    solution: str
    failing_tests: tuple[tuple[str, str], ...]  # (test name, trimmed traceback)


@dataclass(frozen=True)
class TaskDetail:
    row: TaskRow
    samples: tuple[SampleDetail, ...]
    canonical_solution: str | None  # a whole program: code prompt + canonical body
    test: str | None
    entry_point: str | None


def task_detail(
    run: RunResults, inspection: Inspection, catalog: TaskCatalog, task_id: str
) -> TaskDetail | None:
    """Everything about one task, or None when the run has no such task."""
    row = next((row for row in inspection.tasks if row.task_id == task_id), None)
    if row is None:
        return None
    samples = []
    for sample in run.tasks[task_id]:
        failure = failure_of(sample)
        samples.append(
            SampleDetail(
                index=sample.sample_index,
                status=sample.status,
                label=failure_label(failure) if failure else "",
                message=failure.message if failure else "",
                duration_s=sample.duration_s,
                solution=sample.solution,
                failing_tests=tuple(
                    (name, trim_traceback(text)) for name, text in sample.details.items()
                ),
            )
        )
    task = catalog.tasks.get(task_id)
    return TaskDetail(
        row=row,
        samples=tuple(samples),
        canonical_solution=catalog.canonical.get(task_id),
        test=task.test if task else None,
        entry_point=task.entry_point if task else None,
    )


def trim_traceback(text: str, lines: int = TRACEBACK_LINES) -> str:
    """Keep a traceback's first lines and its end (where the error is), cut the middle."""
    split = text.rstrip().splitlines()
    if len(split) <= lines:
        return text.rstrip()
    head = 3
    tail = lines - head
    cut = len(split) - head - tail
    return "\n".join([*split[:head], f"    ... {cut} lines cut ...", *split[-tail:]])


def is_failure_category(value: str) -> bool:
    return value in {member.value for member in ErrorCategory}
