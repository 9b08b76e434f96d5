"""The grace after a sample's time limit counts only the time its child could run
(inside/_runner.py `_time_it_could_run`): waiting for a CPU on a loaded machine does not use
it up, so the verdict does not depend on load."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from passbench.stages.sandbox.inside import _runner

SPIN = "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass\n"


@pytest.mark.skipif(_runner._run_delay_s(os.getpid()) is None, reason="no /proc/PID/schedstat")
def test_time_spent_waiting_for_a_cpu_is_not_counted() -> None:
    cpu = min(os.sched_getaffinity(0))
    spinners = [
        subprocess.Popen(
            [sys.executable, "-c", SPIN], preexec_fn=lambda: os.sched_setaffinity(0, {cpu})
        )
        for _ in range(3)
    ]
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {cpu})  # this process now shares one CPU with three spinners
        since, delay_then = time.perf_counter(), _runner._run_delay_s(os.getpid())
        assert delay_then is not None
        end = since + 0.8
        while time.perf_counter() < end:  # runnable all along: what it waits is load
            pass
        now = time.perf_counter()
        could_run = _runner._time_it_could_run(os.getpid(), since, delay_then, now)
    finally:
        os.sched_setaffinity(0, before)
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    # four runnable processes on one CPU: it ran about a quarter of the time
    assert now - since >= 0.8
    assert could_run < 0.6 * (now - since), (could_run, now - since)


def test_an_idle_wait_counts_in_full() -> None:
    pid = os.getpid()
    since, delay_then = time.perf_counter(), _runner._run_delay_s(pid)
    if delay_then is None:
        pytest.skip("no /proc/PID/schedstat")
    time.sleep(0.3)  # sleeping is not waiting for a CPU: the official grace counts it
    now = time.perf_counter()
    assert _runner._time_it_could_run(pid, since, delay_then, now) > 0.25
