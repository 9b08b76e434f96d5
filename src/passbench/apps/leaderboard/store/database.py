"""Opening the results store: an engine from a URL, sessions, and the schema at Alembic's head.

    --db URL  >  $PASSBENCH_DB  >  sqlite:///<user data folder>/passbench.db

Any SQLAlchemy URL works; `postgresql+psycopg://user:pass@host/db` for a shared deployment
(pip install 'passbench[store]' brings the driver). SQLite connections enforce foreign keys
(SQLite ignores them unless asked, per connection) and use WAL, so the web app can read while an
importer or a worker writes.

Opening a store upgrades its schema to the newest migration: a store is never read by code that
expects another schema. The migrations live inside the package (`migrations/`), configured here
in code, so no alembic.ini is needed wherever the user runs passbench.

Several processes may open a new or old store at the same moment (a web app and its workers
started together): one upgrades while the others wait, then find the schema at head. The lock
is an advisory lock held for the upgrade's transaction on PostgreSQL, and on SQLite an exclusive
`flock` on `<database file>.lock` beside it (SQLite runs DDL outside the transaction pysqlite
opens, so the database's own locks cannot keep two `CREATE TABLE`s apart). A store already at
head is opened without taking either.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import platformdirs
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from passbench.core.errors import InputError, ResultsError

#: Environment variable naming the store's URL.
DB_VARIABLE = "PASSBENCH_DB"
DB_FILE_NAME = "passbench.db"
MIGRATIONS = Path(__file__).parent / "migrations"
#: The PostgreSQL advisory lock held while a store's schema is upgraded (any fixed 64-bit key).
UPGRADE_LOCK_KEY = 0x70617373_62656E63  # "passbenc"


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
    # the wait first: turning a new store's journal to WAL takes a lock another process may hold
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def create_store_engine(url: str) -> Engine:
    """An engine for `url`, without touching the schema. Errors name the URL's problem."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise InputError(f"not a database URL: {url!r}", field="--db") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        folder = Path(parsed.database).expanduser().parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ResultsError(
                f"cannot open the store {url}: cannot create its folder {folder}: "
                f"{error.strerror or error}"
            ) from None
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


def head_revision() -> str | None:
    """The newest migration this passbench has."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


#: Attempts at an upgrade that SQLite answered "database is locked" without waiting, and the
#: first pause between them (doubling).
SQLITE_LOCKED_ATTEMPTS = 5
SQLITE_LOCKED_PAUSE_S = 0.1


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply the migrations up to `revision` (a no-op when the schema is there), safely while
    other processes do the same. A database that cannot be opened is a one-line ResultsError.

    SQLite may answer "database is locked" at once instead of waiting out its busy timeout (it
    does where waiting could deadlock; seen once in 4 processes opening a new store together on
    a loaded machine): the upgrade is then tried again from the start, a few times. Each attempt
    is a transaction of its own that reads the revision again, so nothing is applied twice."""
    for attempt in range(1, SQLITE_LOCKED_ATTEMPTS + 1):
        try:
            _upgrade_once(engine, revision)
            return
        except OperationalError as error:
            if not _sqlite_locked(engine, error) or attempt == SQLITE_LOCKED_ATTEMPTS:
                _raise_unopenable(engine, _first_line(error.orig))
            time.sleep(SQLITE_LOCKED_PAUSE_S * 2 ** (attempt - 1))
        except DBAPIError as error:
            _raise_unopenable(engine, _first_line(error.orig))
        except OSError as error:  # the lock file beside a SQLite database
            _raise_unopenable(engine, f"{error.strerror or error}: {error.filename}")


def _upgrade_once(engine: Engine, revision: str) -> None:
    if revision == "head" and current_revision(engine) == head_revision():
        return  # the usual case: nothing to do, no lock to take
    with _sqlite_upgrade_lock(engine), engine.begin() as connection:
        _postgres_upgrade_lock(connection)
        # alembic reads the revision again under the lock: a process that waited finds
        # what the one before it did and applies only what is still missing
        command.upgrade(alembic_config(connection), revision)


def _sqlite_locked(engine: Engine, error: OperationalError) -> bool:
    return engine.dialect.name == "sqlite" and "database is locked" in str(error.orig)


def _raise_unopenable(engine: Engine, why: str) -> NoReturn:
    store = engine.url.render_as_string(hide_password=True)
    raise ResultsError(f"cannot open the store {store}: {why}") from None


def _first_line(error: BaseException | None) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


@contextmanager
def _sqlite_upgrade_lock(engine: Engine) -> Iterator[None]:
    """An exclusive lock on `<database file>.lock` while a SQLite store is upgraded (nothing
    for other databases, or a SQLite database in memory, which no other process can see)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or database in (None, "", ":memory:"):
        yield
        return
    lock_path = Path(database).expanduser().with_name(Path(database).name + ".lock")
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # released when the file is closed
        yield


def _postgres_upgrade_lock(connection: Connection) -> None:
    """On PostgreSQL, wait for any other upgrade of this database, and hold its lock until
    this transaction ends (concurrent CREATE TABLEs would otherwise collide)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK_KEY})


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
