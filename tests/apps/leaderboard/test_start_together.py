"""`passbench leaderboard serve` and `passbench leaderboard worker` started at the same moment on
a new SQLite store, as a newcomer's script starts them: both come up and stay up (once, both
ran the migrations and the worker died with "table models already exists", leaving every job
queued forever)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from passbench.apps.leaderboard.store.database import (
    create_store_engine,
    current_revision,
    head_revision,
)

SRC = Path(__file__).resolve().parents[3] / "src"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.mark.slow
def test_serve_and_worker_started_together_on_a_new_store_both_stay_up(tmp_path: Path) -> None:
    database = tmp_path / "board.db"
    url = f"sqlite:///{database}"
    port = _free_port()
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
    }
    cli = [sys.executable, "-m", "passbench.apps.cli", "leaderboard"]
    commands = {
        "worker": [*cli, "worker", "--db", url, "--poll-s", "0.2"],
        "serve": [*cli, "serve", "--db", url, "--port", str(port)],
    }
    started = {
        name: subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
            cwd=tmp_path,
        )
        for name, command in commands.items()
    }
    try:
        deadline = time.monotonic() + 180
        while not _answers(f"http://127.0.0.1:{port}/"):
            for name, process in started.items():
                if process.poll() is not None:
                    pytest.fail(f"{name} exited {process.returncode}: {process.stderr.read()}")  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the app never answered"
            time.sleep(0.5)
        time.sleep(2.0)  # ten polls of the worker
        for name, process in started.items():
            if process.poll() is not None:
                pytest.fail(f"{name} exited {process.returncode}: {process.stderr.read()}")  # type: ignore[union-attr]
    finally:
        for process in started.values():
            process.terminate()
        for process in started.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    engine = create_store_engine(url)  # without upgrading: what the two processes left
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
