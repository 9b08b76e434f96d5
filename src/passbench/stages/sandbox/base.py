"""The Sandbox protocol: run a batch of Programs under limits, return one ExecResult each.

Lifecycle (start/close, used as a context manager) is separate from use (`run`). Failures of the
program under test come back as data (ExecResult with status "fail"/"timeout" and a category);
failures of the sandbox itself (bubblewrap missing, the evaluation environment broken, a worker
that cannot start) raise SandboxError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from passbench.core.records import ExecResult, Isolation, Program

#: Where a backend says what the user should know (a retry, a fallback) without stopping.
WarnCallback = Callable[[str], None]

#: A program expected to use less than this share of one core over its run waits more than it
#: computes (sleeps, subprocesses, polling): the local backend starts it in a free slot while
#: the cores are busy, and the ground truth may split it into its test methods. The same half
#: core by which the local backend calls a running sample computing.
WAITING_CPU_SHARE = 0.5


def cpu_share(result: ExecResult) -> float | None:
    """The share of one core a run used while it could run: its CPU time over its duration,
    less the time it waited for a CPU that other work held (on a loaded machine a program that
    computes gets only part of a core, and must not look like one that waits). None when the
    run's CPU time was not measured."""
    if result.cpu_s is None:
        return None
    could_run = result.duration_s - (result.cpu_wait_s or 0.0)
    if could_run <= 0:  # it spent its run waiting for a CPU: it would have used one throughout
        return max(1.0, result.cpu_s / result.duration_s) if result.duration_s > 0 else 1.0
    return result.cpu_s / could_run


def expected_to_wait(program: Program) -> bool:
    """Known from an earlier run to wait more than it computes."""
    share = program.expected_cpu_share
    return share is not None and share < WAITING_CPU_SHARE


@dataclass(frozen=True)
class Limits:
    """Per-sample resource limits. Defaults protect a small host (see docs/sandbox.md)."""

    memory_mb: int = 4096  # address space (RLIMIT_AS and RLIMIT_DATA) of each sample, in MiB
    stack_mb: int = 10  # RLIMIT_STACK, as the official evaluator
    file_size_mb: int = 512  # RLIMIT_FSIZE: largest file a sample may write
    processes: int = 512  # RLIMIT_NPROC inside the sample's user namespace
    open_files: int = 1024  # RLIMIT_NOFILE
    cpu_s: float | None = (
        None  # RLIMIT_CPU; None = 2 x timeout + 10 s (a backstop to the wall limit)
    )
    tmp_mb: int = 512  # what a sample may store in its /tmp (on disk: measured, then killed)
    allow_network: bool = False


@dataclass(frozen=True)
class EnvironmentRef:
    """An evaluation environment by identity, which each backend provides its own way (the
    local one as a venv on this machine, a remote one as the server's)."""

    name: str  # "bigcodebench", or "host": the interpreter passbench itself runs on
    lock_sha256: str = ""  # the lock it was built from; "" = whichever the backend has
    python_version: str = ""


@dataclass(frozen=True)
class RemoteConfig:
    """The `remote` backend's own settings: a passbench server."""

    endpoint: str | None = None  # the server's base URL (--endpoint)
    token: str | None = field(default=None, repr=False)  # bearer token (PASSBENCH_REMOTE_TOKEN)


@dataclass(frozen=True)
class ContainerConfig:
    """The `docker` and `podman` backends' own settings."""

    image: str | None = None  # the runner image (--image; None: this passbench's default)


@dataclass(frozen=True)
class E2BConfig:
    """The `e2b` backend's own settings."""

    template: str | None = None  # the E2B template (--image; None: passbench's default)


@dataclass(frozen=True)
class RayConfig:
    """The `ray` backend's own settings."""

    address: str | None = None  # the cluster (--ray-address; None: RAY_ADDRESS, else a new one)


#: What a backend that runs programs elsewhere is told besides SandboxConfig (the local
#: backends need nothing more). Made from the flags in one place: sandbox.backend_config.
BackendConfig = RemoteConfig | ContainerConfig | E2BConfig | RayConfig

_Own = TypeVar("_Own", RemoteConfig, ContainerConfig, E2BConfig, RayConfig)


@dataclass(frozen=True)
class SandboxConfig:
    """Where and how the sandbox runs programs."""

    python: Path  # the evaluation environment's interpreter (local backends)
    workers: int = 0  # concurrent samples; 0 = decide from the cores
    limits: Limits = Limits()
    env: tuple[tuple[str, str], ...] = ()  # extra environment for samples (NLTK_DATA, ...)
    read_only_paths: tuple[Path, ...] = ()  # host paths made visible read-only (data dirs)
    recycle_after: int = 200  # samples a warm worker serves before it is replaced
    # with automatic workers, slots beyond them for programs an earlier run measured waiting
    # (the local backend's waiting room); off where the programs' measurements come from
    # elsewhere (a server's clients could claim any share of a core)
    waiting_room: bool = True
    # where each worker's disk-backed /tmp is made (None: the user cache folder's
    # passbench/scratch); only those per-worker folders are ever visible to samples
    scratch_dir: Path | None = None
    # where the local backend keeps its mirrors' history caches between runs, which make a
    # working copy of a repository program without walking the history (None: no cache; a
    # runner whose folders last one run, a container's, would pay for it in every run)
    history_dir: Path | None = None
    # Where bubblewrap cannot isolate, run samples with resource limits only instead of
    # refusing (SandboxError). They can then read and write whatever this user can.
    allow_unsandboxed: bool = False
    # the environment by identity (remote backends provide it; local ones use `python`)
    environment: EnvironmentRef | None = None
    # the chosen backend's own settings, when it runs programs elsewhere
    backend_config: BackendConfig | None = None

    def own(self, kind: type[_Own]) -> _Own:
        """The backend's own settings of type `kind` (its defaults when none were given)."""
        given = self.backend_config
        return given if isinstance(given, kind) else kind()


@dataclass(frozen=True)
class BackendTarget:
    """Where a backend other than the local one runs programs, known before anything runs:
    results record it, and journals key verdicts on it (a backend's verdicts are resumed only
    from the same place)."""

    backend: str  # the registry name
    location: str  # the server's URL, the image (by digest where known), the template, the cluster
    environment: EnvironmentRef  # what programs run with there
    isolation: str  # what isolates a sample there, in words ("bubblewrap in a container", ...)


class Sandbox(Protocol):
    """Runs programs; every backend returns identical verdicts on the same input."""

    @property
    def isolation(self) -> Isolation: ...

    @property
    def cgroup(self) -> str:
        """How each worker is capped as a whole: "v2", "v1" (cgroups) or "none" (rlimits)."""
        ...

    def run(self, programs: Iterable[Program]) -> Iterator[ExecResult]:
        """Run every program; yield results as they finish (any order). A caller that stops
        iterating abandons the programs still running."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Sandbox: ...

    def __exit__(self, *exc: object) -> None: ...
