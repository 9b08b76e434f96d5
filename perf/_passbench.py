"""Running `passbench evaluate` as a black box and reading the files it writes.

Interface used (see docs/results-format.md):
  passbench evaluate --benchmark bigcodebench --split complete --subset full
      (--samples FILE | --ground-truth) --output-dir DIR [--tasks ID,ID] [--workers N]
- ground truth: DIR/ground_truth.json with `tasks`: task id -> {status, duration_s, reason}
- samples: DIR/<stem>_eval_results.json, `eval`: task id -> [{status, duration_s, wall_s, ...}]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import DATASET_VERSION, TimedRun, data_dir, run_timed


@dataclass(frozen=True)
class TaskVerdict:
    status: str  # pass / fail / timeout
    duration_s: float | None  # the tests' own run time
    reason: str


@dataclass(frozen=True)
class PassbenchGroundTruth:
    run: TimedRun
    tasks: dict[str, TaskVerdict]


@dataclass(frozen=True)
class PassbenchSampleRun:
    run: TimedRun
    samples: dict[str, list[TaskVerdict]]  # task id -> verdict per sample
    workers: int | None  # as recorded in the result file, when it is


def default_command() -> list[str]:
    """The `passbench` console script of the interpreter running this script."""
    beside = Path(sys.executable).parent / "passbench"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("passbench")
    if found:
        return [found]
    raise SystemExit("passbench: command not found; run with the passbench venv's python")


class Passbench:
    def __init__(
        self,
        command: Sequence[str] | None = None,
        version: str = DATASET_VERSION,
        cache_dir: Path | None = None,
    ) -> None:
        self.command = list(command) if command else default_command()
        self.version = version
        # a fresh cache means no ground-truth timings from earlier runs (a first run's state)
        self.cache_dir = cache_dir

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("PASSBENCH_DATA_DIR", str(data_dir()))
        if self.cache_dir is not None:
            env["PASSBENCH_CACHE_DIR"] = str(self.cache_dir)
        return env

    def _base_arguments(self, task_ids: Sequence[str] | None, workers: int | None) -> list[str]:
        arguments = [
            "evaluate", "--benchmark", "bigcodebench",
            "--split", "complete", "--subset", "full", "--version", self.version,
        ]  # fmt: skip
        if task_ids is not None:
            arguments += ["--tasks", ",".join(task_ids)]
        if workers is not None:
            arguments += ["--workers", str(workers)]
        return arguments

    def ground_truth(
        self,
        task_ids: Sequence[str] | None,
        workdir: Path,
        workers: int | None = None,
        timeout_s: float | None = None,
    ) -> PassbenchGroundTruth:
        output = workdir / "passbench-ground-truth"
        arguments = [
            *self._base_arguments(task_ids, workers),
            "--ground-truth", "--output-dir", str(output),
        ]  # fmt: skip
        run = run_timed(
            "passbench-ground-truth",
            [*self.command, *arguments],
            env=self._env(),
            cwd=workdir,
            log_path=workdir / "passbench-ground-truth.log",
            timeout_s=timeout_s,
        )
        path = output / "ground_truth.json"
        if not path.is_file():
            raise SystemExit(f"passbench wrote no {path}; see {run.log_path}")
        payload: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        run.extra["workers"] = _recorded_workers(payload)
        tasks = {
            task_id: TaskVerdict(
                status=entry["status"],
                duration_s=entry.get("duration_s", entry.get("duration")),
                reason=entry.get("reason") or "",
            )
            for task_id, entry in payload["tasks"].items()
        }
        return PassbenchGroundTruth(run=run, tasks=tasks)

    def evaluate_samples(
        self,
        samples: Path,
        task_ids: Sequence[str],
        workdir: Path,
        workers: int | None = None,
        timeout_s: float | None = None,
    ) -> PassbenchSampleRun:
        output = workdir / "passbench-samples"
        arguments = [
            *self._base_arguments(task_ids, workers),
            "--samples", str(samples), "--output-dir", str(output),
        ]  # fmt: skip
        run = run_timed(
            "passbench-samples",
            [*self.command, *arguments],
            env=self._env(),
            cwd=workdir,
            log_path=workdir / "passbench-samples.log",
            timeout_s=timeout_s,
        )
        stem = samples.name.removesuffix(".gz").removesuffix(".jsonl")
        path = output / f"{stem}_eval_results.json"
        if not path.is_file():
            raise SystemExit(f"passbench wrote no {path}; see {run.log_path}")
        payload: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        workers_used = _recorded_workers(payload)
        run.extra["workers"] = workers_used
        samples_by_task = {
            task_id: [
                TaskVerdict(
                    status=entry["status"],
                    duration_s=entry.get("duration_s"),
                    reason=entry.get("reason") or "",
                )
                for entry in entries
            ]
            for task_id, entries in payload["eval"].items()
        }
        return PassbenchSampleRun(run=run, samples=samples_by_task, workers=workers_used)


def _recorded_workers(payload: dict[str, Any]) -> int | None:
    """The worker count, if the result file's passbench block records it."""
    block = payload.get("passbench") or {}
    for key in ("workers", "n_workers"):
        value = block.get(key)
        if isinstance(value, int):
            return value
    sandbox = block.get("sandbox") or {}
    value = sandbox.get("workers") if isinstance(sandbox, dict) else None
    return value if isinstance(value, int) else None
