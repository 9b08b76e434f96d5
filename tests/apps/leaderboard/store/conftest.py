"""Fixtures: a real PostgreSQL server started from Debian's binaries for the session, and a
fresh database per test on it or in a SQLite file, so every store test runs on both."""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from passbench.apps.leaderboard.store.database import Store, open_store

#: The user the server runs as when the tests run as root (initdb refuses root).
_SERVER_USERS = ("postgres", "nobody")
_SUPERUSER = "passbench"


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_user() -> pwd.struct_passwd | None:
    """Who runs the server: None (ourselves) unless we are root, which initdb refuses."""
    if os.geteuid() != 0:
        return None
    for user in _SERVER_USERS:
        try:
            return pwd.getpwnam(user)
        except KeyError:
            continue
    pytest.fail("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")


def _as_server_user(argv: list[str]) -> list[str]:
    user = _server_user()
    return argv if user is None else ["runuser", "-u", user.pw_name, "--", *argv]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server on a free loopback port, in a temporary folder; yields the URL of
    its maintenance database. Stopped and deleted at the end of the session."""
    binaries = _postgres_bin()
    if binaries is None:
        pytest.fail(
            "PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): "
            "bash scripts/setup.sh --dev, or apt-get install postgresql"
        )
    folder = Path(tempfile.mkdtemp(prefix="passbench-pg-"))
    user = _server_user()
    if user is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
    data, port = folder / "data", _free_port()
    initdb = subprocess.run(
        _as_server_user(
            [
                str(binaries / "initdb"),
                *("-D", str(data), "-U", _SUPERUSER),
                *("--auth=trust", "--encoding=UTF8", "--no-sync"),
            ]
        ),
        capture_output=True,
        text=True,
    )
    if initdb.returncode != 0:
        pytest.fail(f"initdb failed: {initdb.stderr[-800:]}")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    started = subprocess.run(
        _as_server_user(
            [
                str(binaries / "pg_ctl"),
                *("-D", str(data), "-o", options, "-l", str(folder / "log")),
                *("-w", "-t", "60", "start"),
            ]
        ),
        capture_output=True,
        text=True,
    )
    if started.returncode != 0:
        log = (folder / "log").read_text(errors="replace") if (folder / "log").exists() else ""
        pytest.fail(f"PostgreSQL did not start: {started.stderr[-400:]} {log[-800:]}")
    try:
        yield f"postgresql+psycopg://{_SUPERUSER}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_server_user([str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


_numbers = itertools.count()


def fresh_postgres_database(server_url: str) -> str:
    import psycopg

    name = f"test_{os.getpid()}_{next(_numbers)}"
    plain = server_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return server_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database: a SQLite file in tmp, or a new database on the session's server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    server: str = request.getfixturevalue("postgres_server")
    return fresh_postgres_database(server)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """An open store (schema at head) on each kind of database."""
    opened = open_store(store_url)
    try:
        yield opened
    finally:
        opened.close()
