"""What every backend that runs programs elsewhere shares: one run-and-retry rule, and how the
isolation and the cgroup the programs actually had are learnt from the agent's closing line.

A backend says how one attempt runs a list of programs (`_attempt`: a verdict as each arrives)
and which of its errors are transient; `run` asks again for the programs still without a
verdict when an attempt fails with BackendUnavailable or one of those (retrying.py), and never
asks for a verdict twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from passbench.core.errors import SandboxError
from passbench.core.records import ExecResult, Isolation, Program, RepositorySpec
from passbench.stages.sandbox.base import WarnCallback
from passbench.stages.sandbox.remote.retrying import run_with_retries

#: What a repository program may need of a runner besides its repository and environment: the
#: name a runner's info gives it, what a refusal says a backend does not do, and which programs
#: need it. Read-only: what a runner's info advertises must not change while it runs.
REPOSITORY_EXTRAS: Mapping[str, tuple[str, Callable[[RepositorySpec], bool]]] = MappingProxyType(
    {
        "services": (
            "start loopback services (requests' httpbin)",
            lambda spec: bool(spec.services),
        ),
        "submodules": (
            "check out git submodules (astropy's astropy_helpers)",
            lambda spec: bool(spec.submodules),
        ),
    }
)


def _ignore(message: str) -> None:
    del message


class RemoteBackend(ABC):
    """The Sandbox protocol for a backend whose agent runs the programs elsewhere (a server, a
    container, an E2B sandbox, a Ray node). Until the agent says otherwise the programs are
    taken to run under bubblewrap, which every agent uses or refuses to run without."""

    #: errors of this backend's client that mean "try again", besides BackendUnavailable
    transient: tuple[type[BaseException], ...] = ()
    #: whether its runners resolve repository programs (SWE-bench) on their own machine
    #: (remote/repositories.py); a backend that does not refuses them before anything runs
    runs_repositories = False
    #: which of REPOSITORY_EXTRAS its runners provide as well
    repository_extras: frozenset[str] = frozenset()

    def __init__(self, where: str, cgroup: str, warn: WarnCallback | None) -> None:
        self.where = where  # how messages name this backend ("remote backend URL", ...)
        self.warn: WarnCallback = warn or _ignore
        self._isolation = Isolation.BUBBLEWRAP
        self._cgroup_prefix = cgroup
        self._cgroup = cgroup

    @property
    def isolation(self) -> Isolation:
        return self._isolation

    @property
    def cgroup(self) -> str:
        return self._cgroup

    def run(self, programs: Iterable[Program]) -> Iterator[ExecResult]:
        listed = list(programs)
        unsupported = self._unsupported(listed)
        if unsupported:
            raise SandboxError(unsupported)
        return self._with_retries(listed)

    def _unsupported(self, programs: list[Program]) -> str | None:
        """Why this backend refuses `programs` before anything runs (one line), or None: the
        repository programs when its runners do not resolve them, else the first of
        `REPOSITORY_EXTRAS` some program needs and its runners lack."""
        specs = [(p.task_id, p.repository) for p in programs if p.style == "repository"]
        if not specs:
            return None
        if not self.runs_repositories:
            return self._no_repositories()
        for extra, (what, needs) in REPOSITORY_EXTRAS.items():
            if extra in self.repository_extras:
                continue
            tasks = sorted({task for task, spec in specs if spec is not None and needs(spec)})
            if tasks:
                more = f" and {len(tasks) - 1} more" if len(tasks) > 1 else ""
                return f"{self.where} does not {what} for {tasks[0]}{more}: {self._extra_hint()}"
        return None

    def _no_repositories(self) -> str:
        """Why this backend refuses repository programs (one line)."""
        return (
            f"{self.where} does not run repository programs (SWE-bench): "
            "use --backend local, docker, podman, ray or remote"
        )

    def _extra_hint(self) -> str:
        """What to do about a repository program this backend's runners cannot run."""
        return "use --backend local"

    def _with_retries(self, programs: list[Program]) -> Iterator[ExecResult]:
        return run_with_retries(
            programs, self._attempt, where=self.where, warn=self.warn, transient=self.transient
        )

    @abstractmethod
    def _attempt(self, programs: list[Program]) -> Iterator[ExecResult]:
        """One try at running `programs`: each verdict as it arrives. BackendUnavailable (or a
        transient error) when the place they run is lost; the rest are asked for again."""

    def _take_done(self, done: Mapping[str, Any]) -> None:
        """Record what the agent's closing line says the programs ran under."""
        if done.get("isolation"):
            try:
                self._isolation = Isolation(done["isolation"])
            except ValueError:
                raise SandboxError(
                    f"{self.where}: the agent reported isolation {done['isolation']!r}"
                ) from None
        if done.get("cgroup"):
            self._cgroup = f"{self._cgroup_prefix}:{done['cgroup']}"

    @abstractmethod
    def close(self) -> None:
        """Release what the backend holds (connections, containers, sandboxes)."""

    def __enter__(self) -> RemoteBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
