"""Running one evaluation's programs: the sandbox they run in, the journal their verdicts go to.

This is the one place an evaluation touches a sandbox. It opens it from the evaluation's
settings (the environment's interpreter verified intact first), streams programs through it,
journals every verdict the moment it arrives, and answers from the journal what is already
there, so every run resumes. The styles of evaluation (`tested`, `judged`) plan the programs
and read the verdicts; they never open a sandbox themselves.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import asdict, replace
from pathlib import Path

from passbench.evalenv import EnvInfo, check_integrity
from passbench.evaluate.settings import EvaluateSettings
from passbench.progress import Progress
from passbench.records import ExecResult, Isolation, Program
from passbench.sandbox import Sandbox, open_sandbox
from passbench.sandbox.base import SandboxConfig
from passbench.settings import Paths
from passbench.store.journal import Journal, program_sha


def fingerprint(parts: object) -> str:
    """A stable hash of JSON-able parts: the key of a journal or a cache."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def weakest(*isolations: Isolation) -> Isolation:
    """The weakest isolation among verdicts: what a run that used them all can claim."""
    return Isolation.RLIMIT if Isolation.RLIMIT in isolations else Isolation.BUBBLEWRAP


class Execution:
    """Where and how one evaluation's programs run: interpreter, environment, limits."""

    def __init__(
        self,
        settings: EvaluateSettings,
        paths: Paths,
        *,
        dataset_sha256: str,
        env: EnvInfo | None,
        default_timeout_s: float,
        progress: Progress,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.dataset_sha256 = dataset_sha256
        self.env = env
        self.default_timeout_s = default_timeout_s
        self.progress = progress
        self.cgroup: str | None = None  # how workers were capped; None until a sandbox ran
        self._env_verified = False

    @property
    def timeout_per_task_s(self) -> float:
        return self.settings.timeout_per_task(self.default_timeout_s)

    @property
    def cache_folder(self) -> Path:
        """Where ground-truth timings and expected outputs are cached."""
        folder = self.paths.cache_dir / "ground-truth"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def env_description(self) -> dict[str, str]:
        if self.env is None:
            return {
                "name": "host",
                "python": str(self.python()),
                "python_version": platform.python_version(),
                "lock_sha256": "",
            }
        return {
            "name": self.env.name,
            "python": str(self.env.python),
            "python_version": self.env.python_version,
            "lock_sha256": self.env.lock_sha256,
        }

    def python(self) -> Path:
        """The interpreter samples run under: the benchmark's environment, or the one passbench
        runs on (with its dependencies, numpy among them, as EvalPlus's own process has) for
        benchmarks without one."""
        if self.env is not None:
            return self.env.python
        return Path(sys.executable)

    def sandbox_config(self) -> SandboxConfig:
        env = dict(self.env.sample_environment()) if self.env is not None else {}
        read_only: list[Path] = []
        if self.settings.nltk_data is not None:
            env["NLTK_DATA"] = str(self.settings.nltk_data)
            read_only.append(self.settings.nltk_data)
        return SandboxConfig(
            python=self.python(),
            workers=self.settings.workers,
            limits=self.settings.limits,
            env=tuple(sorted(env.items())),
            read_only_paths=tuple(read_only),
            allow_unsandboxed=self.settings.allow_unsandboxed,
            scratch_dir=self.paths.cache_dir / "scratch",
        )

    def open_sandbox(self) -> Sandbox:
        """The sandbox programs run in, once the evaluation environment is verified intact
        (evalenv/manifest.py: no file changed since it was built)."""
        if self.env is not None and not self._env_verified:
            check_integrity(self.env.name, self.env.root, self.progress.warn)
            self._env_verified = True
        sandbox = open_sandbox(self.sandbox_config(), warn=self.progress.warn)
        self.cgroup = sandbox.cgroup
        return sandbox

    def verdict_fingerprint(self, kind: str, **extra: object) -> str:
        """What, besides a program's source, can change its verdict: the key of the
        ground-truth cache and of the samples journal (one function, so they cannot drift).
        The dataset, the interpreter (path, version) and its environment's lock, the limits
        (network permission included), the time limits, the samples' environment variables and
        read-only folders, and the NLTK data they see (folder and packages)."""
        settings = self.settings
        config = self.sandbox_config()
        return fingerprint(
            {
                "kind": kind,
                "benchmark": settings.benchmark,
                "dataset_sha256": self.dataset_sha256,
                "evalenv": self.env_description(),
                "limits": asdict(settings.limits),
                "timeouts": [self.timeout_per_task_s, settings.min_time_limit_s],
                "sample_env": config.env,
                "read_only": [str(path) for path in config.read_only_paths],
                "nltk": _nltk_listing(dict(config.env).get("NLTK_DATA")),
                # samples' /tmp and working directory on disk, not tmpfs (listdir order differs)
                "workdir": "disk",
                **extra,
            }
        )

    def run(
        self,
        programs: list[Program],
        journal: Journal,
        description: str,
        *,
        reuse: bool,
        identity: Callable[[Program], str] | None = None,
        finalize: Callable[[Program, ExecResult], ExecResult] | None = None,
    ) -> tuple[dict[str, ExecResult], Isolation, int]:
        """Run programs, journaling each verdict; with `reuse`, journaled ones are not re-run.
        Returns the verdicts by program key, the weakest isolation among them, and how many
        came from the journal.

        `identity` gives the hash a verdict is journaled under (default: the source's);
        `finalize` turns the sandbox's result into the verdict (the differential judge)."""
        identify = identity or (lambda program: program_sha(program.source))
        shas = {program.key: identify(program) for program in programs}
        by_key = {program.key: program for program in programs}
        results: dict[str, ExecResult] = {}
        if reuse:
            stored = journal.done(shas.values())
            for program in programs:
                hit = stored.get(shas[program.key])
                # an unsandboxed verdict is not reused by a run that does not allow them
                if hit is not None and (
                    hit.isolation is Isolation.BUBBLEWRAP or self.settings.allow_unsandboxed
                ):
                    results[program.key] = replace(hit, key=program.key)
        reused = len(results)
        self.progress.start(len(programs), description)
        if reused:
            self.progress.advance(reused, info=f"{reused} reused from the journal")
        pending = [program for program in programs if program.key not in results]
        with closing(self.stream(pending)) as stream:
            for result in stream:
                if finalize is not None:
                    result = finalize(by_key[result.key], result)
                journal.record(shas[result.key], result)
                results[result.key] = result
                self.progress.advance(1, info=f"{result.task_id}: {result.status}")
        self.progress.finish()
        return results, weakest(*(r.isolation for r in results.values())), reused

    def stream(self, programs: list[Program]) -> Generator[ExecResult, None, None]:
        """Each program's result as it arrives (it says the isolation it ran under); no
        sandbox is opened when there is nothing to run. Close it (`contextlib.closing`) so
        that the sandbox is shut down at once when the caller stops early."""
        if not programs:
            return
        with self.open_sandbox() as sandbox:
            yield from sandbox.run(programs)


def _nltk_listing(folder: str | None) -> list[str]:
    """The NLTK packages under `folder` ("corpora/stopwords", ...): what samples can load."""
    if not folder or not Path(folder).is_dir():
        return []
    return sorted(
        f"{category.name}/{package.name}"
        for category in Path(folder).iterdir()
        if category.is_dir()
        for package in category.iterdir()
    )
