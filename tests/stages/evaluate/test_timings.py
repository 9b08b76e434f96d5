"""The ground-truth timings cache keeps each program's CPU time beside its duration (and reads
caches from before it did), and the ground truth splits into test methods only the long
programs that wait: real BigCodeBench tasks, split or not, get the same verdicts."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from passbench.core.journal import Journal, program_sha
from passbench.core.records import ErrorCategory, ExecResult, Isolation, Program
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator, splitting
from passbench.stages.sandbox.base import cpu_share
from passbench.stages.sandbox.remote.wire import (
    program_from_json,
    program_to_json,
    result_from_json,
    result_to_json,
)

from ..sandbox.helpers import EVALENV_PYTHON

#: the `verdicts` table as passbench wrote it before CPU times (the schema of 2026-11-26)
OLD_SCHEMA = """
CREATE TABLE verdicts (
    fingerprint TEXT NOT NULL, program_sha TEXT NOT NULL, task_id TEXT NOT NULL,
    status TEXT NOT NULL, category TEXT, details TEXT NOT NULL, duration_s REAL NOT NULL,
    wall_s REAL NOT NULL, isolation TEXT NOT NULL, reason TEXT NOT NULL,
    tests_run INTEGER NOT NULL, stdout_tail TEXT NOT NULL, inputs_done INTEGER,
    PRIMARY KEY (fingerprint, program_sha)
);
"""
#: how that passbench stored a verdict
OLD_INSERT = "INSERT OR REPLACE INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"


def _result(task: str, cpu_s: float | None, cpu_wait_s: float | None = None) -> ExecResult:
    return ExecResult(
        key=f"{task}#gt",
        task_id=task,
        status="fail",
        category=ErrorCategory.ASSERTION_FAILED,
        details={"test_a": "Traceback ..."},
        duration_s=12.5,
        wall_s=12.9,
        isolation=Isolation.BUBBLEWRAP,
        reason="test_a: AssertionError",
        tests_run=3,
        cpu_s=cpu_s,
        cpu_wait_s=cpu_wait_s,
    )


def _old_row(sha: str, task: str) -> tuple[object, ...]:
    return ("gt", sha, task, "pass", None, "{}", 156.5, 157.0, "bubblewrap", "", 10, "", None)


def test_the_cache_keeps_cpu_time_beside_the_duration(tmp_path: Path) -> None:
    path = tmp_path / "timings.sqlite"
    with Journal(path, "gt") as cache:
        cache.record(program_sha("waits"), _result("T/1", cpu_s=1.25, cpu_wait_s=0.5))
        cache.record(program_sha("unmeasured"), _result("T/2", cpu_s=None))
    with Journal(path, "gt") as cache:
        found = cache.done([program_sha("waits"), program_sha("unmeasured")])
    assert found[program_sha("waits")] == replace(_result("T/1", 1.25, 0.5), key="")
    assert found[program_sha("unmeasured")].cpu_s is None
    # a later verdict without CPU time leaves none of the earlier one behind
    with Journal(path, "gt") as cache:
        cache.record(program_sha("waits"), _result("T/1", cpu_s=None))
        assert cache.done([program_sha("waits")])[program_sha("waits")].cpu_s is None


def test_a_cache_from_before_cpu_times_still_reads_and_takes_new_ones(tmp_path: Path) -> None:
    path = tmp_path / "timings.sqlite"
    with sqlite3.connect(path) as old:
        old.executescript(OLD_SCHEMA)
        old.execute(OLD_INSERT, _old_row(program_sha("461"), "BigCodeBench/461"))
    with Journal(path, "gt") as cache:
        hit = cache.done([program_sha("461")])[program_sha("461")]
        assert (hit.status, hit.duration_s, hit.tests_run, hit.cpu_s) == ("pass", 156.5, 10, None)
        assert cpu_share(hit) is None  # so the ground truth does not split it on a guess
        cache.record(program_sha("417"), _result("BigCodeBench/417", cpu_s=60.0))
    # and the passbench from before still writes its rows into the cache this one made
    with sqlite3.connect(path) as old:
        old.execute(OLD_INSERT, _old_row(program_sha("1104"), "BigCodeBench/1104"))
    with Journal(path, "gt") as cache:
        found = cache.done([program_sha("1104"), program_sha("417")])
    assert found[program_sha("1104")].cpu_s is None
    assert found[program_sha("417")].cpu_s == 60.0


def test_adopted_verdicts_bring_their_cpu_times(tmp_path: Path) -> None:
    with Journal(tmp_path / "a.sqlite", "gt") as source:
        source.record(program_sha("x"), _result("T/1", cpu_s=2.0, cpu_wait_s=0.25))
    with Journal(tmp_path / "b.sqlite", "gt") as target:
        assert target.adopt(tmp_path / "a.sqlite") == 1
        got = target.done([program_sha("x")])[program_sha("x")]
    assert (got.cpu_s, got.cpu_wait_s) == (2.0, 0.25)


def test_cpu_times_cross_the_wire_and_older_servers_verdicts_still_read() -> None:
    result = _result("T/1", cpu_s=3.5, cpu_wait_s=0.5)
    assert result_from_json(json.loads(json.dumps(result_to_json(result)))) == result
    older = {k: v for k, v in result_to_json(result).items() if k not in ("cpu_s", "cpu_wait_s")}
    assert result_from_json(older) == replace(result, cpu_s=None, cpu_wait_s=None)
    program = Program(key="k", task_id="t", source="", expected_cpu_share=0.05)
    assert program_from_json(json.loads(json.dumps(program_to_json(program)))) == program


# ---- real BigCodeBench tasks, split and not -------------------------------------------------

#: 346 and 459 wait on the scripts they start (a tenth of a core or less); 534 computes (RSA
#: keys; it keeps computing under load: its wait for a CPU is taken off); 15 is short
WAITING = ("BigCodeBench/346", "BigCodeBench/459")
COMPUTING = "BigCodeBench/534"
TASKS = (*WAITING, COMPUTING, "BigCodeBench/15")


def _rows_per_task(cache_dir: Path) -> dict[str, int]:
    (path,) = cache_dir.rglob("timings.sqlite")
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT task_id, count(*) FROM verdicts GROUP BY task_id").fetchall()
    return dict(rows)


@pytest.mark.bwrap
@pytest.mark.evalenv
@pytest.mark.skipif(not EVALENV_PYTHON.exists(), reason=f"no evaluation env at {EVALENV_PYTHON}")
def test_waiting_tasks_are_split_computing_ones_not_and_verdicts_agree(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)
    settings = EvaluateSettings(
        benchmark="bigcodebench", split="complete", subset="full", task_ids=TASKS, workers=2
    )
    # an empty cache: nothing is split; every program's duration and CPU time is recorded
    whole, _ = Evaluator(settings, paths).ground_truth()
    assert set(_rows_per_task(paths.cache_dir).values()) == {1}
    (path,) = paths.cache_dir.rglob("timings.sqlite")
    with sqlite3.connect(path) as db:
        measured = dict(db.execute("SELECT program_sha, cpu_s FROM cpu_times").fetchall())
    assert len(measured) == len(TASKS) and all(cpu > 0 for cpu in measured.values())

    # these tasks take seconds, not the minutes of 461: split from one second on
    monkeypatch.setattr(splitting, "SPLIT_FROM_S", 1.0)
    split = Evaluator(settings, paths).run_ground_truth(tmp_path / "out").ground_truth
    rows = _rows_per_task(paths.cache_dir)
    for task in WAITING:
        assert rows[task] > 2, task  # the whole program and each of its parts
    assert rows[COMPUTING] == 1 and rows["BigCodeBench/15"] == 1

    fields = ("status", "category", "reason")
    for task in TASKS:
        assert whole.tasks[task]["status"] == "pass", (task, whole.tasks[task])
        assert {f: split.tasks[task].get(f) for f in fields} == {
            f: whole.tasks[task].get(f) for f in fields
        }, task
