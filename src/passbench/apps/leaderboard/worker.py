"""The leaderboard worker: claims queued jobs and scores them through an execution backend.

    worker = Worker(store, WorkerSettings(work_dir=...), paths)
    worker.run_once()          # one job, or None when the queue is empty
    worker.run(stop=event)     # until stopped, polling the queue

For each job it claims (store/queue.py), in a folder of its own under `work_dir`:

1. validating: the bundle is checked again against *this* worker's benchmark data (version,
   hash, coverage); a bundle that does not hold up is rejected with the reason;
2. running: the ground truth of the benchmark in this environment must fail on no task but those
   the environment is known to fail (leaderboard/gate.py; checked once per environment and
   dataset, then remembered; the evaluator's own cache spares the re-run); otherwise the job
   fails, naming the tasks, and no score is published;
3. the samples are evaluated by passbench's Evaluator, whose journal lives in the job's folder:
   a worker that takes over a job whose first worker died resumes its finished verdicts;
4. the run is stored with every verdict (provenance "verified", the submission's model) and the
   job marked scored, in one transaction that only commits while this worker holds the lease.

The tasks scored are those the app checked the submission for (`Submission.task_ids`, from its
`serve --tasks`): a worker has no task list of its own, so the two cannot disagree.

Heartbeats extend the lease from a thread while the evaluation runs, and carry the log so far.
A worker that lost its lease (it was too slow to heartbeat, or the job was cancelled) finishes
its evaluation but publishes nothing. Submitted code runs only inside the backend's sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import traceback
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from passbench.apps.leaderboard.gate import ExpectedFailures, GateVerdict, judge
from passbench.apps.leaderboard.store.bundle import Bundle, check_bundle, parse_manifest
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import add_run, content_sha256
from passbench.apps.leaderboard.store.models import Model
from passbench.apps.leaderboard.store.queue import (
    ClaimedJob,
    QueuePolicy,
    bundle_of,
    claim_job,
    complete_job,
    fail_job,
    heartbeat,
    reject_job,
    start_running,
)
from passbench.core.errors import PassbenchError, SubmissionRejected
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.results import load_results

#: Lines of log a job keeps (the tail users see is shorter: queue.LOG_TAIL_LINES).
LOG_LINES = 400
SAMPLES_NAME = "samples.jsonl"


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker runs jobs. `evaluation` gives the backend, workers, limits and environment;
    the benchmark, version, split, subset and samples are each job's."""

    work_dir: Path
    evaluation: EvaluateSettings = field(default_factory=EvaluateSettings)
    #: Leases and attempts (its task_ids are the app's: each submission records them).
    policy: QueuePolicy = field(default_factory=QueuePolicy)
    poll_s: float = 5.0
    #: The canonical solutions each environment is known to fail (default: none may fail).
    expected_gt_failures: ExpectedFailures = field(default_factory=ExpectedFailures)
    worker_id: str | None = None  # default: host:pid:random


@dataclass(frozen=True)
class JobOutcome:
    """What the worker did with one job."""

    job_id: str
    state: str  # scored, rejected, failed, or "lost" (the lease went to someone else)
    reason: str | None = None
    pass_at_1: float | None = None
    run_id: int | None = None
    reused: int = 0  # verdicts taken from the job's journal instead of re-running


class _JobLog:
    """The Progress of one job: keeps its lines for the job's log, and passes each on."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self._lines: deque[str] = deque(maxlen=LOG_LINES)
        self._report = report
        self._lock = threading.Lock()
        self._total = 0
        self._done = 0

    def line(self, text: str) -> None:
        with self._lock:
            self._lines.append(text)
        self._report(text)

    def text(self) -> str:
        with self._lock:
            lines = list(self._lines)
        if self._total:
            lines.append(f"progress: {self._done}/{self._total}")
        return "\n".join(lines)

    # Progress
    def start(self, total: int, description: str) -> None:
        self._total, self._done = total, 0
        self.line(f"{description}: {total}")

    def advance(self, n: int = 1, *, info: str = "") -> None:
        self._done += n

    def warn(self, message: str) -> None:
        self.line(f"warning: {message}")

    def finish(self) -> None:
        if self._total:
            self.line(f"done: {self._done}/{self._total}")
        self._total = 0


class _Heartbeat:
    """Extends a job's lease every third of it, from a thread, until stopped."""

    def __init__(self, store: Store, job: ClaimedJob, policy: QueuePolicy, log: _JobLog) -> None:
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._args = (store, job, policy, log)
        self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)

    def _beat(self) -> None:
        store, job, policy, log = self._args
        while not self._stop.wait(policy.lease_s / 3):
            try:
                if not heartbeat(store, job.job_id, job.worker, policy, log=log.text()):
                    self.lost.set()
                    return
            except Exception as error:  # a database hiccup: try again next beat
                log.line(f"heartbeat failed: {error}")

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Worker:
    """Claims jobs from the store and scores them (see the module's docstring)."""

    def __init__(
        self,
        store: Store,
        settings: WorkerSettings,
        paths: Paths,
        *,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.paths = paths
        self.name = settings.worker_id or (
            f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        )
        self._report = report or (lambda _line: None)
        #: (benchmark, dataset hash, environment, tasks) -> the gate's verdict on its ground
        #: truth: checked once per environment, not for each job.
        self._ground_truth: dict[str, GateVerdict] = {}

    def run(self, *, once: bool = False, stop: threading.Event | None = None) -> int:
        """Work until `stop` is set (or, with `once`, until the queue is empty). The number of
        jobs handled."""
        stop = stop or threading.Event()
        handled = 0
        while not stop.is_set():
            outcome = self.run_once()
            if outcome is not None:
                handled += 1
                continue
            if once:
                break
            stop.wait(self.settings.poll_s)
        return handled

    def run_once(self) -> JobOutcome | None:
        """Claim the oldest queued job and handle it; None when there is none."""
        claimed = claim_job(self.store, self.name, self.settings.policy)
        if claimed is None:
            return None
        log = _JobLog(self._report)
        log.line(f"job {claimed.job_id[:12]}: attempt {claimed.attempt} on worker {self.name}")
        with _Heartbeat(self.store, claimed, self.settings.policy, log) as beat:
            try:
                outcome = self._handle(claimed, log, beat)
            except PassbenchError as error:
                outcome = self._fail(claimed, log, str(error))
            except Exception as error:  # a worker outlives a bug in one job
                log.line(traceback.format_exc().rstrip())
                outcome = self._fail(
                    claimed, log, f"internal error: {type(error).__name__}: {error}"
                )
        log.line(f"job {claimed.job_id[:12]}: {outcome.state}")
        return outcome

    def _fail(self, job: ClaimedJob, log: _JobLog, reason: str) -> JobOutcome:
        log.line(f"failed: {reason}")
        with self.store.transaction() as session:
            held = fail_job(session, job, reason, log.text())
        return JobOutcome(job.job_id, "failed" if held else "lost", reason=reason)

    def _handle(self, job: ClaimedJob, log: _JobLog, beat: _Heartbeat) -> JobOutcome:
        with self.store.transaction() as session:
            submission, samples = bundle_of(session, job.job_id)
            manifest_data = dict(submission.manifest or {})
            model_id = submission.model_id
            where = (submission.benchmark, submission.dataset_version, submission.split)
            subset = submission.subset
            task_ids = tuple(submission.task_ids) if submission.task_ids else None
        folder = self.settings.work_dir / job.job_id
        folder.mkdir(parents=True, exist_ok=True)
        samples_path = folder / SAMPLES_NAME
        if not samples_path.exists() or samples_path.read_bytes() != samples:
            samples_path.write_bytes(samples)
        benchmark, version, split = where
        settings = replace(
            self.settings.evaluation,
            benchmark=benchmark,
            version=version,
            split=split,
            subset=subset,
            samples=samples_path,
            output_dir=folder,
            task_ids=task_ids,
            id_range=None,
            check_ground_truth=True,
            resume=True,
        )
        evaluator = Evaluator(settings, self.paths, log)

        # validating: the bundle against this worker's data
        bundle = Bundle(
            name=f"job {job.job_id[:12]}",
            manifest=parse_manifest(json.dumps(manifest_data).encode(), "manifest.json"),
            samples_bytes=samples,
        )
        try:
            check_bundle(bundle, evaluator.benchmark, evaluator.loaded, task_ids=settings.task_ids)
        except SubmissionRejected as error:
            log.line(f"rejected: {error}")
            with self.store.transaction() as session:
                held = reject_job(session, job, str(error))
            return JobOutcome(job.job_id, "rejected" if held else "lost", reason=str(error))
        with self.store.transaction() as session:
            if not start_running(session, job):
                return JobOutcome(job.job_id, "lost")

        # running: the environment first, then the samples
        gate = self._check_ground_truth(evaluator, log)
        if gate.problem is not None:
            return self._fail(job, log, gate.problem)
        log.line(f"evaluating {samples_path.name} ({len(bundle.samples_bytes)} bytes)")
        outcome = evaluator.evaluate_samples(samples_path, folder)
        log.line(
            f"pass@1 {outcome.pass_at_k.get('pass@1', 0.0):.4f} over {outcome.n_tasks} tasks, "
            f"{outcome.n_samples} samples ({outcome.reused} verdicts reused from the journal)"
        )
        if beat.lost.is_set():
            log.line("the lease was lost while evaluating: nothing published")
            return JobOutcome(job.job_id, "lost", reused=outcome.reused)
        results = load_results(outcome.eval_results_path)
        with self.store.transaction() as session:
            model = session.get(Model, model_id)
            run, _ = add_run(session, results, content_sha256(results), "verified", model=model)
            run.meta = {**run.meta, "ground_truth_gate": gate.record}
            if not complete_job(session, job, run.id, log.text()):
                session.rollback()
                return JobOutcome(job.job_id, "lost", reused=outcome.reused)
            return JobOutcome(
                job.job_id,
                "scored",
                pass_at_1=run.pass_at_1,
                run_id=run.id,
                reused=outcome.reused,
            )

    def _check_ground_truth(self, evaluator: Evaluator, log: _JobLog) -> GateVerdict:
        """The gate's verdict on the canonical solutions here (leaderboard/gate.py)."""
        environment = evaluator.execution.env_description()
        key = json.dumps(
            [
                evaluator.settings.benchmark,
                evaluator.loaded.sha256,
                environment,
                evaluator.execution.backend_description(),
                [task.task_id for task in evaluator.tasks],
            ],
            sort_keys=True,
            default=str,
        )
        if key not in self._ground_truth:
            truth, isolation = evaluator.ground_truth()
            verdict = judge(
                self.settings.expected_gt_failures,
                environment["name"],
                truth.failed_tasks,
                len(truth.tasks),
            )
            expected = len(verdict.record["expected_failures"])
            log.line(
                f"ground truth: {truth.pass_rate:.1%} of {len(truth.tasks)} tasks pass "
                f"({isolation.value}); {len(truth.failed_tasks)} fail, {expected} expected to "
                f"fail in {environment['name']!r} "
                f"({self.settings.expected_gt_failures.source or 'no list'})"
            )
            self._ground_truth[key] = verdict
        return self._ground_truth[key]
