"""The `docker` and `podman` backends: programs run in throwaway containers of the runner image.

Each batch of programs goes to one container (`ENGINE run --rm -i ... IMAGE`) whose entry point
is the agent (sandbox/remote/agent.py): the RunRequest on its standard input, one verdict a line
on its standard output as each program finishes. Inside, bubblewrap isolates every sample as on the
host; the container adds a second wall: no network, a read-only root, a size-capped /tmp, memory
and process caps, no capabilities, a user that is not root.

A container that dies (killed, out of memory, the engine failing) is infrastructure, not a
verdict: run_with_retries asks again for the programs still without one, in a new container.
Containers are named, so one left behind by an error or an interrupted run is removed
(`ENGINE rm -f NAME`); the engine's client dying does not stop a podman container by itself.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from passbench.core.errors import BackendUnavailable, SandboxError
from passbench.core.records import ExecResult, Program
from passbench.stages.sandbox.base import (
    BackendTarget,
    ContainerConfig,
    EnvironmentRef,
    Limits,
    SandboxConfig,
    WarnCallback,
)
from passbench.stages.sandbox.host.repositories import REPOSITORY_PROCESSES
from passbench.stages.sandbox.remote.backend import REPOSITORY_EXTRAS, RemoteBackend
from passbench.stages.sandbox.remote.container_repos import RepositoryBatch, repository_batch
from passbench.stages.sandbox.remote.images import (
    LABEL_PYTHON,
    LABEL_VERSION,
    default_image,
    passbench_version,
)
from passbench.stages.sandbox.remote.wire import (
    RunRequest,
    offered_environment,
    read_verdicts,
    request_to_json,
)

ENGINES = ("docker", "podman")
#: The image's unprivileged user (Dockerfile); named again on the command line so an image
#: that drops its USER line still does not run the agent as root.
USER = "10001:10001"
#: Programs per container: bounds what a lost container costs, and spreads the start (about a
#: second) over many programs.
CHUNK = 200
#: Workers one container gets before a second container runs beside it.
WORKERS_PER_CONTAINER = 8
#: The agent's own memory and the engine's overhead, beyond the samples' (MiB).
OVERHEAD_MB = 512
#: Open files of each process in the container (the agent's workers keep pipes open; samples
#: get their own RLIMIT_NOFILE from the limits). An explicit value: the engines' default
#: (often 1048576) fails where the host's hard limit is lower and root lacks CAP_SYS_RESOURCE.
NOFILE = 4096
#: A repository run's share of the container's /tmp (MiB): its working copy, its install
#: prefix and its tests' temporary files.
REPOSITORY_TMP_MB = 4096
#: What the agent of a container of repository programs runs with, as root (run_command).
ROOT_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "SETFCAP")
#: How long close() keeps removing containers that are still starting.
REMOVE_WAIT_S = 30.0

_INSTALL = {
    "docker": "install Docker Engine (docs.docker.com/engine/install)",
    "podman": "install podman (Debian/Ubuntu: apt-get install podman)",
}


@dataclass(frozen=True)
class ImageInfo:
    """An image as the engine describes it."""

    id: str  # "sha256:<hex>", what containers are started from
    labels: dict[str, str]


def engine_command(engine: str) -> str:
    """The engine's executable; SandboxError saying what to install when it is missing."""
    found = shutil.which(engine)
    if found is None:
        raise SandboxError(f"the {engine} backend needs the `{engine}` command: {_INSTALL[engine]}")
    return found


def parse_inspect(output: str, image: str) -> ImageInfo:
    """The id and labels in `ENGINE image inspect IMAGE`'s JSON (docker and podman both give a
    list of objects with Id and Config.Labels; podman also a top-level Labels)."""
    try:
        data = json.loads(output)
    except ValueError as error:
        raise SandboxError(f"image inspect {image}: not JSON ({error})") from None
    if isinstance(data, list):
        data = data[0] if data else None
    if not isinstance(data, dict) or not isinstance(data.get("Id"), str):
        raise SandboxError(f"image inspect {image}: no image id in the answer")
    config = data.get("Config")
    labels = (
        (config.get("Labels") if isinstance(config, dict) else None) or data.get("Labels") or {}
    )
    if not isinstance(labels, dict):
        raise SandboxError(f"image inspect {image}: labels are not a mapping")
    image_id = data["Id"] if data["Id"].startswith("sha256:") else "sha256:" + data["Id"]
    return ImageInfo(image_id, {str(k): str(v) for k, v in labels.items()})


def inspect_image(engine: str, image: str) -> ImageInfo:
    """The image `image` in `engine`'s store: SandboxError naming `passbench image build` when
    there is none, BackendUnavailable when the engine cannot answer (a stopped daemon)."""
    command = [engine_command(engine), "image", "inspect", image]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        raise BackendUnavailable(f"{engine} image inspect {image} did not answer in 60 s") from None
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["no message"])[-1]
        lowered = message.lower()
        if "no such" in lowered or "not known" in lowered or "not found" in lowered:
            raise SandboxError(
                f"{engine} has no image {image}: build it with "
                f"`passbench image build --engine {engine}` (or name one with --image)"
            )
        raise BackendUnavailable(f"{engine} image inspect {image} failed: {message}")
    return parse_inspect(done.stdout, image)


def image_environment(labels: dict[str, str], wanted: EnvironmentRef, image: str) -> EnvironmentRef:
    """The image's environment that serves `wanted`, from its labels (same name; same lock
    when one is asked for); SandboxError naming what the image has otherwise."""
    built = labels.get(LABEL_VERSION, "")
    if built != passbench_version():
        raise SandboxError(
            f"image {image} holds passbench {built or '(no version label)'}, this is "
            f"{passbench_version()}: build the image of this version with `passbench image build`"
        )
    if wanted.name == "host":
        return EnvironmentRef("host", "", labels.get(LABEL_PYTHON, ""))
    prefix, suffix = "org.passbench.env.", ".lock_sha256"
    environments = {
        key.split(".")[3]: {"lock_sha256": value, "python_version": labels.get(LABEL_PYTHON, "")}
        for key, value in labels.items()
        if key.startswith(prefix) and key.endswith(suffix) and value
    }
    return offered_environment(
        environments,
        wanted,
        where=f"image {image}",
        lock_hint="build the image from the same lock (`passbench image build`), or run without "
        "a local environment to take the image's",
    )


def describe_engine(config: SandboxConfig, engine: str) -> BackendTarget:
    """The image this run's containers start from (by id) and the environment it offers."""
    image = config.own(ContainerConfig).image or default_image()
    info = inspect_image(engine, image)
    environment = image_environment(
        info.labels, config.environment or EnvironmentRef("host"), image
    )
    return BackendTarget(
        backend=engine,
        location=f"{image}@{info.id}",
        environment=environment,
        isolation=f"bubblewrap in a {engine} container",
    )


def describe_docker(config: SandboxConfig) -> BackendTarget:
    return describe_engine(config, "docker")


def describe_podman(config: SandboxConfig) -> BackendTarget:
    return describe_engine(config, "podman")


def container_workers(workers: int, cpus: int | None = None) -> int:
    """The workers a run uses in all (0 = one per core)."""
    return workers if workers > 0 else max(1, cpus or os.cpu_count() or 1)


def run_command(
    engine: str,
    image_id: str,
    name: str,
    limits: Limits,
    workers: int,
    *,
    allow_unsandboxed: bool = False,
    repositories: RepositoryBatch | None = None,
) -> list[str]:
    """The `ENGINE run` command of one container running `workers` samples at a time
    (`repositories`: a container of repository programs, shown what they name)."""
    tmp_mb = limits.tmp_mb * workers + 64
    # samples' address spaces (their RLIMIT_AS) and their /tmp (a tmpfs counts as memory)
    memory_mb = (limits.memory_mb + limits.tmp_mb) * workers + OVERHEAD_MB
    pids = limits.processes * workers + 64
    user = [f"--user={USER}"]
    shown: list[str] = []
    agent: list[str] = []
    if repositories is not None:
        # a repository run's working copy, its install prefix and its tests' /tmp are in the
        # container's /tmp (memory, as a tmpfs), beside its tests' own memory and processes
        tmp_mb += REPOSITORY_TMP_MB * workers
        memory_mb += (repositories.memory_mb + REPOSITORY_TMP_MB) * workers
        pids += max(limits.processes, REPOSITORY_PROCESSES) * workers
        # root, with only what the local backend's repository sandbox uses as root: a user
        # namespace in which the tests are host `nobody` and the loopback services another
        # user (writing its uid_map and gid_map: SETUID, SETGID, and SETFCAP to map root), the
        # working copy and scratch handed to `nobody` (CHOWN), set up and removed after the run
        # although `nobody` owns them (FOWNER, DAC_OVERRIDE). Without root, bubblewrap maps the
        # tests to the agent's own user, and there are no services or tarpit. Root also reads
        # a base interpreter under /root (pyenv's default), whose mount point is in the image's
        # root-only /root. Still no network, a read-only root, no new privileges. Not NET_ADMIN:
        # the tarpit's veth pair and routes are in each run's own network namespace, and
        # bubblewrap gives their setup CAP_NET_ADMIN in the run's user namespace, which owns it
        # (host/repository.py); the container's own namespace (--network=none: only lo) stays
        # out of reach.
        user = ["--user=0:0", *(f"--cap-add={cap}" for cap in ROOT_CAPABILITIES)]
        shown = repositories.engine_options()
        agent = repositories.agent_options()
    command = [
        engine,
        "run",
        "--rm",
        "--interactive",
        f"--name={name}",
        "--label=org.passbench.agent=1",
        # the samples' network is bubblewrap's to cut; the agent itself needs none
        "--network=none" if not limits.allow_network else "--network=bridge",
        "--read-only",
        # exec spelled out: docker adds noexec to a tmpfs that does not say (podman does not), and
        # tests run programs from it (sympy's bin/test in the working copy, scripts samples write)
        f"--tmpfs=/tmp:rw,exec,nosuid,nodev,mode=1777,size={tmp_mb}m",
        f"--memory={memory_mb}m",
        f"--memory-swap={memory_mb}m",  # no swap beyond the cap
        f"--pids-limit={pids}",
        f"--ulimit=nofile={NOFILE}:{NOFILE}",
        f"--ulimit=nproc={pids}:{pids}",
        "--cap-drop=ALL",
        "--security-opt=no-new-privileges",
        *user,
        # bubblewrap mounts a fresh /proc for each sample, which the kernel allows only where
        # no part of /proc is masked: the engines mask /proc/kcore, /proc/keys, ... by default
        *_nesting_options(engine),
        *shown,
        image_id,
        # the environment is the image's, by id, under a read-only root: nothing to re-hash
        # (repository programs' environments are checked by the agent, which finds them)
        "--skip-integrity-check",
        *agent,
    ]
    if allow_unsandboxed:
        command.append("--allow-unsandboxed")
    return command


def _nesting_options(engine: str) -> list[str]:
    """What lets bubblewrap create its namespaces inside the container (docs/backend-containers.md
    says what each costs)."""
    if engine == "podman":
        # podman's default seccomp profile allows user namespaces; only the /proc masks stop
        # bubblewrap (tested: Debian 12, podman 4.3, runc)
        return ["--security-opt=unmask=/proc/*"]
    # Docker's default seccomp profile refuses unshare/clone of namespaces without
    # CAP_SYS_ADMIN, and its AppArmor profile refuses mount (not tested here: no Docker engine)
    return [
        "--security-opt=systempaths=unconfined",
        "--security-opt=seccomp=unconfined",
        "--security-opt=apparmor=unconfined",
    ]


def chunks(programs: list[Program], size: int = CHUNK) -> list[list[Program]]:
    return [programs[start : start + size] for start in range(0, len(programs), size)]


class ContainerSandbox(RemoteBackend):
    """A Sandbox whose programs run in containers of the runner image (docker or podman)."""

    # the container is on this machine: it is shown what they name (container_repos.py)
    runs_repositories = True
    repository_extras = frozenset(REPOSITORY_EXTRAS)

    def __init__(self, config: SandboxConfig, engine: str, warn: WarnCallback | None = None):
        if engine not in ENGINES:
            raise SandboxError(f"unknown container engine '{engine}' (known: docker, podman)")
        self.config = config
        self.engine = engine
        self.executable = engine_command(engine)
        self.image = config.own(ContainerConfig).image or default_image()
        super().__init__(f"{engine} backend ({self.image})", engine, warn)
        info = inspect_image(engine, self.image)
        wanted = config.environment or EnvironmentRef("host")
        self.environment = image_environment(info.labels, wanted, self.image)
        self.image_id = info.id
        workers = container_workers(config.workers)
        self.containers = max(1, -(-workers // WORKERS_PER_CONTAINER))
        self.workers_each = max(1, workers // self.containers)
        # containers started and not yet cleaned up, with their engine client (None while it
        # starts)
        self._live: dict[str, subprocess.Popen[bytes] | None] = {}
        self._lock = threading.Lock()
        self._closed = False

    transient = (OSError,)

    @property
    def running(self) -> list[str]:
        """Names of this sandbox's containers now running (the engine's `--name`)."""
        with self._lock:
            return sorted(self._live)

    def _unsupported(self, programs: list[Program]) -> str | None:
        """Besides what every backend refuses: what this machine lacks of the repositories
        and environments the programs name, before any container starts."""
        refused = super()._unsupported(programs)
        if refused is None:
            try:
                repository_batch(programs, self.where, self.config.python)
            except SandboxError as error:
                return str(error)
        return refused

    def _attempt(self, programs: list[Program]) -> Iterator[ExecResult]:
        batches = chunks(programs)
        if self.containers == 1 or len(batches) == 1:
            for batch in batches:
                yield from self._container(batch)
            return
        yield from self._parallel(batches)

    def _parallel(self, batches: list[list[Program]]) -> Iterator[ExecResult]:
        """Up to `self.containers` containers at a time; results as any of them finishes one.
        The first failure stops the others (their containers removed) and is raised."""
        out: queue.Queue[tuple[str, Any]] = queue.Queue()
        todo: queue.Queue[list[Program]] = queue.Queue()
        for batch in batches:
            todo.put(batch)
        stop = threading.Event()

        def work() -> None:
            try:
                while not stop.is_set():
                    try:
                        batch = todo.get_nowait()
                    except queue.Empty:
                        break
                    for result in self._container(batch, stop):
                        out.put(("result", result))
            except BaseException as error:  # handed to the consumer, which raises it
                out.put(("error", error))
            finally:
                out.put(("end", None))

        threads = [threading.Thread(target=work, daemon=True) for _ in range(self.containers)]
        for thread in threads:
            thread.start()
        running = len(threads)
        try:
            while running:
                kind, value = out.get()
                if kind == "end":
                    running -= 1
                elif kind == "error":
                    raise value
                else:
                    yield value
        finally:
            stop.set()
            self._remove_live()
            for thread in threads:
                thread.join(timeout=30)

    def _container(
        self, programs: list[Program], stop: threading.Event | None = None
    ) -> Iterator[ExecResult]:
        if self._closed:
            raise SandboxError(f"the {self.engine} backend was closed")
        name = f"passbench-{uuid.uuid4().hex[:16]}"
        request = RunRequest(
            self.environment, self.config.limits, self.workers_each, tuple(programs)
        )
        payload = json.dumps(request_to_json(request)).encode()
        command = run_command(
            self.executable,
            self.image_id,
            name,
            self.config.limits,
            self.workers_each,
            allow_unsandboxed=self.config.allow_unsandboxed,
            # only what this container's programs name
            repositories=repository_batch(programs, self.where, self.config.python),
        )
        where = f"{self.engine} container {name}"
        with self._lock:
            self._live[name] = None
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
            )
            with self._lock:
                self._live[name] = process
            clean = False
            try:
                _feed(process.stdin, payload)
                done: dict[str, Any] = {}
                assert process.stdout is not None
                try:
                    for result in read_verdicts(process.stdout, where, done):
                        if stop is not None and stop.is_set():
                            return
                        yield result
                except BackendUnavailable as error:
                    if self._closed:  # close() removed it: nothing to retry
                        raise SandboxError(f"the {self.engine} backend was closed") from None
                    raise BackendUnavailable(f"{error}{_exit_note(process, errors)}") from None
                self._take_done(done)
                clean = process.wait(timeout=60) == 0
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                if process.stdout is not None:
                    process.stdout.close()
                if not clean:
                    self._remove(name)
                with self._lock:
                    self._live.pop(name, None)

    def _remove(self, name: str) -> None:
        """Remove container `name` (stopping it first), whatever state it is in."""
        subprocess.run(
            [self.executable, "rm", "--force", name],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )

    def _remove_live(self) -> None:
        """Remove every container of this sandbox whose client still runs, until none does: a
        container being created while it was first removed is removed again once it exists."""
        deadline = time.monotonic() + REMOVE_WAIT_S
        while True:
            with self._lock:
                live = dict(self._live)
            pending = sorted(n for n, p in live.items() if p is None or p.poll() is None)
            for name in pending:
                self._remove(name)
            if not pending or time.monotonic() > deadline:
                return
            time.sleep(0.2)

    def close(self) -> None:
        self._closed = True
        self._remove_live()


def _feed(stdin: IO[bytes] | None, payload: bytes) -> None:
    """Send the request; a container that died before reading it shows in its answer."""
    assert stdin is not None
    try:
        stdin.write(payload)
        stdin.close()
    except BrokenPipeError:
        pass


def _exit_note(process: subprocess.Popen[bytes], errors: IO[bytes]) -> str:
    """`; exit N: <last stderr line>`: why a container's answer ended early."""
    try:
        code = process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        return ""
    errors.seek(0)
    lines = errors.read().decode("utf-8", "replace").strip().splitlines()
    tail = f": {lines[-1][:300]}" if lines else ""
    killed = " (killed: out of memory, or stopped from outside)" if code in (137, -9) else ""
    return f"; exit {code}{killed}{tail}"
