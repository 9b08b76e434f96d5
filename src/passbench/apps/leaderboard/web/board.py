"""The store turned into the leaderboard's rows: pure functions over a session.

Both the Gradio app and `passbench leaderboard build` call these, so the served board and the
published files cannot drift. A *view* is one board: (benchmark, subset, split), such as
BigCodeBench Hard × Instruct; where a view's runs hold tasks in several languages (Aider's
polyglot exercises), each language gets a view of its own too, scored on that language's tasks
of the same runs. In a view each model has at most:

- one row from a run we hold the verdicts of (`verified`, else `imported`; the newest run that
  an admin has not hidden), its pass@1 computed from the verdicts with a 95% interval from
  scoring.py: Clopper-Pearson when every task has one sample (pass@1 is then a binomial count),
  else the bootstrap over tasks that `passbench inspect` reports;
- one `reported` row: the pass@1 the public leaderboard published (the newest imported file).
  Its interval is Clopper-Pearson *assuming* what the public board does: one greedy sample per
  task over the subset's tasks (1140 Full, 148 Hard); the row says so in `ci_method`.

Rows are ranked by pass@1. A rank band (`rank_best`..`rank_worst`) says which ranks the
intervals allow: a row can only be beaten for sure by a row whose interval lies wholly above
its own, so where intervals overlap, the band is wider than one rank.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from passbench.analysis.report.analysis import Options
from passbench.analysis.report.compare import PairComparison, compare_pair
from passbench.analysis.report.contamination import GroupScore, scores_without
from passbench.apps.leaderboard.store.contamination import (
    checks_run,
    corpus_label,
    flagged_tasks,
    stored_checks,
)
from passbench.apps.leaderboard.store.models import (
    ContaminationCheck,
    Model,
    ReportedScore,
    ReportedSource,
    Run,
    TaskResult,
)
from passbench.core import scoring
from passbench.core.records import ErrorCategory
from passbench.stages.benchmarks import DEFAULT_BENCHMARK, benchmark_names, get_benchmark
from passbench.stages.results import RunResults, SampleResult, task_order

BADGES = ("verified", "imported", "reported")
CONFIDENCE = scoring.DEFAULT_CONFIDENCE


def _title(benchmark: str) -> str:
    """A benchmark's title for people ("BigCodeBench"); the name when it is not registered."""
    return get_benchmark(benchmark).info.title if benchmark in benchmark_names() else benchmark


def _subset_sizes(benchmark: str) -> Mapping[str, int]:
    """Tasks per subset as the benchmark publishes them ({} when it is not registered)."""
    return get_benchmark(benchmark).info.subset_sizes if benchmark in benchmark_names() else {}


@dataclass(frozen=True)
class View:
    """One board: a benchmark's subset and split (None where the benchmark has none), and
    one language of its tasks (None: all of them)."""

    benchmark: str
    subset: str | None
    split: str | None
    language: str | None = None

    @property
    def key(self) -> str:
        """The view in a URL or a file name: `bigcodebench-hard-instruct`,
        `aider-polyglot-full-whole-cpp` (the language as a name: "C++" -> "cpp")."""
        language = _language_key(self.language) if self.language else None
        parts = (self.benchmark, self.subset, self.split, language)
        return "-".join(part for part in parts if part)

    @property
    def label(self) -> str:
        parts = [_title(self.benchmark)]
        parts += [part.capitalize() for part in (self.subset, self.split) if part]
        parts += [self.language] if self.language else []
        return " · ".join(parts)

    @property
    def whole(self) -> View:
        """The view of all the languages this one is a part of (itself when it is whole)."""
        return replace(self, language=None)


def _language_key(language: str) -> str:
    """A language's name in a URL or file name: lower case, `+` as `p`, `#` as `sharp`."""
    spelled = language.lower().replace("+", "p").replace("#", "sharp")
    return "".join(char if char.isalnum() else "-" for char in spelled).strip("-")


@dataclass(frozen=True)
class BoardRow:
    """One row of a view. Percentages are 0..100 (as the public board shows them)."""

    model_id: int
    model: str
    badge: str  # verified, imported (runs we hold the verdicts of) or reported
    pass_at_1: float
    ci_low: float | None
    ci_high: float | None
    ci_method: str
    n_tasks: int | None
    n_samples: int | None
    run_id: int | None
    link: str | None
    size_b: float | None
    active_params_b: float | None
    moe: bool | None
    open_data: str | None
    release_date: _dt.date | None
    prompted: bool | None
    prefill: bool | None
    rank: int = 0
    rank_best: int = 0
    rank_worst: int = 0
    #: pass@1 in percent on the tasks no stored contamination check flags, and how many it
    #: flags (None: no check of the run's tasks is stored; reported rows have no tasks).
    clean_pass_at_1: float | None = None
    contaminated_tasks: int | None = None

    @property
    def open_weights(self) -> bool:
        """Weights one can download: the model links to a Hugging Face repository."""
        return bool(self.link and "huggingface.co/" in self.link)

    @property
    def rank_band(self) -> str:
        if self.rank_best == self.rank_worst:
            return str(self.rank_best)
        return f"{self.rank_best}–{self.rank_worst}"


def views(session: Session) -> list[View]:
    """Every view the store has rows for: the public board's first, then runs' benchmarks,
    each followed by its languages' views where its runs' tasks are in several."""
    found: set[View] = set()
    for benchmark, subset, split in session.execute(
        select(ReportedScore.benchmark, ReportedScore.subset, ReportedScore.split).distinct()
    ):
        found.add(View(benchmark, subset, split))
    languages: dict[View, set[str]] = {}
    for run_benchmark, run_subset, run_split, language in session.execute(
        select(Run.benchmark, Run.subset, Run.split, TaskResult.language)
        .join(TaskResult, TaskResult.run_id == Run.id, isouter=True)
        .where(~Run.hidden)
        .distinct()
    ):
        view = View(run_benchmark or "unknown", run_subset, run_split)
        found.add(view)
        if language:
            languages.setdefault(view, set()).add(language)
    for view, names in languages.items():
        if len(names) > 1:
            found.update(replace(view, language=name) for name in names)
    order = {DEFAULT_BENCHMARK: 0}  # the default benchmark's boards first
    return sorted(
        found,
        key=lambda v: (
            order.get(v.benchmark, 1),
            v.benchmark,
            v.subset or "",
            v.split or "",
            v.language or "",
        ),
    )


def find_view(available: Sequence[View], key: str | None) -> View | None:
    """The view named `key` (View.key), else the first one."""
    for view in available:
        if view.key == key:
            return view
    return available[0] if available else None


def _matches(column: object, value: str | None) -> object:
    return column.is_(None) if value is None else column == value  # type: ignore[attr-defined]


def shown_runs(session: Session, view: View) -> list[Run]:
    """Per model, the run the board shows in `view`: verified before imported, then newest."""
    benchmark = None if view.benchmark == "unknown" else view.benchmark
    runs = session.scalars(
        select(Run)
        .where(
            ~Run.hidden,
            _matches(Run.benchmark, benchmark),  # type: ignore[arg-type]
            _matches(Run.subset, view.subset),  # type: ignore[arg-type]
            _matches(Run.split, view.split),  # type: ignore[arg-type]
        )
        .options(selectinload(Run.model))
        .order_by(Run.id.desc())
    ).all()
    chosen: dict[int, Run] = {}
    for run in runs:
        best = chosen.get(run.model_id)
        if best is None or (best.provenance != "verified" and run.provenance == "verified"):
            chosen[run.model_id] = run
    return list(chosen.values())


def run_counts(
    session: Session, run_ids: Sequence[int], language: str | None = None
) -> dict[int, dict[str, tuple[int, int]]]:
    """(n, c) per task of each run: what pass@k and its interval are computed from; with
    `language`, of that language's tasks only."""
    counts: dict[int, dict[str, tuple[int, int]]] = {run_id: {} for run_id in run_ids}
    if run_ids:
        query = select(TaskResult.run_id, TaskResult.task_id, TaskResult.n, TaskResult.c).where(
            TaskResult.run_id.in_(run_ids)
        )
        if language is not None:
            query = query.where(TaskResult.language == language)
        for run_id, task_id, n, c in session.execute(query):
            counts[run_id][task_id] = (n, c)
    return counts


def run_interval(
    counts: Mapping[str, tuple[int, int]], confidence: float = CONFIDENCE
) -> scoring.Interval:
    """pass@1's interval as `passbench inspect` gives it: exact with one sample per task,
    else the percentile bootstrap over tasks (fixed seed, tasks in task order, as result files
    list them: the same verdicts give the same interval as `passbench inspect`)."""
    counts = {task: counts[task] for task in sorted(counts, key=task_order)}
    if counts and {n for n, _ in counts.values()} == {1}:
        solved = sum(c for _, c in counts.values())
        low, high = scoring.clopper_pearson(solved, len(counts), confidence)
        return scoring.Interval(low, high, "clopper-pearson", confidence)
    intervals = scoring.pass_at_k_intervals(counts, [1], confidence=confidence)
    return intervals.get("pass@1", scoring.Interval(math.nan, math.nan, "none", confidence))


def _metadata(model: Model) -> dict[str, object]:
    return {
        "model_id": model.id,
        "model": model.name,
        "link": model.link,
        "size_b": model.size_b,
        "active_params_b": model.active_params_b,
        "moe": model.moe,
        "open_data": model.open_data,
        "release_date": model.release_date,
        "prompted": model.prompted,
        "prefill": model.prefill,
    }


def reported_scores(session: Session, view: View) -> list[ReportedScore]:
    """The view's published scores, one per model: from the newest imported file, unless an
    admin hid it (then the model has no reported row: an older file's score does not stand in)."""
    scores = session.scalars(
        select(ReportedScore)
        .join(ReportedScore.source)
        .where(
            ReportedScore.benchmark == view.benchmark,
            _matches(ReportedScore.subset, view.subset),  # type: ignore[arg-type]
            _matches(ReportedScore.split, view.split),  # type: ignore[arg-type]
        )
        .options(selectinload(ReportedScore.model))
        .order_by(ReportedSource.id.desc())
    ).all()
    newest: dict[int, ReportedScore] = {}
    for score in scores:
        newest.setdefault(score.model_id, score)
    return [score for score in newest.values() if not score.hidden]


def board(session: Session, view: View, confidence: float = CONFIDENCE) -> list[BoardRow]:
    """The rows of `view`, ranked by pass@1 (highest first), with their rank bands."""
    rows: list[BoardRow] = []
    runs = shown_runs(session, view)
    counts = run_counts(session, [run.id for run in runs], view.language)
    checks = stored_checks(session) if runs else []
    for run in runs:
        tasks = counts[run.id]
        if not tasks:  # a run without a task of the view's language
            continue
        interval = run_interval(tasks, confidence)
        clean = clean_score(tasks, run, checks)
        whole = view.language is None
        rows.append(
            BoardRow(
                badge=run.provenance,
                pass_at_1=100 * (run.pass_at_1 if whole else _pass_at_1(tasks)),
                ci_low=None if math.isnan(interval.low) else 100 * interval.low,
                ci_high=None if math.isnan(interval.high) else 100 * interval.high,
                ci_method=interval.method,
                n_tasks=run.n_tasks if whole else len(tasks),
                n_samples=run.n_samples if whole else sum(n for n, _ in tasks.values()),
                run_id=run.id,
                clean_pass_at_1=None if clean is None else 100 * clean[0],
                contaminated_tasks=None if clean is None else clean[1],
                **_metadata(run.model),  # type: ignore[arg-type]
            )
        )
    if view.language is not None:  # published scores are of whole subsets
        return rank(rows)
    # tasks per subset, for the interval of a reported score (the public board: greedy, n=1)
    subset_tasks = _subset_sizes(view.benchmark).get(view.subset or "")
    for score in reported_scores(session, view):
        low = high = None
        method = "none (published without per-task results)"
        if subset_tasks is not None:
            solved = round(score.pass_at_1_percent / 100 * subset_tasks)
            low, high = _exact_percent(solved, subset_tasks, confidence)
            method = f"clopper-pearson, assuming 1 greedy sample × {subset_tasks} tasks"
        rows.append(
            BoardRow(
                badge="reported",
                pass_at_1=score.pass_at_1_percent,
                ci_low=low,
                ci_high=high,
                ci_method=method,
                n_tasks=subset_tasks,
                n_samples=None,
                run_id=None,
                **_metadata(score.model),  # type: ignore[arg-type]
            )
        )
    return rank(rows)


def _pass_at_1(counts: Mapping[str, tuple[int, int]]) -> float:
    """pass@1 over the tasks (a fraction), as a run's is computed from its verdicts."""
    return scoring.pass_at_k_table(_in_task_order(counts), [1])["pass@1"]


@functools.lru_cache(maxsize=8192)
def _exact_percent(solved: int, trials: int, confidence: float) -> tuple[float, float]:
    """Clopper-Pearson in percent. Cached: a pure function of small integers, which the
    public board repeats (its 202 scores have at most 1141 distinct values)."""
    low, high = scoring.clopper_pearson(solved, trials, confidence)
    return 100 * low, 100 * high


def stamp(session: Session) -> tuple[object, ...]:
    """What changes whenever a board can change: the app recomputes boards when this does."""
    return tuple(
        session.execute(
            select(
                select(func.max(Run.id)).scalar_subquery(),
                select(func.coalesce(func.sum(Run.id), 0)).where(Run.hidden).scalar_subquery(),
                select(func.max(ReportedSource.id)).scalar_subquery(),
                select(func.coalesce(func.sum(ReportedScore.id), 0))
                .where(ReportedScore.hidden)
                .scalar_subquery(),
                select(func.count()).select_from(Model).scalar_subquery(),
                select(func.count()).select_from(ContaminationCheck).scalar_subquery(),
            )
        ).one()
    )


def rank(rows: Sequence[BoardRow]) -> list[BoardRow]:
    """Sort by pass@1 (then verified before imported before reported, then name); equal scores
    share a rank; each row's band runs from 1 + the rows surely above it (interval wholly
    higher) to the rows not surely below it."""
    ordered = sorted(rows, key=lambda r: (-r.pass_at_1, BADGES.index(r.badge), r.model))
    ranked: list[BoardRow] = []
    for index, row in enumerate(ordered):
        tied = index > 0 and ordered[index - 1].pass_at_1 == row.pass_at_1
        position = ranked[-1].rank if tied else index + 1
        low, high = _low(row), _high(row)
        above = sum(1 for other in ordered if _low(other) > high)
        below = sum(1 for other in ordered if _high(other) < low)
        ranked.append(
            replace(row, rank=position, rank_best=above + 1, rank_worst=len(ordered) - below)
        )
    return ranked


def _low(row: BoardRow) -> float:
    return row.ci_low if row.ci_low is not None else row.pass_at_1


def _high(row: BoardRow) -> float:
    return row.ci_high if row.ci_high is not None else row.pass_at_1


# -- a model's page ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunContamination:
    """A stored contamination check of a run's tasks (store/contamination.py), and the run's
    pass@1 on all its tasks, the clean ones and the flagged ones: the figures `passbench
    inspect --exclude-contaminated` gives for the same run and overlap file."""

    run_id: int
    check_id: int
    source_name: str  # the overlap file it was imported from
    corpus: str  # its paths, size and hash, in a few words
    corpus_sha256: str
    n: int  # the n-gram size whose hits flag a task
    min_shared: int | None
    checked: int  # tasks the check looked at
    flagged: int  # tasks it flags (of any run)
    scores: tuple[GroupScore, ...]  # the run's: all tasks, clean, contaminated

    @property
    def all_tasks(self) -> GroupScore:
        return self.scores[0]

    @property
    def clean(self) -> GroupScore:
        return self.scores[1]

    @property
    def contaminated(self) -> GroupScore:
        return self.scores[2]


@dataclass(frozen=True)
class ModelPage:
    model: Model
    runs: list[Run]  # newest first; hidden runs are left out
    reported: list[ReportedScore]
    contamination: list[RunContamination]  # the runs' order, then the checks'


def model_page(session: Session, model_id: int) -> ModelPage | None:
    model = session.get(Model, model_id)
    if model is None:
        return None
    runs = sorted((run for run in model.runs if not run.hidden), key=lambda r: -r.id)
    reported = sorted(model.reported, key=lambda s: (s.subset, s.split, -s.source_id))
    return ModelPage(
        model=model, runs=runs, reported=reported, contamination=run_contamination(session, runs)
    )


def run_contamination(session: Session, runs: Sequence[Run]) -> list[RunContamination]:
    """Every stored check that matches one of `runs`, with the run's scores without the tasks
    it flags (computed from the stored verdicts' counts, as inspect computes them)."""
    found: list[RunContamination] = []
    counts: dict[int, dict[str, tuple[int, int]]] = {}
    checks = stored_checks(session)
    for run in runs:
        for check in (check for check in checks if checks_run(check, run)):
            if run.id not in counts:
                counts[run.id] = _in_task_order(run_counts(session, [run.id])[run.id])
            flagged = flagged_tasks(check)
            threshold = check.thresholds.get("min_shared_ngrams")
            found.append(
                RunContamination(
                    run_id=run.id,
                    check_id=check.id,
                    source_name=check.source_name,
                    corpus=corpus_label(check),
                    corpus_sha256=check.corpus_sha256,
                    n=check.contaminated_n,
                    min_shared=threshold if isinstance(threshold, int) else None,
                    checked=check.task_count,
                    flagged=len(flagged),
                    scores=tuple(scores_without(counts[run.id], flagged)),
                )
            )
    return found


def _in_task_order(counts: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """As result files list the tasks: a mean over them then adds up in the same order as
    `passbench inspect`'s, to the last bit."""
    return {task: counts[task] for task in sorted(counts, key=task_order)}


def clean_score(
    counts: Mapping[str, tuple[int, int]], run: Run, checks: Sequence[ContaminationCheck]
) -> tuple[float, int] | None:
    """pass@1 (a fraction) on the run's tasks that no matching check flags, and how many
    tasks the checks flag; None when no stored check matches the run."""
    matching = [check for check in checks if checks_run(check, run)]
    if not matching:
        return None
    flagged = set().union(*(flagged_tasks(check) for check in matching))
    clean = scores_without(_in_task_order(counts), flagged)[1]
    return clean.pass_at_1, len(flagged.intersection(counts))


def model_document(page: ModelPage) -> dict[str, Any]:
    """A model's page as data (the app's `model` API): metadata, runs with provenance, the
    contamination checks of their tasks, reported scores. Fractions, as result files hold
    them (`pass_at_1` 0..1); reported scores in percent, as published."""
    model = page.model
    checks: dict[int, list[dict[str, Any]]] = {}
    for found in page.contamination:
        checks.setdefault(found.run_id, []).append(
            {
                "check_id": found.check_id,
                "file": found.source_name,
                "corpus": found.corpus,
                "corpus_sha256": found.corpus_sha256,
                "n": found.n,
                "min_shared_ngrams": found.min_shared,
                "tasks_checked": found.checked,
                "tasks_flagged": found.flagged,
                "scores": [
                    {"tasks": s.label, "count": s.tasks, "pass@1": s.pass_at_1}
                    for s in found.scores
                ],
            }
        )
    return {
        "model": model.name,
        "revision": model.revision,
        "metadata": {
            k: v.isoformat() if isinstance(v, _dt.date) else v
            for k, v in _metadata(model).items()
            if k not in ("model_id", "model")
        },
        "runs": [
            {
                "run_id": run.id,
                "badge": run.provenance,
                "benchmark": run.benchmark,
                "subset": run.subset,
                "split": run.split,
                "pass_at_1": run.pass_at_1,
                "n_tasks": run.n_tasks,
                "n_samples": run.n_samples,
                "harness_version": run.harness_version,
                "dataset_version": run.dataset_version,
                "dataset_sha256": run.dataset_sha256,
                "env_name": run.env_name,
                "env_lock_sha256": run.env_lock_sha256,
                "backend": run.backend,
                "isolation": run.isolation,
                "evaluated_at": run.evaluated_at,
                "contamination": checks.get(run.id, []),
                "triage": run.triage,
            }
            for run in page.runs
        ],
        "reported": [
            {
                "benchmark": s.benchmark,
                "subset": s.subset,
                "split": s.split,
                "pass_at_1_percent": s.pass_at_1_percent,
                "file": s.source.name,
            }
            for s in page.reported
        ],
    }


def model_named(session: Session, name: str) -> Model | None:
    return session.scalars(select(Model).where(Model.name == name).order_by(Model.id)).first()


def task_rows(session: Session, run_id: int) -> list[tuple[str, int, int]]:
    """(task, n, c) of a run, in task order."""
    rows = session.execute(
        select(TaskResult.task_id, TaskResult.n, TaskResult.c).where(TaskResult.run_id == run_id)
    ).all()
    return sorted(((t, n, c) for t, n, c in rows), key=lambda row: task_order(row[0]))


def run_results(session: Session, run_id: int) -> RunResults:
    """A stored run as passbench.stages.results reads it from files: what the comparison and the
    downloads work on, rebuilt from the stored verdicts."""
    run = session.get(Run, run_id)
    if run is None:
        raise LookupError(f"no run {run_id}")
    tasks: dict[str, tuple[SampleResult, ...]] = {}
    for task in sorted(run.tasks, key=lambda t: task_order(t.task_id)):
        tasks[task.task_id] = tuple(
            SampleResult(
                task_id=v.task_id,
                sample_index=v.sample_index,
                status=v.status,
                solution=v.solution,
                details=v.details,
                category=ErrorCategory(v.category) if v.category else None,
                reason=v.reason,
                duration_s=v.duration_s,
                wall_s=v.wall_s,
                tests_run=v.tests_run,
                isolation=v.isolation,
            )
            for v in sorted(task.samples, key=lambda v: v.sample_index)
        )
    settings = {"split": run.split, "subset": run.subset, "calibrated": run.calibrated}
    meta = dict(run.meta) or {}
    return RunResults(
        path=_run_path(run),
        date=run.evaluated_at,
        tasks=tasks,
        meta=meta,
        pass_at_k_file={"model": run.model.name, **settings, **run.pass_at_k},
        known_benchmark=run.benchmark,  # as stored at import, from the files' block or ids
    )


def _run_path(run: Run) -> Path:
    return Path(run.source_name or f"run-{run.id}_eval_results.json")


def compare(
    session: Session, run_a: int, run_b: int, options: Options | None = None
) -> PairComparison:
    """The paired comparison `passbench compare` prints, on two stored runs."""
    first, second = run_results(session, run_a), run_results(session, run_b)
    return compare_pair(first, second, options or Options(), names=(first.name, second.name))


def set_hidden(session: Session, run_id: int, hidden: bool = True) -> Run:
    """An admin hides a run from every view (or shows it again); nothing is deleted."""
    run = session.get(Run, run_id)
    if run is None:
        raise LookupError(f"no run {run_id}")
    run.hidden = hidden
    return run


def set_reported_hidden(
    session: Session,
    model_name: str,
    *,
    subset: str | None = None,
    split: str | None = None,
    hidden: bool = True,
) -> list[ReportedScore]:
    """An admin hides the scores published for a model (every file's; optionally one subset
    or split) from every view and the static build, or shows them again; nothing is deleted.
    The changed scores; LookupError when the model has none there."""
    query = select(ReportedScore).join(ReportedScore.model).where(Model.name == model_name)
    if subset is not None:
        query = query.where(ReportedScore.subset == subset)
    if split is not None:
        query = query.where(ReportedScore.split == split)
    scores = list(session.scalars(query.order_by(ReportedScore.id)).all())
    if not scores:
        where = "".join(f" {part}" for part in (subset, split) if part)
        raise LookupError(f"no reported score for {model_name!r}{where}")
    for score in scores:
        score.hidden = hidden
    return scores


def eval_results_file(session: Session, run_id: int) -> dict[str, Any]:
    """The run's `_eval_results.json` rebuilt from the store: the official fields of every
    sample, passbench's beside them, and the run's "passbench" block when it had one."""
    run = run_results(session, run_id)
    document: dict[str, Any] = {
        "date": run.date,
        "eval": {
            task_id: [
                {
                    "task_id": s.task_id,
                    "solution": s.solution,
                    "status": s.status,
                    "details": dict(s.details),
                    "sample_index": s.sample_index,
                    "category": s.category.value if s.category else None,
                    "reason": s.reason,
                    "duration_s": s.duration_s,
                    "wall_s": s.wall_s,
                    "tests_run": s.tests_run,
                    "isolation": s.isolation,
                }
                for s in samples
            ]
            for task_id, samples in run.tasks.items()
        },
    }
    if run.meta:
        document["passbench"] = dict(run.meta)
    return document


def samples_file(session: Session, run_id: int) -> list[dict[str, Any]]:
    """The run's samples as a samples `.jsonl` holds them: `{task_id, solution}` a line."""
    run = run_results(session, run_id)
    return [
        {"task_id": s.task_id, "solution": s.solution}
        for samples in run.tasks.values()
        for s in samples
    ]
