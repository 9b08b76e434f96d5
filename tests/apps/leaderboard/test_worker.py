"""The leaderboard worker end to end with the real sandbox, on HumanEval (stdlib only): it
scores a job with the pass@1 `passbench evaluate` gives the same samples; a worker killed mid-job
is replaced by one that finishes it from the first one's journal; a bundle that does not hold up
against the worker's data is rejected; an environment whose ground truth fails on a task not in
its list of expected failures publishes nothing. tests/apps/leaderboard/store/test_queue.py runs
the queue itself
on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from passbench.apps.leaderboard import Worker, WorkerSettings
from passbench.apps.leaderboard.gate import read_expected_failures
from passbench.apps.leaderboard.store.bundle import read_bundle
from passbench.apps.leaderboard.store.database import Store, open_store
from passbench.apps.leaderboard.store.models import Job, Run
from passbench.apps.leaderboard.store.queue import (
    BenchmarkData,
    QueuePolicy,
    job_status,
    submit_bundle,
)
from passbench.core.errors import InputError
from passbench.core.settings import Paths
from passbench.stages.benchmarks import load_benchmark
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.results import load_results

pytestmark = pytest.mark.bwrap

TASKS = ("HumanEval/0", "HumanEval/2", "HumanEval/7")
RIGHT = {
    "HumanEval/0": "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
    " for b in numbers[i + 1:])\n",
    "HumanEval/2": "def truncate_number(number):\n    return number % 1.0\n",
    "HumanEval/7": "def filter_by_substring(strings, substring):\n"
    "    return [s for s in strings if substring in s]\n",
}
WRONG = {
    "HumanEval/0": "def has_close_elements(numbers, threshold):\n    return False\n",
    "HumanEval/2": "def truncate_number(number):\n    return number\n",
    "HumanEval/7": "def filter_by_substring(strings, substring):\n    return strings\n",
}
TOKEN = "alice-token-0123456789"


@pytest.fixture
def paths(data_dir: Path, tmp_path: Path) -> Paths:
    return Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        yield opened
    finally:
        opened.close()


def make_bundle(folder: Path, data_dir: Path, rows: list[dict[str, Any]], n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    loaded = load_benchmark("humaneval", data_dir=data_dir)
    manifest = {
        "format": 1,
        "model": {"name": "org/model", "revision": "abc123"},
        "benchmark": "humaneval",
        "dataset_version": loaded.version,
        "dataset_sha256": loaded.sha256,
        "split": "complete",
        "subset": "full",
        "generation": {"temperature": 0.8, "n_samples": n},
        "passbench_version": "0.1.0",
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def queue(store: Store, folder: Path, paths: Paths, policy: QueuePolicy) -> str:
    with store.transaction() as session:
        job = submit_bundle(
            session, read_bundle(folder), TOKEN, benchmarks=BenchmarkData(paths), policy=policy
        )
        return job.id


def test_the_worker_scores_a_job_as_evaluate_does(
    store: Store, paths: Paths, data_dir: Path, tmp_path: Path
) -> None:
    rows = []
    for task in TASKS:  # two samples a task: pass@1 is not just 0 or 1
        rows.append({"task_id": task, "solution": RIGHT[task], "raw_solution": "```" + RIGHT[task]})
        rows.append(
            {"task_id": task, "solution": WRONG[task] if task != "HumanEval/7" else RIGHT[task]}
        )
    folder = make_bundle(tmp_path / "bundle", data_dir, rows, n=2)
    policy = QueuePolicy(task_ids=TASKS)
    job_id = queue(store, folder, paths, policy)

    settings = WorkerSettings(
        work_dir=tmp_path / "jobs", evaluation=EvaluateSettings(workers=2), policy=policy
    )
    assert Worker(store, settings, paths).run(once=True) == 1

    evaluated = Evaluator(
        EvaluateSettings(benchmark="humaneval", task_ids=TASKS, workers=2),
        Paths(cache_dir=tmp_path / "other-cache", data_dir=data_dir),
    ).evaluate_samples(folder / "samples.jsonl", tmp_path / "evaluate")
    expected = load_results(evaluated.eval_results_path)

    with store.transaction() as session:
        status = job_status(session, job_id)
        assert status.state == "scored", status.reason
        assert status.pass_at_1 == pytest.approx(evaluated.pass_at_k["pass@1"])
        assert status.pass_at_1 == pytest.approx(4 / 6)
        assert "ground truth: 100.0% of 3 tasks pass" in status.log_tail
        run = session.get(Run, status.run_id)
        assert run is not None
        assert (run.provenance, run.model.name, run.model.revision) == (
            "verified",
            "org/model",
            "abc123",
        )
        assert (run.benchmark, run.subset, run.split, run.n_tasks, run.n_samples) == (
            "humaneval",
            "full",
            "complete",
            3,
            6,
        )
        stored = {
            (task.task_id, verdict.sample_index): verdict.status
            for task in run.tasks
            for verdict in task.samples
        }
        assert stored == {
            (task_id, sample.sample_index): sample.status
            for task_id, samples in expected.tasks.items()
            for sample in samples
        }
        job = session.get(Job, job_id)
        assert job is not None and job.lease_owner is None


def test_a_bundle_that_fails_the_worker_s_checks_is_rejected(
    store: Store, paths: Paths, data_dir: Path, tmp_path: Path
) -> None:
    rows = [{"task_id": task, "solution": RIGHT[task]} for task in TASKS]
    job_id = queue(
        store, make_bundle(tmp_path / "b", data_dir, rows, n=1), paths, QueuePolicy(task_ids=TASKS)
    )
    with store.transaction() as session:
        job = session.get(Job, job_id)
        assert job is not None and job.submission.task_ids == list(TASKS)  # what the app checked
        # a row altered behind the app's back: one more task than the samples cover
        job.submission.task_ids = [*TASKS, "HumanEval/3"]
    outcome = Worker(store, WorkerSettings(tmp_path / "jobs"), paths).run_once()
    assert outcome is not None and outcome.state == "rejected"
    with store.transaction() as session:
        status = job_status(session, job_id)
        assert status.state == "rejected"
        assert status.reason is not None and "1 of 4 tasks have no sample" in status.reason
        assert session.scalar(select(func.count()).select_from(Run)) == 0


def _broken_humaneval(data_dir: Path, folder: Path, task_id: str) -> Path:
    """A data folder whose HumanEval(+) has `task_id`'s canonical solution raise, as one whose
    library the environment lacks does: an environment where that task's ground truth fails."""
    (folder / "humaneval").mkdir(parents=True)
    plus = "humaneval/HumanEvalPlus.jsonl.gz"
    rows = [
        json.loads(line)
        for line in gzip.decompress((data_dir / plus).read_bytes()).split(b"\n")
        if line.strip()
    ]
    for row in rows:
        if row["task_id"] == task_id:
            row["canonical_solution"] = "    raise ImportError('no module named mathlib')\n"
    (folder / plus).write_bytes(
        gzip.compress("".join(json.dumps(row) + "\n" for row in rows).encode())
    )
    return folder


def test_a_score_is_published_only_when_the_ground_truth_fails_as_expected(
    store: Store, data_dir: Path, tmp_path: Path
) -> None:
    broken = _broken_humaneval(data_dir, tmp_path / "data", "HumanEval/2")
    paths = Paths(cache_dir=tmp_path / "cache", data_dir=broken)
    rows = [{"task_id": task, "solution": RIGHT[task]} for task in TASKS]
    policy = QueuePolicy(task_ids=TASKS)
    job_id = queue(store, make_bundle(tmp_path / "b", broken, rows, n=1), paths, policy)
    # nothing expected to fail here: HumanEval/2's failure blocks publishing, named
    worker = Worker(store, WorkerSettings(tmp_path / "jobs"), paths)
    outcome = worker.run_once()
    assert outcome is not None and outcome.state == "failed"
    with store.transaction() as session:
        status = job_status(session, job_id)
        assert status.reason is not None
        assert "the ground truth fails unexpectedly in environment 'host'" in status.reason
        assert "fail: HumanEval/2;" in status.reason
        assert status.pass_at_1 is None
        assert session.scalar(select(func.count()).select_from(Run)) == 0
        job = session.get(Job, job_id)
        assert job is not None
        job.state = "queued"  # the admin re-queues it once the list says why

    # a list expecting it (and one more, which passes: a subset of the expected set fails)
    listed = tmp_path / "expected.json"
    listed.write_text(json.dumps({"host": ["HumanEval/2"], "*": ["HumanEval/7"]}))
    expected = read_expected_failures(listed)
    settings = WorkerSettings(tmp_path / "jobs", expected_gt_failures=expected)
    outcome = Worker(store, settings, paths).run_once()
    assert outcome is not None and outcome.state == "scored", outcome.reason
    with store.transaction() as session:
        run = session.get(Run, outcome.run_id)
        assert run is not None
        gate = run.meta["ground_truth_gate"]
        assert gate["environment"] == "host" and gate["failed"] == ["HumanEval/2"]
        assert gate["expected_failures"] == ["HumanEval/2", "HumanEval/7"]
        assert gate["expected_failures_source"].startswith(f"{listed} (sha256 ")
        # the samples are right, but HumanEval/2's expected outputs come from the reference,
        # which fails here: as with `passbench evaluate` in this environment, it counts as failed
        assert run.pass_at_1 == pytest.approx(2 / 3)
    with pytest.raises(InputError, match="field 'host': must be a list of task ids"):
        listed.write_text(json.dumps({"host": "HumanEval/2"}))
        read_expected_failures(listed)


def _journal_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path) as db:
            return int(db.execute("SELECT count(*) FROM verdicts").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _worker_cli(db: str, work_dir: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    args = [
        *("leaderboard", "worker", "--db", db, "--once", "--workers", "1"),
        *("--lease-s", "3", "--work-dir", str(work_dir)),
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "passbench.apps.cli", *args],
        env=dict(os.environ, **env),
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        start_new_session=True,
    )


@pytest.mark.slow
def test_a_killed_worker_s_job_is_finished_by_the_next_with_nothing_lost(
    store: Store, paths: Paths, data_dir: Path, tmp_path: Path
) -> None:
    slow = "import time\ntime.sleep(0.3)\n" + RIGHT["HumanEval/2"]
    rows = [{"task_id": "HumanEval/2", "solution": slow + f"\n# variant {i}\n"} for i in range(24)]
    policy = QueuePolicy(task_ids=("HumanEval/2",))
    job_id = queue(store, make_bundle(tmp_path / "b", data_dir, rows, n=24), paths, policy)
    db = str(store.engine.url)
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(paths.cache_dir)}
    work_dir = tmp_path / "jobs"
    journal = work_dir / job_id / ".samples.journal.sqlite"

    first = _worker_cli(db, work_dir, env, tmp_path / "first.log")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _journal_rows(journal) < 5 and first.poll() is None:
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_at = _journal_rows(journal)
    assert 5 <= killed_at < 24, (tmp_path / "first.log").read_text()
    with store.transaction() as session:
        job = session.get(Job, job_id)
        assert job is not None and job.state == "running" and job.lease_expires_at is not None
        expires = job.lease_expires_at
        # heartbeats ran while it evaluated: they alone store a running job's log
        assert job.log is not None and "attempt 1 on worker" in job.log
    # the second worker finds the job once the dead one's lease has expired
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=_dt.timezone.utc)
    time.sleep(max(0.0, (expires - _dt.datetime.now(_dt.timezone.utc)).total_seconds()) + 0.2)
    second = _worker_cli(db, work_dir, env, tmp_path / "second.log")
    assert second.wait(timeout=180) == 0, (tmp_path / "second.log").read_text()

    with store.transaction() as session:
        status = job_status(session, job_id)
        assert status.state == "scored", (tmp_path / "second.log").read_text()
        assert status.attempts == 2 and status.pass_at_1 == 1.0
        # the first worker's verdicts were reused, not re-run; nothing was lost
        assert f"({killed_at} verdicts reused from the journal)" in status.log_tail
        run = session.get(Run, status.run_id)
        assert run is not None and run.n_samples == 24
    assert _journal_rows(journal) == 24
