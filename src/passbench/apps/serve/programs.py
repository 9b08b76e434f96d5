"""passbench's own remote-backend API on the server: programs in, verdicts streamed out.

    GET  /passbench/v1/info     protocol version, environments offered (name, lock hash,
                                Python), isolation, the server's caps, "repositories": true,
                                "repository_extras": ["services", "submodules"]
    POST /passbench/v1/missing  a run request -> {"missing": ["..."]}: what this server lacks
                                to run its repository programs (SWE-bench), one line each
                                (a repository or submodule commit, a test environment, a
                                loopback service's tool environment); [] when nothing
    POST /passbench/v1/run      {"protocol", "environment", "limits", "workers", "programs"}
                                -> NDJSON: one verdict a line as each finishes, then
                                {"done": true, ...}; or {"error": "..."} for a bad request

A client (sandbox/remote/remote.py) keeps its journal, so this API needs no state: a dropped
connection loses only the verdicts not yet sent, and the client sends those programs again.
Programs run in this server's sandboxes, with its own environment and data; a request chooses
an environment by name and lock hash and may ask for smaller limits, never larger ones, and
never the network.

Repository programs (SWE-bench) name their repository (owner/name, commit) and test
environment (cache, lock sha256, Python version) by identity beside the caller's paths; the
server finds them in its own folders (sandbox/remote/repositories.py, as a Ray node does): its
mirrors (`--repos`, PASSBENCH_REPOS, then its clone cache `<cache>/repos`, never a folder the
caller names) for the repository and its submodules, its environment caches for the test
environment and the loopback services' tool environments, and puts its own paths in the
caller's. A program that
would show any other host folder to its sandbox is refused, so a caller cannot have the server
show, say, ~/.ssh read-only to a patch.
"""

# No `from __future__ import annotations` here: FastAPI reads the route handlers' annotations
# at run time, and fastapi is imported only when the routes are mounted (it is optional).
import json
import logging
import queue
import threading
from collections.abc import AsyncIterator, Generator
from dataclasses import fields, replace
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passbench.apps.serve.config import ServeConfig
from passbench.core.errors import PassbenchError, WireError
from passbench.core.records import Isolation, Program, RepositorySpec
from passbench.stages.evalenv import EnvInfo, check_integrity, locate_env
from passbench.stages.sandbox import SandboxConfig, open_sandbox
from passbench.stages.sandbox.base import Limits
from passbench.stages.sandbox.remote import agent
from passbench.stages.sandbox.remote.agent import HOST
from passbench.stages.sandbox.remote.backend import REPOSITORY_EXTRAS
from passbench.stages.sandbox.remote.repositories import RepositoryResolver, RepositoryRoots
from passbench.stages.sandbox.remote.wire import (
    PROTOCOL,
    RunRequest,
    line,
    request_from_json,
    result_to_json,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger("passbench.apps.serve")

#: The longest a program may run here, whatever it asks: well above any official limit
#: (240 s, or a task's ground-truth time + 1 s), well below a worker held for a day.
MAX_TIMEOUT_S = 900.0
#: The longest a repository program (SWE-bench) may run here: the official per-instance limit,
#: what the local backend gives one.
MAX_REPOSITORY_TIMEOUT_S = 1800.0
#: What a repository program is given at most here (its tests' memory together, the output
#: kept): what the local backend gives one, never more, whatever a request asks.
_REPOSITORY_CAPS = RepositorySpec(git_dir="", commit="", script="")


def repository_roots(config: ServeConfig) -> RepositoryRoots:
    """Where this server finds what repository programs name: its own mirror folders
    (`paths.repos_dir`: --repos, PASSBENCH_REPOS or the config; several separated by ':'),
    then its clone cache, never a folder the caller names; its environment caches."""
    here = RepositoryRoots.here()
    repos = config.paths.repos_dir
    return replace(
        here,
        repos_dirs=tuple(Path(p).expanduser() for p in str(repos).split(":") if p)
        if repos is not None
        else (),
        env_dirs=config.env_caches,
        clone_cache=config.paths.cache_dir / "repos",
        callers_folder=False,
        runner="the server",
        repos_setting="--repos (or PASSBENCH_REPOS)",
    )


class ProgramService:
    """Runs clients' programs in this server's sandboxes, a bounded number of runs at once."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self._waiting = 0
        self._verified: set[Path] = set()
        base = config.base
        self._setup = agent.RunnerSetup(
            env_paths=(("bigcodebench", base.env_dir),) if base.env_dir is not None else (),
            nltk_data=base.nltk_data,
            scratch_dir=config.paths.cache_dir / "scratch",
            history_dir=config.paths.cache_dir / "git-histories",
            verify=self._verify_once,
            # repository programs reach the sandbox resolved in this server's folders
            # (`_localized`), never with the caller's paths
            repositories=True,
        )
        self._resolver = RepositoryResolver(repository_roots(config))
        self._resolving = threading.Lock()

    def evaluation_environment(self) -> dict[str, str]:
        """This server's BigCodeBench environment (name, lock, Python), or why it has none."""
        try:
            env = locate_env("bigcodebench", self.config.base.env_dir)
        except PassbenchError as error:
            return {"error": str(error)}
        return {
            "name": env.name,
            "python_version": env.python_version,
            "lock_sha256": env.lock_sha256,
        }

    def environments(self) -> dict[str, dict[str, str]]:
        return agent.offered_environments(self._setup)

    def _verify_once(self, env: EnvInfo) -> None:
        """No file of the environment changed since it was built (evalenv/manifest.py),
        checked before its first use by this server."""
        with self._lock:
            if env.root in self._verified:
                return
            check_integrity(env.name, env.root, log.warning)
            self._verified.add(env.root)

    def info(self) -> dict[str, Any]:
        return {
            "protocol": PROTOCOL,
            "passbench": version("passbench"),
            "environments": self.environments(),
            "isolation": Isolation.BUBBLEWRAP.value,
            "network": False,
            # it resolves repository programs (SWE-bench) itself: POST /passbench/v1/missing
            "repositories": True,
            # and their git submodules and loopback services (resolved the same way)
            "repository_extras": sorted(REPOSITORY_EXTRAS),
            "limits": {"max_workers": self.config.limits.max_workers, **_caps(self.config)},
        }

    def missing(self, body: bytes) -> list[str]:
        """What this server lacks to run the repository programs of the run request `body`,
        one line each (empty: nothing); ValueError or WireError for a bad request."""
        request = request_from_json(json.loads(body))
        with self._resolving:
            lines: list[str] = self._resolver.missing(request.programs)
        return lines

    def _localized(self, request: RunRequest) -> RunRequest:
        """`request` with its time limits capped and its repository programs found in this
        server's folders, with its paths and within its caps; SandboxError naming what is
        missing, or refusing a program that would show a host folder outside them."""
        programs: list[Program] = []
        for program in request.programs:
            if program.style == "repository":
                with self._resolving:
                    program = _capped(self._resolver.localize(program))
            else:
                program = replace(program, timeout_s=min(program.timeout_s, MAX_TIMEOUT_S))
            programs.append(program)
        return replace(request, programs=tuple(programs))

    def sandbox_config(self, request: RunRequest) -> SandboxConfig:
        """The sandbox a request runs in: this server's environment (checked intact before
        its first use), the request's limits within the server's, the server's worker cap."""
        name, wanted_lock = request.environment.name, request.environment.lock_sha256
        if name != HOST:
            offered = self.environments()
            if name not in offered:
                raise WireError(f"request: this server has no environment '{name}'")
            if wanted_lock and offered[name]["lock_sha256"] != wanted_lock:
                here = offered[name]["lock_sha256"][:12]
                raise WireError(
                    f"request: environment '{name}' here is lock {here}, "
                    f"the request needs {wanted_lock[:12]}"
                )
        workers, cap = request.workers, self.config.limits.max_workers
        if cap > 0:
            workers = min(workers or cap, cap)
        request = replace(request, limits=_within(request.limits, self.config), workers=workers)
        # no waiting room: a client's programs could claim to wait and double the concurrency
        config = agent.sandbox_config(request, self._setup)
        return replace(config, allow_unsandboxed=False, waiting_room=False)

    def results(
        self, body: bytes, cancelled: threading.Event | None = None
    ) -> Generator[bytes, None, None]:
        """The NDJSON lines answering one run request (run in a worker thread). Setting
        `cancelled` (the client went away) stops the run at once: its samples are killed and
        its slot freed, without waiting for the next verdict."""
        try:
            request = self._localized(request_from_json(json.loads(body)))
            config = self.sandbox_config(request)
        except (ValueError, PassbenchError) as error:
            yield line({"error": str(error)})
            return
        with self._lock:
            if self._waiting >= self.config.queue_size:
                yield line({"error": "busy: the queue is full", "retry": True})
                return
            self._waiting += 1
        try:
            self._slots.acquire()
        finally:
            with self._lock:
                self._waiting -= 1
        try:
            with open_sandbox(config) as sandbox:
                finished = threading.Event()
                if cancelled is not None:
                    threading.Thread(
                        target=_cancel_when, args=(sandbox, cancelled, finished), daemon=True
                    ).start()
                try:
                    for result in sandbox.run(request.programs):
                        yield line(result_to_json(result))
                finally:
                    finished.set()
                done = {"isolation": sandbox.isolation.value, "cgroup": sandbox.cgroup}
                yield line({"done": True, **done})
        except PassbenchError as error:
            yield line({"error": f"the server's sandbox failed: {error}", "retry": True})
        finally:
            self._slots.release()


def _capped(program: Program) -> Program:
    """A repository program within what the local backend gives one."""
    spec = program.repository
    assert spec is not None
    return replace(
        program,
        timeout_s=min(program.timeout_s, MAX_REPOSITORY_TIMEOUT_S),
        repository=replace(
            spec,
            memory_mb=min(spec.memory_mb, _REPOSITORY_CAPS.memory_mb),
            output_cap=min(spec.output_cap, _REPOSITORY_CAPS.output_cap),
        ),
    )


def _cancel_when(sandbox: Any, cancelled: threading.Event, finished: threading.Event) -> None:
    """Cancel `sandbox`'s run when `cancelled` is set before the run finishes."""
    while not finished.is_set():
        if cancelled.wait(0.2):
            if not finished.is_set():
                sandbox.cancel()
            return


def _caps(config: ServeConfig) -> dict[str, Any]:
    return {"memory_mb": config.limits.max_memory_mb, "tmp_mb": config.base.limits.tmp_mb}


def _within(asked: Limits, config: ServeConfig) -> Limits:
    """The request's limits, none above the server's (its defaults for the others); never
    the network."""
    server = replace(config.base.limits, memory_mb=config.limits.max_memory_mb)
    capped: dict[str, Any] = {}
    for field in fields(Limits):
        mine, theirs = getattr(server, field.name), getattr(asked, field.name)
        if field.name == "allow_network":
            capped[field.name] = False
        elif field.name == "cpu_s":
            capped[field.name] = theirs if mine is None else min(mine, theirs or mine)
        elif field.name == "stack_mb":
            capped[field.name] = min(theirs, config.limits.max_stack_mb)
        else:
            capped[field.name] = min(mine, theirs)
    return Limits(**capped)


#: Seconds without a verdict after which the server sends an empty line, so that a client can
#: tell a slow run from a dead connection.
HEARTBEAT_S = 10.0
#: How often a silent run checks that its client is still connected.
DISCONNECT_POLL_S = 1.0


def _produce(
    lines: Generator[bytes, None, None], out: queue.Queue[bytes | None], stop: threading.Event
) -> None:
    """Run `lines` in a thread of its own, handing each line to `out`; when `stop` is set (the
    client went away) the run is cancelled at once (ProgramService.results) and its sandbox
    shut down."""
    try:
        for item in lines:
            if stop.is_set():
                break
            out.put(item)
    finally:
        lines.close()
        out.put(None)


def mount(app: "FastAPI", service: ProgramService) -> None:
    """Add the program API's routes to the FastAPI app."""
    import anyio
    from fastapi import Request
    from fastapi.responses import JSONResponse, StreamingResponse

    limit = service.config.max_upload_mb * 1024 * 1024

    @app.get("/passbench/v1/info")
    def info() -> dict[str, Any]:
        return service.info()

    async def read_body(request: Request) -> bytes | None:
        """The request's body; None when it is larger than max_upload_mb."""
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return None
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return None
        return bytes(body)

    too_large = {"error": "request larger than max_upload_mb"}

    @app.post("/passbench/v1/missing", response_model=None)
    async def missing(request: Request) -> JSONResponse:
        body = await read_body(request)
        if body is None:
            return JSONResponse(too_large, status_code=413)
        try:
            # git and the environments' manifests are read from disk: off the event loop
            lines = await anyio.to_thread.run_sync(service.missing, body)
        except (ValueError, PassbenchError) as error:
            return JSONResponse({"error": f"bad request: {error}"}, status_code=400)
        return JSONResponse({"missing": lines})

    @app.post("/passbench/v1/run", response_model=None)
    async def run(request: Request) -> StreamingResponse | JSONResponse:
        body = await read_body(request)
        if body is None:
            return JSONResponse(too_large, status_code=413)
        stop = threading.Event()
        lines = service.results(body, stop)
        out: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=_produce, args=(lines, out, stop), daemon=True).start()

        async def stream() -> AsyncIterator[bytes]:
            silent_s = 0.0
            try:
                while True:
                    try:
                        item = await anyio.to_thread.run_sync(out.get, True, DISCONNECT_POLL_S)
                    except queue.Empty:
                        # a write to a closed connection may not fail, so ask whether the
                        # client is still there: a client that went away cancels its run
                        if await request.is_disconnected():
                            return
                        silent_s += DISCONNECT_POLL_S
                        if silent_s >= HEARTBEAT_S:
                            silent_s = 0.0
                            yield b"\n"  # a heartbeat: the client's read timeout measures silence
                        continue
                    if item is None:
                        return
                    silent_s = 0.0
                    yield item
            finally:
                stop.set()  # the client went away, or the run ended

        return StreamingResponse(stream(), media_type="application/x-ndjson")
