"""Opening the results store: an engine from a URL, sessions, and the schema at Alembic's head.

    --db URL  >  $PASSBENCH_DB  >  sqlite:///<user data folder>/passbench.db

Any SQLAlchemy URL works; `postgresql+psycopg://user:pass@host/db` for a shared deployment
(pip install 'passbench[store]' brings the driver). SQLite connections enforce foreign keys
(SQLite ignores them unless asked, per connection) and use WAL, so the web app can read while an
importer or a worker writes.

Opening a store upgrades its schema to the newest migration: a store is never read by code that
expects another schema. The migrations live inside the package (`migrations/`), configured here
in code, so no alembic.ini is needed wherever the user runs passbench.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from passbench.core.errors import InputError, ResultsError

#: Environment variable naming the store's URL.
DB_VARIABLE = "PASSBENCH_DB"
DB_FILE_NAME = "passbench.db"
MIGRATIONS = Path(__file__).parent / "migrations"


def default_url() -> str:
    """The SQLite file in the user data folder (~/.local/share/passbench on Linux)."""
    return f"sqlite:///{Path(platformdirs.user_data_dir('passbench')) / DB_FILE_NAME}"


def store_url(url: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """`url`, else $PASSBENCH_DB, else the default SQLite file. A bare path means SQLite."""
    env = os.environ if environ is None else environ
    chosen = url or env.get(DB_VARIABLE, "").strip() or default_url()
    if "://" not in chosen:
        chosen = f"sqlite:///{Path(chosen).expanduser().absolute()}"
    return chosen


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def create_store_engine(url: str) -> Engine:
    """An engine for `url`, without touching the schema. Errors name the URL's problem."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise InputError(f"not a database URL: {url!r}", field="--db") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    try:
        engine = create_engine(parsed)
    except NoSuchModuleError:
        raise InputError(f"unknown database kind in {url!r}", field="--db") from None
    except ModuleNotFoundError as error:
        raise InputError(
            f"the driver for {parsed.drivername} is not installed ({error.name}): "
            "pip install 'passbench[store]'",
            field="--db",
        ) from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def alembic_config(connection: Any = None) -> Config:
    """Alembic's configuration for the packaged migrations (no alembic.ini)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply the migrations up to `revision` (a no-op when the schema is there)."""
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), revision)
    except OperationalError as error:
        raise ResultsError(
            f"cannot open the store {engine.url.render_as_string(hide_password=True)}: "
            f"{str(error.orig).strip().splitlines()[0]}"
        ) from None


def current_revision(engine: Engine) -> str | None:
    """The migration the store is at (None: an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


@dataclass(frozen=True)
class Store:
    """An open store: its engine and a session factory."""

    engine: Engine
    sessions: sessionmaker[Session]

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work is committed at the end, or rolled back whole on any error."""
        with self.sessions() as session, session.begin():
            yield session

    def close(self) -> None:
        self.engine.dispose()


def open_store(url: str | None = None, environ: Mapping[str, str] | None = None) -> Store:
    """The store at `url` (see `store_url`), its schema upgraded to the newest migration."""
    engine = create_store_engine(store_url(url, environ))
    upgrade(engine)
    return Store(engine=engine, sessions=sessionmaker(engine, expire_on_commit=False))
