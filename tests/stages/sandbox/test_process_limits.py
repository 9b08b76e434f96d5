"""A process program's build limit counts the build's work, not its waits: a build that waits
(for a core on a loaded machine; here, asleep) past its limit goes on, one that computes past
it is timed out, and nothing outlives ten times the limit. Runs keep the wall-clock rule."""

from __future__ import annotations

import sys

import pytest

from passbench.core.records import BUILD_WALL_CAP, ProcessSpec
from passbench.stages.sandbox.inside import _process_style
from passbench.stages.sandbox.inside._process_style import (
    _BUILD_WALL_CAP,
    run_command,
    session_cpu_s,
)

BUSY = [sys.executable, "-c", "while True: pass"]


def test_a_build_that_waits_past_its_limit_is_not_timed_out() -> None:
    result = run_command(["sleep", "1.5"], "/tmp", 0.5, 1024, build=True)
    assert (result["timeout"], result["exit_code"]) == (False, 0)
    assert result["s"] >= 1.4


def test_a_run_that_waits_past_its_limit_is() -> None:
    result = run_command(["sleep", "5"], "/tmp", 0.5, 1024)
    assert result["timeout"] and result["s"] < 3


def test_a_build_that_computes_past_its_limit_is_timed_out() -> None:
    result = run_command(BUSY, "/tmp", 0.6, 1024, build=True)
    assert result["timeout"]
    # half its limit in CPU time, once it is past its limit: soon after the limit when idle
    assert result["s"] < 0.6 * BUILD_WALL_CAP


def test_no_build_outlives_ten_times_its_limit() -> None:
    result = run_command(["sleep", "30"], "/tmp", 0.3, 1024, build=True)
    assert result["timeout"]
    assert 0.3 * BUILD_WALL_CAP - 0.1 <= result["s"] < 0.3 * BUILD_WALL_CAP + 2


def test_the_cpu_count_sees_the_sessions_processes() -> None:
    import subprocess
    import time

    started = time.monotonic()
    busy = subprocess.Popen(BUSY, start_new_session=True)
    try:
        used = 0.0
        while used < 0.3 and time.monotonic() - started < 20:
            time.sleep(0.1)
            used = session_cpu_s(busy.pid)
        # one busy process: CPU time grows, never faster than the clock
        assert 0.3 <= used <= time.monotonic() - started + 0.05
        assert session_cpu_s(busy.pid + 10_000_000) == 0.0  # no such session
    finally:
        busy.kill()
        busy.wait()


def test_the_worker_backstop_leaves_room_for_a_waiting_build() -> None:
    assert BUILD_WALL_CAP == _BUILD_WALL_CAP  # one number, written in two places
    spec = ProcessSpec("a.ts", (("tsc", "{file}"),), ("node", "a.js"), 15.0, 10.0)
    assert spec.longest_s == 15.0 * BUILD_WALL_CAP + 10.0 + 5.0


def test_without_proc_a_build_keeps_the_wall_clock_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_proc(path: str) -> list[str]:
        raise FileNotFoundError(path)

    monkeypatch.setattr(_process_style.os, "listdir", no_proc)
    assert session_cpu_s(1) == float("inf")
    result = run_command(["sleep", "3"], "/tmp", 0.5, 1024, build=True)
    assert result["timeout"] and result["s"] < 2.5
