"""The submission queue on SQLite and PostgreSQL: idempotent submits, every rejection (and that
a rejected bundle stores nothing), the rate limit, atomic claims under concurrency, lease expiry
and its give-up, and who may change an entry."""

from __future__ import annotations

import datetime as _dt
import json
import threading
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from passbench.apps.leaderboard.store.bundle import bundle_zip, read_bundle
from passbench.apps.leaderboard.store.bundle import make_bundle as build_bundle
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.models import Job, Run, Submission, Submitter
from passbench.apps.leaderboard.store.queue import (
    BenchmarkData,
    ClaimedJob,
    QueuePolicy,
    cancel_job,
    claim_job,
    delete_submission,
    expire_leases,
    hash_token,
    heartbeat,
    hide_submission,
    job_status,
    queue_listing,
    reject_job,
    start_running,
    submit_bundle,
)
from passbench.core.errors import PermissionDenied, SubmissionRejected
from passbench.core.settings import Paths
from passbench.stages.benchmarks import load_benchmark

TASKS = ("HumanEval/0", "HumanEval/2", "HumanEval/7")
SOLUTIONS = {
    "HumanEval/0": "def has_close_elements(numbers, threshold):\n    return False\n",
    "HumanEval/2": "def truncate_number(number):\n    return number % 1.0\n",
    "HumanEval/7": "def filter_by_substring(strings, substring):\n"
    "    return [s for s in strings if substring in s]\n",
}
TOKEN = "alice-token-0123456789"
OTHER = "bob-token-0123456789ab"
ADMIN = "admin-token-0123456789"


@pytest.fixture(scope="module")
def benchmarks(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> BenchmarkData:
    """Benchmark data, loaded once for the module (as a web app keeps it)."""
    return BenchmarkData(Paths(cache_dir=tmp_path_factory.mktemp("cache"), data_dir=data_dir))


@pytest.fixture
def policy() -> QueuePolicy:
    return QueuePolicy(task_ids=TASKS, admin_token=ADMIN, rate_limit=100)


@pytest.fixture(scope="session")
def humaneval_sha(data_dir: Path) -> str:
    return load_benchmark("humaneval", data_dir=data_dir).sha256


def manifest(sha: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": 1,
        "model": {"name": "org/model", "revision": "abc123", "link": "https://example.org/m"},
        "benchmark": "humaneval",
        "dataset_version": "v0.1.10",
        "dataset_sha256": sha,
        "split": "complete",
        "subset": "full",
        "generation": {"temperature": 0.0, "n_samples": 1},
        "passbench_version": "0.1.0",
    }
    data.update(changes)
    return data


def make_bundle(
    folder: Path,
    data: dict[str, Any],
    rows: list[dict[str, Any]] | None = None,
    *,
    samples_text: str | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(data))
    if rows is None:
        rows = [{"task_id": task, "solution": SOLUTIONS[task]} for task in TASKS]
    text = samples_text if samples_text is not None else "".join(json.dumps(r) + "\n" for r in rows)
    (folder / "samples.jsonl").write_text(text)
    return folder


def counts(store: Store) -> tuple[int, int]:
    with store.transaction() as session:
        return (
            session.scalar(select(func.count()).select_from(Submission)) or 0,
            session.scalar(select(func.count()).select_from(Job)) or 0,
        )


def submit(
    store: Store, folder: Path, benchmarks: BenchmarkData, policy: QueuePolicy, **extra: Any
) -> str:
    bundle = read_bundle(folder, max_bytes=policy.max_bundle_bytes)
    with store.transaction() as session:
        token = extra.pop("token", TOKEN)
        job = submit_bundle(session, bundle, token, benchmarks=benchmarks, policy=policy, **extra)
        return job.id


def test_a_bundle_is_queued_once_whatever_its_packaging(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    folder = make_bundle(tmp_path / "b", manifest(humaneval_sha))
    job_id = submit(store, folder, benchmarks, policy)
    # the same files as a zip, inside a top-level folder: the same job
    archive = tmp_path / "b.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name in ("manifest.json", "samples.jsonl"):
            handle.write(folder / name, f"bundle/{name}")
    assert submit(store, archive, benchmarks, policy) == job_id
    assert counts(store) == (1, 1)
    with store.transaction() as session:
        status = job_status(session, job_id)
        submission = session.scalars(select(Submission)).one()
        assert submission.model.link == "https://example.org/m"
        assert submission.manifest == manifest(humaneval_sha)
    assert (status.state, status.position, status.model, status.revision) == (
        "queued",
        1,
        "org/model",
        "abc123",
    )
    assert status.pass_at_1 is None and status.split == "complete"


REJECTIONS: list[tuple[str, dict[str, Any], str | None, str, str]] = [
    # (name, manifest changes, samples text, code, message fragment)
    ("no format", {"format": 2}, None, "format", "field 'format': must be 1"),
    ("no model", {"model": "m"}, None, "format", "field 'model': must be an object"),
    ("bad n", {"generation": {"n_samples": 0}}, None, "format", "generation.n_samples"),
    ("benchmark", {"benchmark": "nope"}, None, "format", "unknown benchmark 'nope'"),
    ("split", {"split": "instruct"}, None, "format", "field 'split': 'instruct' is not a split"),
    ("version", {"dataset_version": "v9"}, None, "dataset", "field 'dataset_version': 'v9'"),
    ("hash", {"dataset_sha256": "0" * 64}, None, "dataset", "made from other data"),
    (
        "json",
        {},
        '{"task_id": "HumanEval/0", "solution": "x"}\n{oops\n',
        "format",
        "samples.jsonl:2: malformed JSON",
    ),
    (
        "unknown task",
        {},
        '{"task_id": "Nope/1", "solution": "x"}\n',
        "format",
        "samples.jsonl:1: field 'task_id': unknown task id",
    ),
    (
        "coverage",
        {},
        '{"task_id": "HumanEval/0", "solution": "x"}\n',
        "coverage",
        "2 of 3 tasks have no sample",
    ),
    ("count", {"generation": {"n_samples": 2}}, None, "coverage", "HumanEval/0 has 1 samples"),
]


@pytest.mark.parametrize(
    ("changes", "samples", "code", "message"),
    [case[1:] for case in REJECTIONS],
    ids=[case[0] for case in REJECTIONS],
)
def test_each_bad_bundle_is_refused_with_why_and_stores_nothing(
    store: Store,
    tmp_path: Path,
    benchmarks: BenchmarkData,
    policy: QueuePolicy,
    humaneval_sha: str,
    changes: dict[str, Any],
    samples: str | None,
    code: str,
    message: str,
) -> None:
    folder = make_bundle(tmp_path / "b", manifest(humaneval_sha, **changes), samples_text=samples)
    # the session is committed after the refusal: the refusal itself added nothing to it
    with store.transaction() as session, pytest.raises(SubmissionRejected) as caught:
        submit_bundle(session, read_bundle(folder), TOKEN, benchmarks=benchmarks, policy=policy)
    with store.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Submitter)) == 0
    assert caught.value.code == code
    assert message in str(caught.value)
    assert str(caught.value).startswith("b/"), "the message names the bundle's file"
    assert "\n" not in str(caught.value)
    assert counts(store) == (0, 0)


def test_unreadable_bundles_say_why(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionRejected, match=r"empty: no manifest.json \(found: nothing\)"):
        read_bundle(tmp_path / "empty")
    (tmp_path / "x.zip").write_bytes(b"not an archive at all")
    with pytest.raises(SubmissionRejected, match=r"x\.zip: not a bundle"):
        read_bundle(tmp_path / "x.zip")
    with pytest.raises(SubmissionRejected, match="larger than the limit of 10 bytes") as caught:
        read_bundle(make_bundle(tmp_path / "big", {"format": 1}), max_bytes=10)
    assert caught.value.code == "size"


def test_size_token_duplicate_and_rate_limits(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    folder = make_bundle(tmp_path / "a", manifest(humaneval_sha))
    with pytest.raises(SubmissionRejected, match="3 samples; the limit is 2") as caught:
        submit(store, folder, benchmarks, replace(policy, max_samples=2))
    assert caught.value.code == "size"
    with pytest.raises(SubmissionRejected, match="at least 16 characters") as caught:
        submit(store, folder, benchmarks, policy, token="short")
    assert caught.value.code == "token"
    submit(store, folder, benchmarks, policy)
    # the same model and revision again, with other samples: a duplicate, whoever sends it
    other = make_bundle(
        tmp_path / "b",
        manifest(humaneval_sha),
        [{"task_id": task, "solution": SOLUTIONS[task] + "\n# v2\n"} for task in TASKS],
    )
    with pytest.raises(SubmissionRejected, match="already has a humaneval full complete") as caught:
        submit(store, other, benchmarks, policy, token=OTHER)
    assert caught.value.code == "duplicate"
    # a new revision is its own entry; two per window is the limit
    limited = replace(policy, rate_limit=2, rate_window_s=3600)
    now = _dt.datetime.now(_dt.timezone.utc)
    second = make_bundle(
        tmp_path / "c", manifest(humaneval_sha, model={"name": "org/model", "revision": "r2"})
    )
    submit(store, second, benchmarks, limited, now=now)
    third = make_bundle(
        tmp_path / "d", manifest(humaneval_sha, model={"name": "org/model", "revision": "r3"})
    )
    with pytest.raises(
        SubmissionRejected, match="rate limit: 2 submissions in the last 1 hours"
    ) as caught:
        submit(store, third, benchmarks, limited, now=now)
    assert caught.value.code == "rate_limit"
    assert counts(store) == (2, 2)
    # another submitter is not limited by alice's submissions; alice is again after the window
    submit(store, third, benchmarks, limited, now=now, token=OTHER)
    fourth = make_bundle(
        tmp_path / "e", manifest(humaneval_sha, model={"name": "org/model", "revision": "r4"})
    )
    submit(store, fourth, benchmarks, limited, now=now + _dt.timedelta(hours=2))
    assert counts(store) == (4, 4)


def _queue(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, sha: str, n: int
) -> list[str]:
    ids = []
    for index in range(n):
        data = manifest(sha, model={"name": f"model-{index}", "revision": ""})
        ids.append(submit(store, make_bundle(tmp_path / f"q{index}", data), benchmarks, policy))
    return ids


def test_concurrent_claimers_never_share_a_job(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    ids = _queue(store, tmp_path, benchmarks, policy, humaneval_sha, 12)
    claimed: dict[str, list[str]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def claimer(name: str) -> None:
        try:
            start.wait()
            mine = claimed.setdefault(name, [])
            while (job := claim_job(store, name, policy)) is not None:
                mine.append(job.job_id)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    every = [job for jobs in claimed.values() for job in jobs]
    assert sorted(every) == sorted(ids), "each job claimed exactly once"
    with store.transaction() as session:
        for name, jobs in claimed.items():
            for job_id in jobs:
                job = session.get(Job, job_id)
                assert job is not None
                assert (job.state, job.lease_owner, job.attempts) == ("validating", name, 1)


def test_an_expired_lease_requeues_the_job_then_gives_up(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    (job_id,) = _queue(store, tmp_path, benchmarks, policy, humaneval_sha, 1)
    short = replace(policy, lease_s=60, max_attempts=2)
    now = _dt.datetime.now(_dt.timezone.utc)
    first = claim_job(store, "dead", short, now=now)
    assert first == ClaimedJob(job_id, "dead", 1)
    with store.transaction() as session:
        assert start_running(session, first)
    assert claim_job(store, "B", short, now=now + _dt.timedelta(seconds=30)) is None
    # a heartbeat keeps it; silence past the lease returns it to the queue
    assert heartbeat(
        store, job_id, "dead", short, log="step 1", now=now + _dt.timedelta(seconds=50)
    )
    assert claim_job(store, "B", short, now=now + _dt.timedelta(seconds=100)) is None
    second = claim_job(store, "B", short, now=now + _dt.timedelta(seconds=111))
    assert second == ClaimedJob(job_id, "B", 2)
    # the first worker can change nothing any more
    assert not heartbeat(store, job_id, "dead", short)
    with store.transaction() as session:
        assert not start_running(session, first)
        assert start_running(session, second)
    # the second dies too: after max_attempts the job fails with a reason
    later = now + _dt.timedelta(seconds=300)
    with store.transaction() as session:
        assert expire_leases(session, short, later) == 1
        status = job_status(session, job_id)
    assert status.state == "failed" and status.attempts == 2
    assert status.reason is not None and "stopped answering on each of 2 attempts" in status.reason
    assert "step 1" in status.log_tail
    assert claim_job(store, "C", short, now=later) is None


def test_queue_position_follows_submission_order(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    ids = _queue(store, tmp_path, benchmarks, policy, humaneval_sha, 3)
    with store.transaction() as session:
        assert [job_status(session, job_id).position for job_id in ids] == [1, 2, 3]
    claimed = claim_job(store, "w", policy)
    assert claimed is not None and claimed.job_id == ids[0]
    with store.transaction() as session:
        assert [job_status(session, job_id).position for job_id in ids] == [None, 1, 2]
        assert job_status(session, ids[0]).state == "validating"


def test_only_the_owner_or_an_admin_changes_an_entry(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    first, second, third = _queue(store, tmp_path, benchmarks, policy, humaneval_sha, 3)
    with (
        pytest.raises(PermissionDenied, match="belongs to another submitter"),
        store.transaction() as session,
    ):
        cancel_job(session, first, OTHER, policy)
    with pytest.raises(PermissionDenied, match="only an admin"), store.transaction() as session:
        hide_submission(session, first, TOKEN, policy)
    with pytest.raises(PermissionDenied), store.transaction() as session:
        delete_submission(session, first, OTHER, policy)
    with store.transaction() as session:
        assert cancel_job(session, first, TOKEN, policy)
        assert not cancel_job(session, first, TOKEN, policy)  # already cancelled
        hide_submission(session, second, ADMIN, policy)
        assert job_status(session, second).hidden
        delete_submission(session, third, ADMIN, policy)
        assert job_status(session, first).state == "cancelled"
        with pytest.raises(KeyError):
            job_status(session, third)
    # an admin recorded in the store, without the deployment's token
    with store.transaction() as session:
        session.add(Submitter(name="root", token_sha256=hash_token(OTHER), is_admin=True))
    with store.transaction() as session:
        hide_submission(session, first, OTHER, replace(policy, admin_token=None))
        delete_submission(session, first, TOKEN, policy)  # the owner may delete their own
    assert counts(store) == (1, 1)
    # cancelling a running job takes the lease from its worker
    claimed = claim_job(store, "w", policy)
    assert claimed is not None and claimed.job_id == second
    assert heartbeat(store, second, "w", policy)
    with store.transaction() as session:
        assert cancel_job(session, second, TOKEN, policy)
    assert not heartbeat(store, second, "w", policy)


@pytest.mark.bwrap
def test_a_worker_scores_a_queued_job_on_each_database(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    from passbench.apps.leaderboard import Worker, WorkerSettings

    (job_id,) = _queue(store, tmp_path, benchmarks, policy, humaneval_sha, 1)
    settings = WorkerSettings(work_dir=tmp_path / "jobs", policy=policy)
    outcome = Worker(store, settings, benchmarks.paths).run_once()
    assert outcome is not None and outcome.state == "scored"
    with store.transaction() as session:
        status = job_status(session, job_id)
        assert (status.state, status.position) == ("scored", None)
        assert status.pass_at_1 == pytest.approx(2 / 3)  # HumanEval/0's sample is wrong
        run = session.get(Run, status.run_id)
        assert run is not None and run.provenance == "verified" and run.model.name == "model-0"
        assert sorted(task.task_id for task in run.tasks) == sorted(TASKS)


def test_a_bundle_made_from_a_samples_file_round_trips_and_the_queue_lists_it(
    store: Store, tmp_path: Path, benchmarks: BenchmarkData, policy: QueuePolicy, humaneval_sha: str
) -> None:
    rows = [{"task_id": task, "solution": SOLUTIONS[task]} for task in TASKS for _ in range(2)]
    samples = "".join(json.dumps(row) + "\n" for row in rows).encode()
    made = build_bundle(
        samples,
        model="org/made",
        revision="r2",
        benchmark="humaneval",
        dataset_version="v0.1.10",
        dataset_sha256=humaneval_sha,
        split="complete",
        subset="full",
        passbench_version="0.1.0",
        size_b=7,
        name="made.jsonl",
    )
    assert made.manifest.generation["n_samples"] == 2  # from the file
    archive = tmp_path / "made.zip"
    archive.write_bytes(bundle_zip(made))
    assert bundle_zip(made) == archive.read_bytes()  # the same bytes every time
    assert read_bundle(archive).sha256 == made.sha256

    first = submit(store, make_bundle(tmp_path / "a", manifest(humaneval_sha)), benchmarks, policy)
    with store.transaction() as session:
        second = submit_bundle(session, made, TOKEN, benchmarks=benchmarks, policy=policy).id
    third = submit(
        store,
        make_bundle(tmp_path / "c", manifest(humaneval_sha, model={"name": "org/c"})),
        benchmarks,
        policy,
    )
    claimed = claim_job(store, "w1", policy)
    assert claimed is not None and claimed.job_id == first
    with store.transaction() as session:
        assert reject_job(session, claimed, "no")
        hide_submission(session, third, ADMIN, policy)
        listed = queue_listing(session)
    # waiting jobs first, in queue order; then the finished; hidden entries left out
    assert [(s.job_id, s.state, s.position) for s in listed] == [
        (second, "queued", 1),
        (first, "rejected", None),
    ]
    assert listed[0].model == "org/made" and listed[0].revision == "r2"
