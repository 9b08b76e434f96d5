"""Alembic's environment for the results store: run by
`passbench.apps.leaderboard.store.database.upgrade`
with the connection in `config.attributes["connection"]`, or on a URL from `sqlalchemy.url`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from passbench.apps.leaderboard.store.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as fresh:
        _run(fresh)


if context.is_offline_mode():
    raise SystemExit("the results store's migrations run online only (passbench db upgrade)")
run_migrations_online()
