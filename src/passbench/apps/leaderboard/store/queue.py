"""The submission queue: submit a bundle, claim a job, keep it by heartbeats, finish it.

    submit_bundle(session, bundle, token, benchmarks=BenchmarkData(paths)) -> Job   queued
    job_status(session, job_id) -> JobStatus                       what a submitter sees
    queue_listing(session) -> list[JobStatus]                      the queue tab's rows
    claim_job(store, worker) -> ClaimedJob | None                  queued -> validating
    heartbeat(store, job_id, worker) -> bool                       False: the lease is lost
    start_running / complete_job / fail_job / reject_job           the worker's transitions
    cancel_job / hide_submission / delete_submission               by the owner or an admin

A job's life (models.JOB_STATES): queued -> validating -> running -> scored; or rejected (the
bundle does not hold up against the worker's data), failed (with a reason and log), cancelled.

Two workers never take the same job: a claim is one UPDATE whose WHERE clause requires the
job to still be queued (SQLite serialises writers; PostgreSQL re-checks the WHERE clause after
waiting for a competing claim, and SKIP LOCKED lets claimers pass each other). Every later
transition is conditional on the claimer still holding the lease, so a worker that lost its
job (lease expired and re-queued, or cancelled) can change nothing. A lease that expires (the
worker died) puts the job back in the queue; after `max_attempts` claims it fails instead.

Submitters are identified by a token they choose; only its sha256 is stored. The admin token
comes from the deployment's settings (`[leaderboard] admin_token`, PASSBENCH_ADMIN_TOKEN).
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import CursorResult, Table, Update, func, select, update
from sqlalchemy.orm import Session

from passbench.apps.leaderboard.store.bundle import (
    DEFAULT_MAX_BYTES,
    MANIFEST_NAME,
    Bundle,
    check_bundle,
)
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import model_named
from passbench.apps.leaderboard.store.models import Job, Submission, Submitter, utcnow
from passbench.core.errors import PermissionDenied, SubmissionRejected, UnknownNameError
from passbench.core.settings import Paths
from passbench.stages.benchmarks import Benchmark, LoadedBenchmark, get_benchmark, load_benchmark
from passbench.stages.benchmarks.base import check_version

#: Jobs that hold their (model, revision, benchmark, subset, split) against a new bundle.
ACTIVE_STATES = ("queued", "validating", "running", "scored")
#: States a worker holds with a lease.
LEASED_STATES = ("validating", "running")
#: What job_status shows of a log.
LOG_TAIL_LINES = 40
MIN_TOKEN_LENGTH = 16

_jobs = cast(Table, Job.__table__)


def _changed(session: Session, statement: Update) -> int:
    """Rows an UPDATE changed: how a conditional transition knows it won."""
    result = cast("CursorResult[Any]", session.execute(statement))
    return int(result.rowcount or 0)


@dataclass(frozen=True)
class QueuePolicy:
    """What a deployment accepts and how long a worker may go silent."""

    max_bundle_bytes: int = DEFAULT_MAX_BYTES
    max_samples: int = 200_000
    rate_limit: int = 10  # submissions per submitter per window
    rate_window_s: float = 24 * 3600.0
    #: The tasks scored (None: every task of the subset); a small deployment or a test sets it.
    #: Recorded on each submission: the worker scores those, so app and workers agree.
    task_ids: tuple[str, ...] | None = None
    #: benchmark -> the dataset version scored (missing: the benchmark's default version).
    dataset_versions: Mapping[str, str] = field(default_factory=dict)
    lease_s: float = 300.0
    max_attempts: int = 3
    admin_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class JobStatus:
    """What a submitter sees of a job."""

    job_id: str
    state: str
    position: int | None  # 1 = next to be claimed; None unless queued
    reason: str | None
    log_tail: str
    pass_at_1: float | None  # a fraction, once scored
    attempts: int
    model: str
    revision: str
    benchmark: str
    subset: str
    split: str
    submitted_at: _dt.datetime
    updated_at: _dt.datetime
    run_id: int | None
    hidden: bool


@dataclass(frozen=True)
class ClaimedJob:
    """A job a worker holds: `worker` is the lease owner every later transition checks."""

    job_id: str
    worker: str
    attempt: int


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _aware(moment: _dt.datetime) -> _dt.datetime:
    """SQLite gives back naive datetimes; everything stored is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=_dt.timezone.utc)


# ---- identity --------------------------------------------------------------------------------


def _check_token(token: str) -> None:
    if len(token) < MIN_TOKEN_LENGTH:
        raise SubmissionRejected(
            f"a token needs at least {MIN_TOKEN_LENGTH} characters", code="token", field="token"
        )


def submitter_for(session: Session, token: str, *, name: str | None = None) -> Submitter:
    """The submitter a token identifies, registered under `name` on first use."""
    _check_token(token)
    digest = hash_token(token)
    found = session.scalar(select(Submitter).where(Submitter.token_sha256 == digest))
    if found is None:
        found = Submitter(name=name or "anonymous", token_sha256=digest)
        session.add(found)
        session.flush()
    return found


def is_admin(session: Session, token: str, policy: QueuePolicy) -> bool:
    if policy.admin_token and hmac.compare_digest(token, policy.admin_token):
        return True
    digest = hash_token(token)
    return bool(
        session.scalar(
            select(Submitter.is_admin).where(Submitter.token_sha256 == digest, Submitter.is_admin)
        )
    )


def _may_change(session: Session, submission: Submission, token: str, policy: QueuePolicy) -> bool:
    if is_admin(session, token, policy):
        return True
    owner = submission.submitter
    return owner is not None and hmac.compare_digest(owner.token_sha256, hash_token(token))


# ---- submitting ------------------------------------------------------------------------------


class BenchmarkData:
    """The benchmark data bundles are checked against, loaded once per (benchmark, version,
    subset): keep one for the life of the process that takes submissions."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self._loaded: dict[tuple[str, str, str], tuple[Benchmark, LoadedBenchmark]] = {}

    def get(
        self, name: str, version: str | None, subset: str, *, where: str
    ) -> tuple[Benchmark, LoadedBenchmark]:
        """The benchmark and its data; SubmissionRejected naming `where` for unknown names."""
        try:
            benchmark = get_benchmark(name)
            version = check_version(benchmark, version)
            if subset not in benchmark.info.subsets:
                raise UnknownNameError(
                    f"unknown subset {subset!r}; choose one of: "
                    + ", ".join(benchmark.info.subsets),
                    field="subset",
                )
        except UnknownNameError as error:
            raise SubmissionRejected(
                error.bare_message, code="format", path=where, field=error.field
            ) from None
        key = (name, version, subset)
        if key not in self._loaded:
            paths = self.paths
            loaded = load_benchmark(
                name,
                version=version,
                subset=subset,
                data_dir=paths.data_dir,
                cache_dir=paths.cache_dir,
                mirror=paths.mirror,
                download=not paths.offline,
            )
            self._loaded[key] = (benchmark, loaded)
        return self._loaded[key]


def submit_bundle(
    session: Session,
    bundle: Bundle,
    token: str,
    *,
    benchmarks: BenchmarkData,
    policy: QueuePolicy | None = None,
    submitter_name: str | None = None,
    now: _dt.datetime | None = None,
) -> Job:
    """Check `bundle` and queue it; the job already queued when this bundle was sent before.

    Raises SubmissionRejected, having added nothing to the session, naming the check that
    refused it: token, size, format (manifest or samples), dataset (version or hash),
    coverage, duplicate (this model, revision, benchmark, subset and split has an active job)
    or rate_limit. Reading the bundle and the benchmark data runs no submitted code.
    """
    policy = policy or QueuePolicy()
    now = now or utcnow()
    _check_token(token)
    if bundle.size > policy.max_bundle_bytes:
        raise SubmissionRejected(
            f"larger than the limit of {policy.max_bundle_bytes} bytes",
            code="size",
            path=bundle.name,
        )
    existing = session.get(Job, bundle.sha256)
    if existing is not None:
        return existing
    manifest = bundle.manifest
    benchmark, loaded = benchmarks.get(
        manifest.benchmark,
        policy.dataset_versions.get(manifest.benchmark),
        manifest.subset,
        where=f"{bundle.name}/{MANIFEST_NAME}",
    )
    check_bundle(
        bundle, benchmark, loaded, task_ids=policy.task_ids, max_samples=policy.max_samples
    )
    _check_rate(session, hash_token(token), policy, now)
    _check_duplicate(session, bundle)
    submitter = submitter_for(session, token, name=submitter_name)

    model = model_named(session, manifest.model, manifest.revision)
    model.link = model.link or manifest.link
    model.size_b = model.size_b if model.size_b is not None else manifest.size_b
    model.prompted = model.prompted if model.prompted is not None else manifest.prompted
    submission = Submission(
        submitter=submitter,
        model=model,
        bundle_sha256=bundle.sha256,
        benchmark=manifest.benchmark,
        dataset_version=loaded.version,
        split=manifest.split,
        subset=manifest.subset,
        created_at=now,
        manifest=dict(manifest.data),
        samples_gz=gzip.compress(bundle.samples_bytes, mtime=0),
        task_ids=list(policy.task_ids) if policy.task_ids is not None else None,
    )
    job = Job(id=bundle.sha256, submission=submission, state="queued", created_at=now)
    session.add_all([submission, job])
    session.flush()
    return job


def _check_rate(
    session: Session, token_sha256: str, policy: QueuePolicy, now: _dt.datetime
) -> None:
    since = now - _dt.timedelta(seconds=policy.rate_window_s)
    recent = session.scalar(
        select(func.count())
        .select_from(Submission)
        .join(Submitter, Submission.submitter_id == Submitter.id)
        .where(Submitter.token_sha256 == token_sha256, Submission.created_at >= since)
    )
    if (recent or 0) >= policy.rate_limit:
        hours = policy.rate_window_s / 3600
        raise SubmissionRejected(
            f"rate limit: {recent} submissions in the last {hours:g} hours (the limit is "
            f"{policy.rate_limit}); try again later",
            code="rate_limit",
        )


def _check_duplicate(session: Session, bundle: Bundle) -> None:
    manifest = bundle.manifest
    found = session.scalar(
        select(Job)
        .join(Submission, Job.submission_id == Submission.id)
        .where(
            Submission.benchmark == manifest.benchmark,
            Submission.subset == manifest.subset,
            Submission.split == manifest.split,
            Job.state.in_(ACTIVE_STATES),
            Submission.model.has(name=manifest.model, revision=manifest.revision),
        )
        .limit(1)
    )
    if found is not None:
        raise SubmissionRejected(
            f"{manifest.model} (revision {manifest.revision or '-'}) already has a "
            f"{manifest.benchmark} {manifest.subset} {manifest.split} submission (job "
            f"{found.id[:12]}, {found.state}); a new revision needs its own `revision`",
            code="duplicate",
            path=f"{bundle.name}/{MANIFEST_NAME}",
            field="model.revision",
        )


# ---- what a submitter sees -------------------------------------------------------------------


def job_status(session: Session, job_id: str) -> JobStatus:
    """The job's state, queue position, reason, log tail and pass@1 (KeyError: no such job)."""
    job = session.get(Job, job_id)
    if job is None:
        raise KeyError(job_id)
    position = None
    if job.state == "queued":
        ahead = session.scalar(
            select(func.count())
            .select_from(Job)
            .where(
                Job.state == "queued",
                (Job.created_at < job.created_at)
                | ((Job.created_at == job.created_at) & (Job.id < job.id)),
            )
        )
        position = (ahead or 0) + 1
    submission = job.submission
    log = job.log or ""
    return JobStatus(
        job_id=job.id,
        state=job.state,
        position=position,
        reason=job.reason,
        log_tail="\n".join(log.splitlines()[-LOG_TAIL_LINES:]),
        pass_at_1=job.run.pass_at_1 if job.run is not None and job.state == "scored" else None,
        attempts=job.attempts,
        model=submission.model.name,
        revision=submission.model.revision,
        benchmark=submission.benchmark,
        subset=submission.subset,
        split=submission.split,
        submitted_at=_aware(submission.created_at),
        updated_at=_aware(job.updated_at),
        run_id=job.run_id,
        hidden=submission.hidden,
    )


def queue_listing(session: Session, limit: int = 50) -> list[JobStatus]:
    """What the queue shows everyone: the jobs in the queue or with a worker, in queue order,
    then the latest finished ones (hidden entries left out), `limit` in all."""
    visible = select(Job).join(Submission, Job.submission_id == Submission.id)
    visible = visible.where(~Submission.hidden)
    active = session.scalars(
        visible.where(Job.state.in_(("queued", *LEASED_STATES))).order_by(Job.created_at, Job.id)
    ).all()
    finished = session.scalars(
        visible.where(Job.state.not_in(("queued", *LEASED_STATES)))
        .order_by(Job.updated_at.desc(), Job.id)
        .limit(max(0, limit - len(active)))
    ).all()
    return [job_status(session, job.id) for job in [*active, *finished][:limit]]


# ---- the worker's side -----------------------------------------------------------------------


def expire_leases(
    session: Session, policy: QueuePolicy | None = None, now: _dt.datetime | None = None
) -> int:
    """Return jobs whose worker went silent past its lease to the queue; fail those claimed
    `max_attempts` times already. The number of jobs changed."""
    policy = policy or QueuePolicy()
    now = now or utcnow()
    expired = (_jobs.c.state.in_(LEASED_STATES), _jobs.c.lease_expires_at < now)
    cleared = {"lease_owner": None, "lease_expires_at": None, "updated_at": now}
    gave_up = _changed(
        session,
        update(_jobs)
        .where(*expired, _jobs.c.attempts >= policy.max_attempts)
        .values(
            state="failed",
            reason=f"its worker stopped answering on each of {policy.max_attempts} attempts "
            "(lease expired)",
            **cleared,
        ),
    )
    requeued = _changed(
        session,
        update(_jobs)
        .where(*expired, _jobs.c.attempts < policy.max_attempts)
        .values(state="queued", **cleared),
    )
    return gave_up + requeued


def claim_job(
    store: Store, worker: str, policy: QueuePolicy | None = None, now: _dt.datetime | None = None
) -> ClaimedJob | None:
    """Take the oldest queued job (after expiring silent workers' leases), or None."""
    policy = policy or QueuePolicy()
    moment = now or utcnow()
    with store.transaction() as session:
        expire_leases(session, policy, moment)
    oldest = (
        select(_jobs.c.id)
        .where(_jobs.c.state == "queued")
        .order_by(_jobs.c.created_at, _jobs.c.id)
        .limit(1)
        .with_for_update(skip_locked=True)  # PostgreSQL: pass jobs other claimers are taking
        .scalar_subquery()
    )
    claim = (
        update(_jobs)
        .where(_jobs.c.id == oldest, _jobs.c.state == "queued")
        .values(
            state="validating",
            lease_owner=worker,
            lease_expires_at=moment + _dt.timedelta(seconds=policy.lease_s),
            heartbeat_at=moment,
            attempts=_jobs.c.attempts + 1,
            reason=None,
            updated_at=moment,
        )
        .returning(_jobs.c.id, _jobs.c.attempts)
    )
    queued = select(func.count()).select_from(Job).where(Job.state == "queued")
    for _ in range(20):
        with store.transaction() as session:
            won = session.execute(claim).first()
            if won is not None:
                return ClaimedJob(job_id=won.id, worker=worker, attempt=won.attempts)
            if not session.scalar(queued):
                return None
        # another claimer took the oldest between our subquery and our update: try again
    return None


def _held(job_id: str, worker: str, states: tuple[str, ...] = LEASED_STATES) -> tuple[Any, ...]:
    return (_jobs.c.id == job_id, _jobs.c.lease_owner == worker, _jobs.c.state.in_(states))


def heartbeat(
    store: Store,
    job_id: str,
    worker: str,
    policy: QueuePolicy | None = None,
    *,
    log: str | None = None,
    now: _dt.datetime | None = None,
) -> bool:
    """Extend the lease (and store the log so far); False when the job is no longer ours."""
    policy = policy or QueuePolicy()
    now = now or utcnow()
    values: dict[str, Any] = {
        "lease_expires_at": now + _dt.timedelta(seconds=policy.lease_s),
        "heartbeat_at": now,
        "updated_at": now,
    }
    if log is not None:
        values["log"] = log
    with store.transaction() as session:
        return bool(_changed(session, update(_jobs).where(*_held(job_id, worker)).values(**values)))


def _transition(session: Session, job: ClaimedJob, states: tuple[str, ...], **values: Any) -> bool:
    values.setdefault("updated_at", utcnow())
    statement = update(_jobs).where(*_held(job.job_id, job.worker, states)).values(**values)
    return bool(_changed(session, statement))


def start_running(session: Session, job: ClaimedJob) -> bool:
    """validating -> running, once the bundle held up against the worker's data."""
    return _transition(session, job, ("validating",), state="running")


def complete_job(session: Session, job: ClaimedJob, run_id: int, log: str) -> bool:
    """running -> scored with its run; False (the caller rolls back) when the lease was lost."""
    return _transition(
        session,
        job,
        ("running",),
        state="scored",
        run_id=run_id,
        log=log,
        lease_owner=None,
        lease_expires_at=None,
    )


def fail_job(session: Session, job: ClaimedJob, reason: str, log: str) -> bool:
    """-> failed: the evaluation could not be done (not the samples' fault)."""
    return _transition(
        session, job, LEASED_STATES, state="failed", reason=reason, log=log, lease_expires_at=None
    )


def reject_job(session: Session, job: ClaimedJob, reason: str) -> bool:
    """validating -> rejected: the bundle does not hold up against the worker's data."""
    return _transition(
        session, job, ("validating",), state="rejected", reason=reason, lease_expires_at=None
    )


def bundle_of(session: Session, job_id: str) -> tuple[Submission, bytes]:
    """A job's submission and its samples file's bytes."""
    job = session.get(Job, job_id)
    if job is None:
        raise KeyError(job_id)
    submission = job.submission
    return submission, gzip.decompress(submission.samples_gz or b"")


# ---- owners and admins -----------------------------------------------------------------------


def _owned_submission(
    session: Session, job_id: str, token: str, policy: QueuePolicy
) -> tuple[Job, Submission]:
    job = session.get(Job, job_id)
    if job is None:
        raise KeyError(job_id)
    if not _may_change(session, job.submission, token, policy):
        raise PermissionDenied(f"job {job_id[:12]} belongs to another submitter")
    return job, job.submission


def cancel_job(
    session: Session, job_id: str, token: str, policy: QueuePolicy | None = None
) -> bool:
    """Cancel a job not finished yet (its owner or an admin); False when it had finished. A
    worker running it loses its lease at its next heartbeat and publishes nothing."""
    policy = policy or QueuePolicy()
    _owned_submission(session, job_id, token, policy)
    changed = _changed(
        session,
        update(_jobs)
        .where(_jobs.c.id == job_id, _jobs.c.state.in_(("queued", *LEASED_STATES)))
        .values(state="cancelled", lease_owner=None, lease_expires_at=None, updated_at=utcnow()),
    )
    session.expire_all()
    return bool(changed)


def hide_submission(
    session: Session,
    job_id: str,
    token: str,
    policy: QueuePolicy | None = None,
    *,
    hidden: bool = True,
) -> None:
    """Hide (or show again) an entry and its run: admins only."""
    policy = policy or QueuePolicy()
    if not is_admin(session, token, policy):
        raise PermissionDenied("only an admin can hide an entry")
    job, submission = _owned_submission(session, job_id, token, policy)
    submission.hidden = hidden
    if job.run is not None:
        job.run.hidden = hidden


def delete_submission(
    session: Session, job_id: str, token: str, policy: QueuePolicy | None = None
) -> None:
    """Delete an entry: the submission, its job and the run it produced (its owner or an
    admin). A worker still running it can no longer publish (its job is gone)."""
    policy = policy or QueuePolicy()
    job, submission = _owned_submission(session, job_id, token, policy)
    run = job.run
    session.delete(job)
    session.delete(submission)
    if run is not None:
        session.delete(run)
    session.flush()
