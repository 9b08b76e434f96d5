"""The migrations build exactly the schema the models describe, on SQLite and PostgreSQL, and
the database enforces what the models promise (foreign keys, checks, unique keys)."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from passbench.apps.leaderboard.store.database import (
    Store,
    create_store_engine,
    current_revision,
    upgrade,
)
from passbench.apps.leaderboard.store.models import Base, Job, Model, Run, Submission, TaskResult


def test_migrations_and_models_agree(store_url: str) -> None:
    engine = create_store_engine(store_url)
    try:
        upgrade(engine)
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
        assert diff == []
        assert set(inspect(engine).get_table_names()) == set(Base.metadata.tables) | {
            "alembic_version"
        }
    finally:
        engine.dispose()


def test_opening_a_store_upgrades_it_to_head_once(store_url: str) -> None:
    engine = create_store_engine(store_url)
    try:
        assert current_revision(engine) is None
        upgrade(engine)
        head = current_revision(engine)
        assert head is not None
        upgrade(engine)  # again: nothing to do
        assert current_revision(engine) == head
    finally:
        engine.dispose()


def _model(session: Session, name: str = "m") -> Model:
    model = Model(name=name)
    session.add(model)
    session.flush()
    return model


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(IntegrityError), store.transaction() as session:
        session.add(TaskResult(run_id=12345, task_id="BigCodeBench/0", n=1, c=1))


def test_a_job_state_outside_the_queue_states_is_refused(store: Store) -> None:
    with pytest.raises(IntegrityError), store.transaction() as session:
        model = _model(session)
        submission = Submission(
            model_id=model.id,
            bundle_sha256="a" * 64,
            benchmark="bigcodebench",
            split="complete",
            subset="full",
        )
        session.add(submission)
        session.flush()
        session.add(Job(id="a" * 64, submission_id=submission.id, state="half-done"))
    with store.transaction() as session:
        assert session.query(Job).count() == 0
        assert session.query(Model).count() == 0  # the whole transaction was rolled back


def test_a_model_name_and_revision_are_unique(store: Store) -> None:
    with store.transaction() as session:
        _model(session, "x")
    with pytest.raises(IntegrityError), store.transaction() as session:
        _model(session, "x")
    with store.transaction() as session:
        session.add(Model(name="x", revision="abc123"))
    with store.transaction() as session:
        assert session.query(Model).filter_by(name="x").count() == 2
        assert session.query(Run).count() == 0
