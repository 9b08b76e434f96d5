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
import math
import platform
import random
import sys
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from passbench.core.errors import InputError, SandboxError
from passbench.core.journal import Journal, program_sha
from passbench.core.progress import Progress
from passbench.core.records import ExecResult, Isolation, Program
from passbench.core.settings import Paths
from passbench.stages.evalenv import EnvInfo, check_integrity
from passbench.stages.evaluate.settings import EvaluateSettings, TimeLimits
from passbench.stages.evaluate.splitting import SplitRun
from passbench.stages.sandbox import (
    BackendTarget,
    Sandbox,
    backend_config,
    describe_backend,
    open_sandbox,
)
from passbench.stages.sandbox.base import EnvironmentRef, SandboxConfig


def fingerprint(parts: object) -> str:
    """A stable hash of JSON-able parts: the key of a journal or a cache."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def weakest(*isolations: Isolation) -> Isolation:
    """The weakest isolation among verdicts: what a run that used them all can claim."""
    return Isolation.RLIMIT if Isolation.RLIMIT in isolations else Isolation.BUBBLEWRAP


def _default_identity(program: Program) -> str:
    """The hash a verdict is journaled under: the source's, and a process program's build and
    run commands and limits, which decide its verdict too."""
    if program.process is None:
        return program_sha(program.source)
    return program_sha(program.source, json.dumps(asdict(program.process), sort_keys=True))


class Execution:
    """Where and how one evaluation's programs run: interpreter, environment, limits."""

    def __init__(
        self,
        settings: EvaluateSettings,
        paths: Paths,
        *,
        dataset_sha256: str,
        env_name: str | None,
        env: EnvInfo | None,
        default_timeout_s: float,
        progress: Progress,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.dataset_sha256 = dataset_sha256
        self.env_name = env_name
        self.env = env
        self.default_timeout_s = default_timeout_s
        self.time_limits = TimeLimits.resolve(settings, default_timeout_s)
        self.progress = progress
        self.cgroup: str | None = None  # how workers were capped; None until a sandbox ran
        self._env_verified = False
        # --verify-fraction: programs another backend ran that were run again here and got
        # another status ({key, task_id, remote, local}), and how many were checked
        self.disagreements: list[dict[str, str]] = []
        self.verified = 0
        self._rng = random.Random(f"{dataset_sha256}:{settings.verify_fraction}")
        # where a backend other than the local one runs programs, and with what environment
        self.target: BackendTarget | None = None
        if self.elsewhere:
            self.target = self._describe_target()
        elif env_name is not None and env is None:
            raise SandboxError(f"no evaluation environment '{env_name}' for the local backend")

    @property
    def elsewhere(self) -> bool:
        """Whether programs run somewhere other than this machine's local sandbox."""
        return not self.settings.backend.startswith("local")

    def environment_ref(self) -> EnvironmentRef:
        """The evaluation environment by identity, as every backend is asked for it."""
        if self.env is not None:
            return EnvironmentRef(self.env.name, self.env.lock_sha256, self.env.python_version)
        if self.env_name is not None:
            return EnvironmentRef(self.env_name)  # the remote backend's, whichever it has
        return EnvironmentRef("host", "", "" if self.elsewhere else platform.python_version())

    def _describe_target(self) -> BackendTarget:
        settings = self.settings
        if settings.verify_fraction > 0 and self.env_name is not None and self.env is None:
            raise InputError(
                f"--verify-fraction re-runs samples here, which needs the '{self.env_name}' "
                f"environment (passbench env create {self.env_name})",
                field="verify_fraction",
            )
        target = describe_backend(self._config(self.environment_ref()), settings.backend)
        assert target is not None, "every backend but the local ones describes its target"
        return target

    def backend_description(self) -> dict[str, Any]:
        """What result files record of where programs ran."""
        description: dict[str, Any] = {"name": self.settings.backend}
        if self.target is not None:
            description["location"] = self.target.location
            description["isolation"] = self.target.isolation
            if self.settings.backend == "remote":
                description["endpoint"] = self.target.location
            description["verify_fraction"] = self.settings.verify_fraction
            if self.settings.verify_fraction > 0:
                description["verified"] = self.verified
                description["disagreements"] = self.disagreements
        return description

    @property
    def timeout_per_task_s(self) -> float:
        return self.time_limits.per_task_s

    @property
    def cache_folder(self) -> Path:
        """Where ground-truth timings and expected outputs are cached."""
        folder = self.paths.cache_dir / "ground-truth"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def env_description(self) -> dict[str, str]:
        if self.target is not None:
            return {
                "name": self.target.environment.name,
                "python": f"{self.target.location} ({self.target.backend})",
                "python_version": self.target.environment.python_version,
                "lock_sha256": self.target.environment.lock_sha256,
            }
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
        """The sandbox this evaluation's programs run in (with the environment the backend
        offers, when another backend runs them)."""
        return self._config(self.target.environment if self.target else self.environment_ref())

    def _config(self, environment: EnvironmentRef) -> SandboxConfig:
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
            history_dir=self.paths.cache_dir / "git-histories",
            environment=environment,
            backend_config=backend_config(
                self.settings.backend,
                endpoint=self.settings.endpoint,
                token=self.settings.token,
                image=self.settings.image,
                ray_address=self.settings.ray_address,
            ),
        )

    def open_sandbox(self, backend: str | None = None) -> Sandbox:
        """The sandbox programs run in (the settings' backend, or `backend`), once a local
        evaluation environment is verified intact (evalenv/manifest.py: no file changed since
        it was built)."""
        backend = backend or self.settings.backend
        if backend.startswith("local") and self.env is not None and not self._env_verified:
            check_integrity(self.env.name, self.env.root, self.progress.warn)
            self._env_verified = True
        sandbox = open_sandbox(self.sandbox_config(), backend=backend, warn=self.progress.warn)
        if backend == self.settings.backend:
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
                # another backend's verdicts are its own (resumed only from the same place)
                **(
                    {"backend": self.target.backend, "location": self.target.location}
                    if self.target is not None
                    else {}
                ),
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
        split: SplitRun | None = None,
    ) -> tuple[dict[str, ExecResult], Isolation, int]:
        """Run programs, journaling each verdict; with `reuse`, journaled ones are not re-run.
        Returns the verdicts by program key, the weakest isolation among them, and how many
        came from the journal.

        `identity` gives the hash a verdict is journaled under (default: the source's);
        `finalize` turns the sandbox's result into the verdict (the differential judge);
        `split` runs long unittest programs as one program per test method (splitting.py),
        whose verdicts it puts back together before anything else sees them."""
        identify = identity or _default_identity
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
        # "process" programs (MultiPL-E) with the same content run once: building one costs
        # seconds, and samples of a task often repeat each other
        copies: dict[str, list[str]] = {}
        first: dict[str, str] = {}
        unique = []
        for program in pending:
            sha = shas[program.key]
            if program.style == "process" and sha in first:
                copies[first[sha]].append(program.key)
                continue
            first[sha] = program.key
            copies[program.key] = []
            unique.append(program)
        running = split.expand(unique) if split is not None else unique
        with closing(self.stream(running)) as stream:
            for arrived in stream:
                whole = split.collect(arrived) if split is not None else arrived
                if whole is None:
                    continue  # a part of a split program: more parts to come
                result = whole
                if finalize is not None:
                    result = finalize(by_key[result.key], result)
                journal.record(shas[result.key], result)
                results[result.key] = result
                for key in copies[result.key]:
                    results[key] = replace(result, key=key)
                self.progress.advance(
                    1 + len(copies[result.key]), info=f"{result.task_id}: {result.status}"
                )
        self.progress.finish()
        if self.elsewhere and self.settings.verify_fraction > 0 and pending:
            self._verify(pending, results, finalize)
        return results, weakest(*(r.isolation for r in results.values())), reused

    def _verify(
        self,
        ran: list[Program],
        results: dict[str, ExecResult],
        finalize: Callable[[Program, ExecResult], ExecResult] | None,
    ) -> None:
        """Run a random `verify_fraction` of what the backend ran elsewhere again here, and
        record every program whose status differs (a verdict from elsewhere is never trusted
        blindly)."""
        count = min(len(ran), max(1, math.ceil(self.settings.verify_fraction * len(ran))))
        chosen = self._rng.sample(ran, count)
        by_key = {program.key: program for program in chosen}
        self.progress.start(count, "verifying here")
        with self.open_sandbox("local") as sandbox:
            for local in sandbox.run(chosen):
                if finalize is not None:
                    local = finalize(by_key[local.key], local)
                remote = results[local.key]
                self.verified += 1
                if local.status != remote.status:
                    self.disagreements.append(
                        {
                            "key": local.key,
                            "task_id": local.task_id,
                            "remote": remote.status,
                            "local": local.status,
                            "local_reason": local.reason[:300],
                            "remote_reason": remote.reason[:300],
                        }
                    )
                self.progress.advance(1, info=f"{local.task_id}: {local.status}")
        self.progress.finish()
        if self.disagreements:
            self.progress.warn(
                f"{len(self.disagreements)} of {self.verified} verdicts of {self._where}"
                " differ from this machine's (listed under backend.disagreements in the results)"
            )

    @property
    def _where(self) -> str:
        return self.target.location if self.target is not None else self.settings.backend

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
