"""Where the store is (--db > PASSBENCH_DB > the user data folder), how SQLite is opened, and the
errors a user gets for a bad URL or an unreachable server."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest
from sqlalchemy import text

from passbench.apps.leaderboard.store.database import (
    create_store_engine,
    current_revision,
    default_url,
    open_store,
    store_url,
)
from passbench.core.errors import InputError, ResultsError


def test_the_url_comes_from_the_flag_then_the_environment_then_the_data_folder(
    tmp_path: Path,
) -> None:
    environ = {"PASSBENCH_DB": "postgresql+psycopg://u@h/db"}
    assert store_url("sqlite:///x.db", environ) == "sqlite:///x.db"
    assert store_url(None, environ) == "postgresql+psycopg://u@h/db"
    assert store_url(None, {"PASSBENCH_DB": " "}) == default_url()
    assert (
        default_url() == f"sqlite:///{Path(platformdirs.user_data_dir('passbench'))}/passbench.db"
    )
    assert store_url(str(tmp_path / "a.db"), {}) == f"sqlite:///{tmp_path / 'a.db'}"


def test_sqlite_enforces_foreign_keys_and_uses_wal(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'deep' / 'folder' / 'store.db'}")
    try:
        with store.engine.connect() as connection:
            assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert current_revision(store.engine) is not None
    finally:
        store.close()
    assert (tmp_path / "deep" / "folder" / "store.db").is_file()


def test_a_bad_url_is_an_input_error() -> None:
    with pytest.raises(InputError, match="not a database URL"):
        create_store_engine("::nonsense::")
    with pytest.raises(InputError, match="unknown database kind"):
        create_store_engine("nosuchdb://x/y")


def test_an_unreachable_server_is_a_one_line_error(postgres_server: str) -> None:
    port = int(postgres_server.rsplit(":", 1)[1].split("/")[0])
    url = f"postgresql+psycopg://passbench:secret@127.0.0.1:{port}/no_such_database"
    with pytest.raises(ResultsError) as raised:
        open_store(url)
    message = str(raised.value)
    assert "\n" not in message and "no_such_database" in message
    assert "secret" not in message  # the password is never printed
