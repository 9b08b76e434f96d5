"""Running the official BigCodeBench evaluator (bigcodebench 0.2.5) as a black box.

It is installed in its own virtual environment outside the repository (see docs/performance.md).
Each run gets:
- `BIGCODEBENCH_OVERRIDE_PATH`: the uncompressed dataset, so nothing is downloaded;
- its own `XDG_CACHE_HOME`, so its ground-truth cache (`<cache>/bigcodebench/<md5>.pkl`, task id
  -> test seconds or None for a failure) is ours to read and never clobbers a user's
  `~/.cache/bigcodebench` (a `--check_gt_only` run on a subset rewrites that file with the subset);
- its own `TMPDIR`, so the temporary folders it leaves behind can be counted and removed;
- `NLTK_DATA` pointing at the shared NLTK data, the same data passbench is given, so that verdicts
  differ only where the evaluators do.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    DATASET_VERSION,
    RESULTS_DIR,
    TimedRun,
    data_dir,
    run_timed,
    uncompressed_dataset,
)


@dataclass(frozen=True)
class OfficialGroundTruth:
    run: TimedRun
    times: dict[str, float | None]  # task id -> tests' own seconds; None = failed


@dataclass(frozen=True)
class OfficialSampleRun:
    run: TimedRun
    statuses: dict[str, list[str]]  # task id -> status per sample, in sample order


# Top-level paths that BigCodeBench tests create on the host when nothing isolates them: as root,
# BigCodeBench/832 makes /non/existent/path, after which 288, 350 and 1101 fail on this host for
# every later run of any tool that can see it. Removed after each official run that made them.
KNOWN_HOST_LITTER = frozenset({"non"})


def _clean_host(root_before: set[str]) -> list[str]:
    """New entries in / since `root_before`: reported; the known litter among them removed."""
    created = sorted(set(os.listdir("/")) - root_before)
    for name in created:
        if name in KNOWN_HOST_LITTER:
            shutil.rmtree(Path("/") / name, ignore_errors=True)
    return [f"/{name}" for name in created]


class Official:
    def __init__(self, venv: Path, version: str = DATASET_VERSION, nltk: bool = True) -> None:
        self.venv = venv
        self.command = venv / "bin" / "bigcodebench.evaluate"
        if not self.command.exists():
            raise SystemExit(f"{self.command}: not found; install bigcodebench==0.2.5 there")
        self.dataset = uncompressed_dataset(version)
        self.cache_home = RESULTS_DIR / "cache" / "official-xdg-cache"
        self.nltk = nltk

    @staticmethod
    def default_parallel() -> int:
        """What the official tool uses when --parallel is not given (evaluate.py)."""
        return max(1, (os.cpu_count() or 1) // 2)

    def _env(self, tmpdir: Path) -> dict[str, str]:
        env = dict(os.environ)
        env["BIGCODEBENCH_OVERRIDE_PATH"] = str(self.dataset)
        env["XDG_CACHE_HOME"] = str(self.cache_home)
        env["TMPDIR"] = str(tmpdir)
        env["PATH"] = f"{self.venv / 'bin'}:{env.get('PATH', '')}"
        env.pop("VIRTUAL_ENV", None)
        env.pop("PYTHONPATH", None)
        nltk_data = data_dir() / "nltk_data"
        if self.nltk and nltk_data.is_dir():
            env["NLTK_DATA"] = str(nltk_data)
        return env

    def _cache_file(self) -> Path:
        digest = hashlib.md5(self.dataset.read_bytes()).hexdigest()
        return self.cache_home / "bigcodebench" / f"{digest}.pkl"

    def _run(
        self, name: str, arguments: Sequence[str], workdir: Path, timeout_s: float | None
    ) -> TimedRun:
        # no "-" in the name: BigCodeBench/1127 splits temporary paths on "-"
        tmpdir = Path(tempfile.mkdtemp(prefix="pbbench_"))
        root_before = set(os.listdir("/"))
        try:
            run = run_timed(
                name,
                [str(self.command), *arguments],
                env=self._env(tmpdir),
                cwd=workdir,
                log_path=workdir / f"{name}.log",
                timeout_s=timeout_s,
            )
            leftovers = sum(1 for _ in tmpdir.iterdir())
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)
        run.extra["leaked_temp_entries"] = leftovers
        run.extra["host_paths_created"] = _clean_host(root_before)
        return run

    def ground_truth(
        self,
        task_ids: Sequence[str] | None,
        workdir: Path,
        parallel: int | None = None,
        timeout_s: float | None = None,
    ) -> OfficialGroundTruth:
        """`--check_gt_only` on the given tasks (all when None); times read from its cache."""
        dummy = workdir / "dummy.jsonl"
        dummy.write_text("", encoding="utf-8")
        arguments = [
            "--execution", "local", "--check_gt_only",
            "--split", "complete", "--subset", "full",
            "--samples", str(dummy),
        ]  # fmt: skip
        if task_ids is not None:
            arguments += ["--selective_evaluate", ",".join(task_ids)]
        if parallel is not None:
            arguments += ["--parallel", str(parallel)]
        cache = self._cache_file()
        cache.unlink(missing_ok=True)
        run = self._run("official-ground-truth", arguments, workdir, timeout_s)
        run.extra["parallel"] = parallel or self.default_parallel()
        if cache.is_file():
            with open(cache, "rb") as handle:
                times: dict[str, float | None] = pickle.load(handle)
        elif run.returncode == 0 and task_ids is not None:
            # it writes no cache when every task failed
            times = dict.fromkeys(task_ids)
        else:
            raise SystemExit(f"official ground truth produced no cache; see {run.log_path}")
        return OfficialGroundTruth(run=run, times=times)

    def evaluate_samples(
        self,
        samples: Path,
        task_ids: Sequence[str],
        workdir: Path,
        parallel: int | None = None,
        timeout_s: float | None = None,
    ) -> OfficialSampleRun:
        """Evaluate a samples file on `task_ids`; needs a ground-truth cache covering them
        (run `ground_truth` on the same tasks first, as a user's first run would)."""
        arguments = [
            "--execution", "local",
            "--split", "complete", "--subset", "full",
            "--samples", str(samples),
            "--selective_evaluate", ",".join(task_ids),
        ]  # fmt: skip
        if parallel is not None:
            arguments += ["--parallel", str(parallel)]
        run = self._run("official-samples", arguments, workdir, timeout_s)
        run.extra["parallel"] = parallel or self.default_parallel()
        results_path = samples.with_name(samples.name.replace(".jsonl", "_eval_results.json"))
        if not results_path.is_file():
            raise SystemExit(f"official evaluation wrote no {results_path}; see {run.log_path}")
        payload: dict[str, Any] = json.loads(results_path.read_text(encoding="utf-8"))
        statuses = {
            task_id: [entry["status"] for entry in entries]
            for task_id, entries in payload["eval"].items()
        }
        return OfficialSampleRun(run=run, statuses=statuses)
