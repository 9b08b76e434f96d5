"""The results store's tables, as SQLAlchemy 2 typed declarative models.

What the leaderboard is built on (docs/leaderboard.md):

    models ──< runs ──< task_results ──< sample_verdicts      verified / imported: re-executable
       │         ▲
       │         └── jobs >── submissions >── submitters       the queue (store/queue.py)
       └──< reported_scores >── reported_sources               what the public leaderboard says

    contamination_checks ──< contaminated_tasks                 overlap files, matched to runs

A *run* is one evaluation whose per-sample verdicts we hold: imported from result files
(`provenance="imported"`) or scored by a leaderboard worker (`"verified"`). A *reported score* is a
number someone else published (the public BigCodeBench leaderboard): it lives in its own table,
so no query can mix it up with a score we can re-execute. A *contamination check* is an
imported `passbench contamination overlap` file: it names no model; a model page shows it beside
every run of the same benchmark, split and subset (web/board.py).

Enumerated columns are text with a CHECK constraint (portable between SQLite and PostgreSQL, and
readable in a plain SQL shell). Constraint names follow one convention so that Alembic migrations
name them the same on every database. The migrations in `migrations/versions/` must agree with
these classes: tests/apps/leaderboard/store/test_models.py compares them.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

#: A sha256 in hex.
SHA256 = String(64)

#: How a run's verdicts came to be: `verified` (a leaderboard worker executed the samples),
#: `imported` (read from result files someone gave us).
RUN_PROVENANCES = ("verified", "imported")
#: The result-file format a run was read from (passbench's carries the "passbench" block).
RUN_ORIGINS = ("passbench", "official")
SAMPLE_STATUSES = ("pass", "fail", "timeout")
#: A job's life: queued -> validating -> running (lease + heartbeat) -> scored; or rejected
#: (bad bundle, with a reason), failed (infrastructure, with a reason and log), cancelled.
JOB_STATES = ("queued", "validating", "running", "scored", "rejected", "failed", "cancelled")
#: The public leaderboard's `open-data` column.
OPEN_DATA_LEVELS = ("None", "Partial", "Full")


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_N_name)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        _dt.datetime: DateTime(timezone=True),
    }


class Model(Base):
    """A model as the leaderboard shows it: one row per (name, revision)."""

    __tablename__ = "models"
    __table_args__ = (
        UniqueConstraint("name", "revision"),
        CheckConstraint(
            "open_data IS NULL OR " + _one_of("open_data", OPEN_DATA_LEVELS), name="open_data"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    #: A Hugging Face commit, an API model version... "" when unknown (a unique key needs a value).
    revision: Mapped[str] = mapped_column(String(200), default="")
    link: Mapped[str | None] = mapped_column(Text)
    size_b: Mapped[float | None] = mapped_column(Float)  # parameters, billions
    active_params_b: Mapped[float | None] = mapped_column(Float)  # for MoE: active per token
    moe: Mapped[bool | None]
    licence: Mapped[str | None] = mapped_column(String(200))
    open_data: Mapped[str | None] = mapped_column(String(16))
    release_date: Mapped[_dt.date | None]
    #: True: chat/instruction model, prompted with the instruction template; False: base model.
    prompted: Mapped[bool | None]
    prefill: Mapped[bool | None]  # the leaderboard's `prefill`: the response was pre-filled
    #: Reasoning effort / thinking budget the model ran with, as the provider names them.
    reasoning: Mapped[dict[str, Any] | None]
    created_at: Mapped[_dt.datetime] = mapped_column(default=utcnow, server_default=func.now())

    runs: Mapped[list[Run]] = relationship(back_populates="model")
    reported: Mapped[list[ReportedScore]] = relationship(back_populates="model")


class Run(Base):
    """One evaluation with its per-sample verdicts; keyed by the hash of what it was read from."""

    __tablename__ = "runs"
    __table_args__ = (
        CheckConstraint(_one_of("provenance", RUN_PROVENANCES), name="provenance"),
        CheckConstraint(_one_of("origin", RUN_ORIGINS), name="origin"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    #: sha256 of the result files' bytes (eval results, then pass@k when present): importing
    #: the same files twice finds this row instead of adding one.
    content_sha256: Mapped[str] = mapped_column(SHA256, unique=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    provenance: Mapped[str] = mapped_column(String(16))
    origin: Mapped[str] = mapped_column(String(16))
    benchmark: Mapped[str | None] = mapped_column(String(64))
    dataset_version: Mapped[str | None] = mapped_column(String(64))
    split: Mapped[str | None] = mapped_column(String(32))
    subset: Mapped[str | None] = mapped_column(String(32))
    calibrated: Mapped[bool | None]
    n_tasks: Mapped[int]
    n_samples: Mapped[int]
    pass_at_1: Mapped[float]  # a fraction (0..1), computed from the verdicts, not the file's
    pass_at_k: Mapped[dict[str, Any]]  # {"pass@1": ..., "pass@5": ...} where n allows
    gt_pass_rate: Mapped[float | None]
    # provenance a model page shows
    harness_version: Mapped[str | None] = mapped_column(String(64))  # passbench's version
    dataset_sha256: Mapped[str | None] = mapped_column(SHA256)
    env_name: Mapped[str | None] = mapped_column(String(100))
    env_lock_sha256: Mapped[str | None] = mapped_column(SHA256)
    backend: Mapped[str | None] = mapped_column(String(64))
    isolation: Mapped[str | None] = mapped_column(String(32))
    evaluated_at: Mapped[str | None] = mapped_column(String(32))  # the file's `date`, as written
    source_name: Mapped[str | None] = mapped_column(Text)  # the file it was imported from
    meta: Mapped[dict[str, Any]]  # the file's "passbench" block, whole ({} for official files)
    # failing samples by cause and the extraction loss (analysis/report/triage.py), worked out
    # at import, where the raw answers and the ground truth's failures are still at hand
    triage: Mapped[dict[str, Any] | None]
    imported_at: Mapped[_dt.datetime] = mapped_column(default=utcnow, server_default=func.now())
    hidden: Mapped[bool] = mapped_column(default=False, server_default=false())  # by an admin

    model: Mapped[Model] = relationship(back_populates="runs")
    tasks: Mapped[list[TaskResult]] = relationship(
        back_populates="run", cascade="all, delete-orphan", passive_deletes=True
    )


class TaskResult(Base):
    """A run's result on one task: n samples, c passing (the input of pass@k)."""

    __tablename__ = "task_results"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    task_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    n: Mapped[int]
    c: Mapped[int]
    #: the task's language where the run's tasks differ in it (Aider's polyglot exercises),
    #: as the result file names it ("C++"); None where the benchmark has one language
    language: Mapped[str | None] = mapped_column(String(40))

    run: Mapped[Run] = relationship(back_populates="tasks")
    samples: Mapped[list[SampleVerdict]] = relationship(
        back_populates="task", cascade="all, delete-orphan", passive_deletes=True
    )


class SampleVerdict(Base):
    """One sample's verdict, with what the result file recorded about it."""

    __tablename__ = "sample_verdicts"
    __table_args__ = (
        ForeignKeyConstraint(
            ["run_id", "task_id"],
            ["task_results.run_id", "task_results.task_id"],
            ondelete="CASCADE",
        ),
        CheckConstraint(_one_of("status", SAMPLE_STATUSES), name="status"),
    )

    run_id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    sample_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(16))
    category: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(Text)
    duration_s: Mapped[float | None]
    wall_s: Mapped[float | None]
    tests_run: Mapped[int | None]
    isolation: Mapped[str | None] = mapped_column(String(32))
    solution: Mapped[str] = mapped_column(Text)
    details: Mapped[dict[str, Any]]  # failing test -> traceback

    task: Mapped[TaskResult] = relationship(back_populates="samples")


class ReportedSource(Base):
    """A file of published scores we imported (the public leaderboard's results.json), keyed by
    its content: importing it again adds nothing."""

    __tablename__ = "reported_sources"

    id: Mapped[int] = mapped_column(primary_key=True)
    content_sha256: Mapped[str] = mapped_column(SHA256, unique=True)
    name: Mapped[str] = mapped_column(Text)  # the file's name
    benchmark: Mapped[str] = mapped_column(String(64))
    subset: Mapped[str] = mapped_column(String(32))
    imported_at: Mapped[_dt.datetime] = mapped_column(default=utcnow, server_default=func.now())

    scores: Mapped[list[ReportedScore]] = relationship(
        back_populates="source", cascade="all, delete-orphan", passive_deletes=True
    )


class ReportedScore(Base):
    """A pass@1 someone else published, in percent as published. Never re-executed: shown with
    a "reported" badge, never ranked as verified."""

    __tablename__ = "reported_scores"
    __table_args__ = (UniqueConstraint("source_id", "model_id", "split"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(
        ForeignKey("reported_sources.id", ondelete="CASCADE"), index=True
    )
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    benchmark: Mapped[str] = mapped_column(String(64))
    subset: Mapped[str] = mapped_column(String(32))
    split: Mapped[str] = mapped_column(String(32))
    pass_at_1_percent: Mapped[float]
    #: Left off every board by an admin (`passbench leaderboard hide --reported`); a newer
    #: file's score for the same model and view inherits it when imported.
    hidden: Mapped[bool] = mapped_column(default=False, server_default=false())

    source: Mapped[ReportedSource] = relationship(back_populates="scores")
    model: Mapped[Model] = relationship(back_populates="reported")


class Submitter(Base):
    """Who submits: identified by a token, of which only the hash is stored."""

    __tablename__ = "submitters"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    token_sha256: Mapped[str] = mapped_column(SHA256, unique=True)
    is_admin: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[_dt.datetime] = mapped_column(default=utcnow, server_default=func.now())


class Submission(Base):
    """A bundle of samples someone asked the leaderboard to score."""

    __tablename__ = "submissions"

    id: Mapped[int] = mapped_column(primary_key=True)
    submitter_id: Mapped[int | None] = mapped_column(
        ForeignKey("submitters.id", ondelete="SET NULL"), index=True
    )
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    bundle_sha256: Mapped[str] = mapped_column(SHA256, index=True)
    benchmark: Mapped[str] = mapped_column(String(64))
    dataset_version: Mapped[str | None] = mapped_column(String(64))
    split: Mapped[str] = mapped_column(String(32))
    subset: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[_dt.datetime] = mapped_column(default=utcnow, server_default=func.now())
    hidden: Mapped[bool] = mapped_column(default=False, server_default=false())  # by an admin
    #: The bundle's manifest.json, parsed (store/bundle.py): generation settings, versions...
    manifest: Mapped[dict[str, Any] | None]
    #: The bundle's samples file, gzip-compressed, as submitted: what the worker evaluates
    #: (kept in the store so a worker on any machine can run the job).
    samples_gz: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: The tasks the server accepted it for (its `--tasks`; None: every task of the subset):
    #: what the worker scores, so the app and the workers cannot disagree.
    task_ids: Mapped[list[str] | None] = mapped_column(JSON)

    submitter: Mapped[Submitter | None] = relationship()
    model: Mapped[Model] = relationship()


class Job(Base):
    """A submission's trip through the queue. Its id is the bundle's content hash, so the same
    bundle submitted twice is one job. A worker claims a job by one conditional UPDATE (its
    state checked in the WHERE clause, so two workers never both win), keeps it by heartbeats,
    and a lease that expires returns it to the queue (store/queue.py)."""

    __tablename__ = "jobs"
    __table_args__ = (CheckConstraint(_one_of("state", JOB_STATES), name="state"),)

    id: Mapped[str] = mapped_column(SHA256, primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    state: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    reason: Mapped[str | None] = mapped_column(Text)  # why rejected / failed
    log: Mapped[str | None] = mapped_column(Text)  # a failed job's log tail
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    lease_owner: Mapped[str | None] = mapped_column(String(200))  # the worker holding it
    lease_expires_at: Mapped[_dt.datetime | None]
    heartbeat_at: Mapped[_dt.datetime | None]
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    created_at: Mapped[_dt.datetime] = mapped_column(default=utcnow, server_default=func.now())
    updated_at: Mapped[_dt.datetime] = mapped_column(
        default=utcnow, onupdate=utcnow, server_default=func.now()
    )

    submission: Mapped[Submission] = relationship()
    run: Mapped[Run | None] = relationship()


class ContaminationCheck(Base):
    """An overlap result file (`passbench contamination overlap -o FILE`): which tasks of a
    benchmark's split a corpus contains, under which rule. Keyed by the file's content, so
    importing it again adds nothing (store/contamination.py)."""

    __tablename__ = "contamination_checks"

    id: Mapped[int] = mapped_column(primary_key=True)
    content_sha256: Mapped[str] = mapped_column(SHA256, unique=True)
    source_name: Mapped[str] = mapped_column(Text)  # the file it was imported from
    benchmark: Mapped[str] = mapped_column(String(64))
    dataset_version: Mapped[str | None] = mapped_column(String(64))
    split: Mapped[str] = mapped_column(String(32))
    subset: Mapped[str | None] = mapped_column(String(32))
    dataset_sha256: Mapped[str | None] = mapped_column(SHA256)
    #: The corpus: sha256 over its files' names and bytes, its size, where it was read from.
    corpus_sha256: Mapped[str] = mapped_column(SHA256)
    corpus_bytes: Mapped[int] = mapped_column(BigInteger)  # a corpus can be many GB
    corpus_files: Mapped[int]
    corpus_documents: Mapped[int] = mapped_column(BigInteger)
    corpus_paths: Mapped[list[str]] = mapped_column(JSON)
    #: The rule: the n-gram sizes checked, the one whose hits flag a task, the thresholds.
    ns: Mapped[list[int]] = mapped_column(JSON)
    contaminated_n: Mapped[int]
    thresholds: Mapped[dict[str, Any]]
    tokenizer: Mapped[str] = mapped_column(Text)
    prompt_text: Mapped[str | None] = mapped_column(Text)
    task_count: Mapped[int]  # tasks checked
    harness_version: Mapped[str | None] = mapped_column(String(64))  # passbench's version
    imported_at: Mapped[_dt.datetime] = mapped_column(default=utcnow, server_default=func.now())

    tasks: Mapped[list[ContaminatedTask]] = relationship(
        back_populates="check", cascade="all, delete-orphan", passive_deletes=True
    )


class ContaminatedTask(Base):
    """A task a check flagged at one n (the file's `contaminated_by_n`): the tasks of the
    check's `contaminated_n` are its verdict; the other n are shown beside."""

    __tablename__ = "contaminated_tasks"

    check_id: Mapped[int] = mapped_column(
        ForeignKey("contamination_checks.id", ondelete="CASCADE"), primary_key=True
    )
    n: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    shared: Mapped[int | None]  # distinct n-grams the task shares with the corpus

    check: Mapped[ContaminationCheck] = relationship(back_populates="tasks")
