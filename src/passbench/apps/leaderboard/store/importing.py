"""Result files into the store: `passbench db import RESULTS...`.

Each file is read by passbench.stages.results (passbench's own files and the official evaluator's
alike,
validated there with the file and field named in every error), then written in one transaction:
a file that cannot be read or stored changes nothing, and the files before it stay imported.

A run is keyed by the sha256 of the bytes it was read from (the `_eval_results.json`, then its
`_pass_at_k.json` when there is one): importing the same files again finds the run and adds
nothing; a re-evaluated file is a new run. pass@k is computed from the verdicts, never copied
from the file, so a stored score always agrees with the stored verdicts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from passbench.analysis.report.categories import failure_of
from passbench.analysis.report.triage import triage, triage_dict
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.models import Model, Run, SampleVerdict, TaskResult
from passbench.core import scoring
from passbench.core.errors import InputError, ResultsFileError
from passbench.core.taskset import identity_from_meta
from passbench.stages.results import RunResults, load_results, task_order

#: The k values stored with a run (those its smallest number of samples per task allows).
STORED_KS = (1, 5, 10, 100)


@dataclass(frozen=True)
class Imported:
    """What importing one file did: the run it is stored as, and whether it was new."""

    path: Path
    run_id: int
    model: str
    created: bool
    n_tasks: int
    n_samples: int
    pass_at_1: float


def content_sha256(run: RunResults) -> str:
    """The hash a run is stored under: its result files' bytes."""
    digest = hashlib.sha256(run.path.read_bytes())
    if run.pass_at_k_path is not None and run.pass_at_k_path != run.path:
        digest.update(b"\0" + run.pass_at_k_path.read_bytes())
    return digest.hexdigest()


def import_results(store: Store, path: str | Path, *, provenance: str = "imported") -> Imported:
    """Store the run in `path` (an `_eval_results.json`, or its `_pass_at_k.json`)."""
    run = load_results(path)
    if run.pass_at_k_path == run.path:
        raise ResultsFileError(
            "a ground_truth.json is not a model's run; import _eval_results.json files",
            path=run.path,
        )
    counts = run.counts()
    if not counts:
        raise ResultsFileError("has no samples to store", path=run.path, field="eval")
    digest = content_sha256(run)
    try:
        return _store_run(store, run, counts, digest, provenance)
    except (IntegrityError, DataError) as error:
        raise ResultsFileError(f"cannot be stored: {first_line(error)}", path=run.path) from None


def first_line(error: DBAPIError) -> str:
    """The database's own message, first line: what a user can act on."""
    return (
        str(error.orig).strip().splitlines()[0] if str(error.orig).strip() else type(error).__name__
    )


def _store_run(
    store: Store,
    run: RunResults,
    counts: Mapping[str, tuple[int, int]],
    digest: str,
    provenance: str,
) -> Imported:
    with store.transaction() as session:
        row, created = add_run(session, run, digest, provenance, counts=counts)
        return Imported(
            path=run.path,
            run_id=row.id,
            model=row.model.name,
            created=created,
            n_tasks=row.n_tasks,
            n_samples=row.n_samples,
            pass_at_1=row.pass_at_1,
        )


def add_run(
    session: Session,
    run: RunResults,
    digest: str,
    provenance: str,
    *,
    model: Model | None = None,
    counts: Mapping[str, tuple[int, int]] | None = None,
) -> tuple[Run, bool]:
    """The run stored under `digest` in `session` (flushed, so it has its id), and whether it
    is new. `model`: the model it belongs to (default: the one the file names, revision "");
    a leaderboard worker passes the submission's."""
    found = session.scalar(select(Run).where(Run.content_sha256 == digest))
    if found is not None:
        return found, False
    check_task_set(session, run)
    row = _run_row(run, counts if counts is not None else run.counts(), digest, provenance)
    row.model = model if model is not None else model_named(session, run.name)
    session.add(row)
    session.flush()
    return row, True


def check_task_set(session: Session, run: RunResults) -> None:
    """Refuse a run measured on another version of its benchmark's tasks than the runs its
    boards already rank (another version, or other bytes under the same version): one board
    never ranks two task sets together. Hidden runs do not count (hiding the old version's
    runs makes room for the new one); a run without a known task set is let in."""
    identity = identity_from_meta(run.meta)
    if identity is None:
        return
    other = session.execute(
        select(Run.id, Run.dataset_version, Run.dataset_sha256).where(
            Run.benchmark == identity.benchmark,
            ~Run.hidden,
            Run.dataset_version.is_not(None),
            Run.dataset_sha256.is_not(None),
            (Run.dataset_version != identity.version) | (Run.dataset_sha256 != identity.sha256),
        )
    ).first()
    if other is not None:
        run_id, version, sha = other
        raise InputError(
            f"cannot rank runs of different task versions together: the {identity.benchmark} "
            f"boards hold {version} (sha256 {str(sha)[:12]}, run {run_id}), this run is "
            f"{identity.version} (sha256 {identity.sha256[:12]}); hide those runs "
            "(passbench db hide RUN_ID) or use another store",
            path=run.path,
            field="task_set",
        )


def model_named(session: Session, name: str, revision: str = "") -> Model:
    """The model row for (name, revision), created when missing."""
    model = session.scalar(select(Model).where(Model.name == name, Model.revision == revision))
    if model is None:
        model = Model(name=name, revision=revision)
        session.add(model)
    return model


def _run_row(
    run: RunResults, counts: Mapping[str, tuple[int, int]], digest: str, provenance: str
) -> Run:
    meta = dict(run.meta)
    evalenv = _mapping(meta.get("evalenv"))
    backend = _mapping(meta.get("backend"))
    table = scoring.pass_at_k_table(counts, STORED_KS)
    row = Run(
        content_sha256=digest,
        provenance=provenance,
        origin=run.origin,
        benchmark=run.benchmark,
        dataset_version=run.dataset_version,
        split=run.split,
        subset=run.subset,
        calibrated=run.calibrated,
        n_tasks=len(counts),
        n_samples=sum(n for n, _ in counts.values()),
        pass_at_1=table["pass@1"],
        pass_at_k=table,
        gt_pass_rate=run.gt_pass_rate,
        harness_version=_text(meta.get("passbench_version")),
        dataset_sha256=_text(meta.get("dataset_sha256")),
        env_name=_text(evalenv.get("name")),
        env_lock_sha256=_text(evalenv.get("lock_sha256")) or None,
        backend=_text(backend.get("name")),
        isolation=run.isolation,
        evaluated_at=run.date,
        source_name=run.path.name,
        meta=meta,
        triage=run_triage(run),
    )
    for task_id, samples in run.tasks.items():
        if not samples:
            continue
        n, c = counts[task_id]
        languages = {sample.language for sample in samples}
        task = TaskResult(
            task_id=task_id, n=n, c=c, language=languages.pop() if len(languages) == 1 else None
        )
        task.samples = [
            SampleVerdict(
                task_id=task_id,
                sample_index=sample.sample_index,
                status=sample.status,
                category=sample.category.value if sample.category is not None else None,
                reason=sample.reason,
                duration_s=sample.duration_s,
                wall_s=sample.wall_s,
                tests_run=sample.tests_run,
                isolation=sample.isolation,
                solution=sample.solution,
                details=dict(sample.details),
            )
            for sample in samples
        ]
        row.tasks.append(task)
    return row


def run_triage(run: RunResults) -> dict[str, Any]:
    """Why the run's samples failed, by cause, as `passbench inspect` classifies them; without
    the task data here, any function the raw answer defines counts as its code."""
    failures = {
        task: [failure_of(sample) for sample in samples] for task, samples in run.tasks.items()
    }
    gt: dict[str, Mapping[str, Any]] = {task: {} for task in run.gt_failed_tasks}
    gt.update(run.gt_failures)
    result = triage(
        run.tasks,
        failures,
        entry_points={},
        libs={},
        gt_failures=gt,
        order=sorted(run.tasks, key=task_order),
    )
    return dict(triage_dict(result))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
