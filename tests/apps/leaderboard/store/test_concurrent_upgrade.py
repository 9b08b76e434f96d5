"""Creating or upgrading a store is safe when several processes do it at once (a web app and its
workers started together on a new store): every one opens it, and the schema is at head once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import OperationalError

from passbench.apps.leaderboard.store import database
from passbench.apps.leaderboard.store.database import (
    alembic_config,
    create_store_engine,
    current_revision,
)
from passbench.apps.leaderboard.store.models import Base
from passbench.core.errors import ResultsError

_PROCESSES = 4

# Each process imports everything first and says so, then waits for the word to open the store,
# so the migrations really run at once.
_OPEN_ON_GO = """
import sys, time
from pathlib import Path
from passbench.apps.leaderboard.store.database import open_store
url, ready, go = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
ready.touch()
while not go.exists():
    time.sleep(0.005)
open_store(url).close()
"""


def _open_together(url: str, tmp_path: Path) -> list[subprocess.CompletedProcess[str]]:
    src = str(Path(__file__).resolve().parents[4] / "src")
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{number}" for number in range(_PROCESSES)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN_ON_GO, url, str(flag), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
            cwd=tmp_path,
        )
        for flag in ready
    ]
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in ready):
        assert time.monotonic() < deadline, "the processes did not start"
        assert all(process.poll() is None for process in processes), "a process died early"
        time.sleep(0.01)
    go.touch()
    finished = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        finished.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return finished


def test_processes_creating_a_new_store_at_once_all_open_it(store_url: str, tmp_path: Path) -> None:
    finished = _open_together(store_url, tmp_path)
    assert [run.returncode for run in finished] == [0] * _PROCESSES, [
        run.stderr[-600:] for run in finished if run.returncode
    ]
    engine = create_store_engine(store_url)
    try:
        head = ScriptDirectory.from_config(alembic_config()).get_current_head()
        assert current_revision(engine) == head
        with engine.connect() as connection:
            versions = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        assert versions == [(head,)]  # one schema, recorded once
        tables = set(inspect(engine).get_table_names())
        assert set(Base.metadata.tables) <= tables
    finally:
        engine.dispose()


@pytest.mark.parametrize("revision", ["0001"])
def test_processes_upgrading_an_old_store_at_once_all_open_it(
    store_url: str, tmp_path: Path, revision: str
) -> None:
    from passbench.apps.leaderboard.store.database import upgrade

    engine = create_store_engine(store_url)
    try:
        upgrade(engine, revision)
        assert current_revision(engine) == revision
    finally:
        engine.dispose()
    finished = _open_together(store_url, tmp_path)
    assert [run.returncode for run in finished] == [0] * _PROCESSES, [
        run.stderr[-600:] for run in finished if run.returncode
    ]
    engine = create_store_engine(store_url)
    try:
        head = ScriptDirectory.from_config(alembic_config()).get_current_head()
        assert current_revision(engine) == head
    finally:
        engine.dispose()


def _locked() -> OperationalError:
    return OperationalError(
        "PRAGMA journal_mode=WAL", None, sqlite3.OperationalError("database is locked")
    )


def test_an_upgrade_sqlite_refused_at_once_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite answers "database is locked" without waiting where waiting could deadlock: the
    # whole upgrade (its own transaction) is tried again, a few times, then a one-line error
    engine = create_store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    real = database._upgrade_once
    calls: list[int] = []

    def flaky(engine: Engine, revision: str) -> None:
        calls.append(1)
        if len(calls) < 3:
            raise _locked()
        real(engine, revision)

    monkeypatch.setattr(database, "SQLITE_LOCKED_PAUSE_S", 0.0)
    monkeypatch.setattr(database, "_upgrade_once", flaky)
    database.upgrade(engine)
    assert len(calls) == 3 and current_revision(engine) == database.head_revision()

    def always(engine: Engine, revision: str) -> None:
        calls.append(1)
        raise _locked()

    calls.clear()
    monkeypatch.setattr(database, "_upgrade_once", always)
    with pytest.raises(ResultsError, match="database is locked"):
        database.upgrade(engine)
    assert len(calls) == database.SQLITE_LOCKED_ATTEMPTS
    engine.dispose()
