"""The journal keeps every committed verdict, keyed by run fingerprint and program source."""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

from passbench.core.journal import Journal, program_sha
from passbench.core.records import ErrorCategory, ExecResult, Isolation


def result(task: str, status: str = "pass") -> ExecResult:
    return ExecResult(
        key=f"{task}#0",
        task_id=task,
        status=status,  # type: ignore[arg-type]
        category=None if status == "pass" else ErrorCategory.ASSERTION_FAILED,
        details={} if status == "pass" else {"test_a": "Traceback..."},
        duration_s=0.5,
        wall_s=0.6,
        isolation=Isolation.BUBBLEWRAP,
        reason="r",
        tests_run=3,
    )


def test_round_trip_and_fingerprint_isolation(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "run-a") as journal:
        journal.record(program_sha("x"), result("T/1", "fail"))
    with Journal(path, "run-a") as journal:
        found = journal.done([program_sha("x"), program_sha("y")])
    assert list(found) == [program_sha("x")]
    got = found[program_sha("x")]
    assert got.status == "fail" and got.category is ErrorCategory.ASSERTION_FAILED
    assert got.details == {"test_a": "Traceback..."} and got.tests_run == 3
    with Journal(path, "run-b") as journal:
        assert journal.done([program_sha("x")]) == {}


def _write_then_die(path: str) -> None:
    journal = Journal(path, "run")
    journal.record(program_sha("kept"), result("T/2"))
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_committed_verdict_survives_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    process = multiprocessing.get_context("fork").Process(target=_write_then_die, args=(str(path),))
    process.start()
    process.join(10)
    assert process.exitcode == -signal.SIGKILL
    with Journal(path, "run") as journal:
        assert set(journal.done([program_sha("kept")])) == {program_sha("kept")}
