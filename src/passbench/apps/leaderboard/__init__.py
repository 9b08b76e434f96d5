"""The leaderboard's workers: queued submissions scored through an execution backend.

The queue itself (submit, claim, lease, status, ownership) is
passbench.apps.leaderboard.store.queue; the bundle
format is passbench.apps.leaderboard.store.bundle; this package composes them with the evaluate
stage, as
pipeline.py composes the stages of a run.
"""

from passbench.apps.leaderboard.worker import JobOutcome, Worker, WorkerSettings

__all__ = ["JobOutcome", "Worker", "WorkerSettings"]
