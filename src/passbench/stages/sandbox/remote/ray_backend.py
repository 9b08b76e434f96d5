"""The `ray` backend: programs run on the nodes of a Ray cluster, verdicts stream back.

One warm actor per node (not per core): each runs the node's own local sandbox (bubblewrap and
warm workers that pre-import the benchmark's libraries), which already keeps the node's cores busy
and schedules its samples (slowest first, CPU-aware admission, memory caps). An actor per core
would check the environment and start preloaded workers once per core, and split one node's
scheduling into blind halves. The actor finds the evaluation environment on its node by name
and lock and checks its integrity (agent.sandbox_config), as a remote server or an agent does;
a node without it refuses the run with an error that names the node.

Programs go out in small chunks, one chunk in flight per actor, so a fast node takes more; each
verdict comes back on its own through a Ray streaming generator as it finishes, and is yielded
(and so journaled) at once. A lost node or dead actor costs only the verdicts it had not sent:
the programs still without one are retried through `run_with_retries` on the actors left (a
node that joined meanwhile gets one too), and a re-run resumes from the journal.

Repository programs (SWE-bench) run too: before a batch with some runs, every node says
whether it has each repository commit and test environment the batch names (in its own
folders, remote/repositories.py), and a node that lacks one stops the run with a line naming
the node and what it lacks; each node then runs them with its own paths, and the raw data the
benchmark judges (the output, the exit code, the pytest channel's records) comes back as a
local run gives it.

Ray is an optional dependency (`pip install 'passbench[ray]'`), imported only here and only when
this backend is chosen.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from types import ModuleType
from typing import Any

from passbench.core.errors import (
    BackendUnavailable,
    InputError,
    PassbenchError,
    SandboxError,
    WireError,
)
from passbench.core.records import ExecResult, Program
from passbench.stages.sandbox.base import (
    BackendTarget,
    EnvironmentRef,
    RayConfig,
    SandboxConfig,
    WarnCallback,
)
from passbench.stages.sandbox.host.local import schedule
from passbench.stages.sandbox.remote.backend import REPOSITORY_EXTRAS, RemoteBackend
from passbench.stages.sandbox.remote.repositories import needs
from passbench.stages.sandbox.remote.wire import (
    PROTOCOL,
    RunRequest,
    line,
    read_verdicts,
    request_from_json,
    request_to_json,
    result_to_json,
)

ISOLATION = "bubblewrap on each node"
#: Programs per worker in one chunk sent to a node: enough to keep its workers fed between two
#: chunks, few enough that the last chunks spread over the nodes.
CHUNK_PER_WORKER = 2
#: Seconds a node's actor may take to start and check its environment (hashing a large
#: environment on a busy node is slow).
PREPARE_TIMEOUT_S = 600.0
#: A cluster this backend starts itself (no address, no RAY_ADDRESS) keeps Ray's footprint
#: small: its object store only ever holds verdicts.
LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024
#: Seconds to wait for a TCP answer from the address given.
CONNECT_TIMEOUT_S = 5.0


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise SandboxError(
            "the ray backend needs Ray: pip install 'passbench[ray]' (or 'ray[default]')"
        ) from None
    return ray


def _transient(ray: ModuleType) -> tuple[type[BaseException], ...]:
    """Ray's errors that mean a node, an actor or an object was lost: the infrastructure."""
    exceptions = ray.exceptions
    return (
        exceptions.RayActorError,  # ActorDiedError, ActorUnavailableError
        # an actor pinned to a node Ray still listed alive after the node went
        exceptions.ActorUnschedulableError,
        exceptions.WorkerCrashedError,
        exceptions.NodeDiedError,
        exceptions.ObjectLostError,  # OwnerDiedError, ObjectFetchTimedOutError...
        exceptions.GetTimeoutError,
    )


def _address(config: SandboxConfig) -> str | None:
    return config.own(RayConfig).address or os.environ.get("RAY_ADDRESS") or None


def location(config: SandboxConfig) -> str:
    """The cluster as the user named it: the address given, RAY_ADDRESS, or "local" (a cluster
    this backend starts on this machine)."""
    given = config.own(RayConfig).address
    if given:
        return given
    if os.environ.get("RAY_ADDRESS"):
        return f"RAY_ADDRESS={os.environ['RAY_ADDRESS']}"
    return "local"


def check_address(address: str) -> None:
    """InputError, one line, when nothing answers at `address` (HOST:PORT or ray://HOST:PORT;
    "auto" and "local" are Ray's to resolve). Ray itself would wait a minute and print pages."""
    if address in ("auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, colon, port = hostport.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise InputError(
            f"'{address}' is not a Ray address (auto, HOST:PORT or ray://HOST:PORT)",
            field="ray_address",
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise InputError(
            f"no Ray cluster answers at {address} ({reason}); check --ray-address or RAY_ADDRESS",
            field="ray_address",
        ) from None


def describe(config: SandboxConfig) -> BackendTarget:
    """The cluster this run's programs go to, and the environment every node must have."""
    _ray()  # a missing Ray is said before anything runs
    address = _address(config)
    if address is not None:
        check_address(address)
    return BackendTarget(
        backend="ray",
        location=location(config),
        environment=config.environment or EnvironmentRef("host"),
        isolation=ISOLATION,
    )


# ------------------------------------------------------------------------ on each node


class NodeRunner:
    """What runs on a node, as a Ray actor: the node's local sandbox, kept warm between chunks
    for as long as the requests it gets want the same environment, limits and workers."""

    def __init__(self) -> None:
        self._sandbox: Any = None
        self._key: str = ""
        self._resolver: Any = None  # remote/repositories.py RepositoryResolver, when needed

    def _repositories(self) -> Any:
        from passbench.stages.sandbox.remote.repositories import RepositoryResolver

        if self._resolver is None:
            # this node's own folders: PASSBENCH_REPOS and the environment caches' variables
            # as `ray start` was run with, else passbench's defaults on this machine
            self._resolver = RepositoryResolver()
        return self._resolver

    def missing(self, request_json: str) -> list[str]:
        """What this node lacks to run the request's repository programs (their repository
        commits and test environments), one line each."""
        try:
            request = request_from_json(json.loads(request_json))
        except (ValueError, WireError) as error:
            return [f"bad request: {error}"]
        lines: list[str] = self._repositories().missing(request.programs)
        return lines

    def _open(self, request: RunRequest) -> Any:
        from passbench.stages.sandbox import open_sandbox
        from passbench.stages.sandbox.remote.agent import RunnerSetup, sandbox_config

        key = repr((request.environment, request.limits, request.workers))
        if self._sandbox is None or key != self._key:
            self.close()
            # the environment by name and lock, checked intact (SandboxError otherwise), found
            # where this node keeps it (PASSBENCH_ENV_DIR or the default), with the NLTK data
            # it was built with, as a local run uses it
            # repository programs reach it resolved on this node (`run`), their working
            # copies made with the history caches in this node's cache folder
            history_dir = self._repositories().roots.history_dir
            setup = RunnerSetup(repositories=True, history_dir=history_dir)
            config = sandbox_config(request, setup)
            self._sandbox = open_sandbox(config)
            self._key = key
        return self._sandbox

    def prepare(self, request_json: str) -> dict[str, Any]:
        """Open the sandbox for requests like this one; what this node is, and the error that
        keeps it from serving them (a node that lacks the environment, or bubblewrap)."""
        import ray

        info: dict[str, Any] = {
            "node_id": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(),
            "passbench": version("passbench"),
            "protocol": PROTOCOL,
            "python": sys.version.split()[0],
        }
        try:
            sandbox = self._open(request_from_json(json.loads(request_json)))
            info["isolation"] = sandbox.isolation.value
            info["cgroup"] = sandbox.cgroup
        except PassbenchError as error:
            info["error"] = str(error)
        return info

    def run(self, request_json: str) -> Iterator[bytes]:
        """The NDJSON answer to one chunk (remote/wire.py), a line as each verdict is known."""
        try:
            request = request_from_json(json.loads(request_json))
        except (ValueError, WireError) as error:  # a caller of another version: not retried
            yield line({"error": f"bad request: {error}", "retry": False})
            return
        try:
            programs = [self._repositories().localize(p) for p in request.programs]
        except SandboxError as error:  # what it lacks: checked before the run, so not retried
            yield line({"error": str(error), "retry": False})
            return
        try:
            sandbox = self._open(request)
            for result in sandbox.run(programs):
                yield line(result_to_json(result))
            yield line(
                {"done": True, "isolation": sandbox.isolation.value, "cgroup": sandbox.cgroup}
            )
        except PassbenchError as error:
            # a broken worker pool is this node's infrastructure: other nodes may serve
            self.close()
            yield line({"error": f"the node's sandbox failed: {error}", "retry": True})

    def close(self) -> None:
        if self._sandbox is not None:
            sandbox, self._sandbox = self._sandbox, None
            sandbox.close()


# ------------------------------------------------------------------------ on the caller


@dataclass
class _Node:
    node_id: str
    address: str  # IP:port of its raylet, to name it
    workers: int
    actor: Any = None
    # the repository programs' needs (repo, commit, caller's git dir, lock) it has
    checked: set[tuple[str, ...]] = field(default_factory=set)

    @property
    def name(self) -> str:
        return f"node {self.address} ({self.node_id[:12]})"


@dataclass
class _Call:
    node: _Node
    generator: Any  # ray.ObjectRefGenerator
    reader: Iterator[ExecResult]
    done: dict[str, Any] = field(default_factory=dict)


class RaySandbox(RemoteBackend):
    """A Sandbox whose programs run on the nodes of a Ray cluster (`RayConfig.address`,
    else RAY_ADDRESS, else a cluster started on this machine)."""

    runs_repositories = True
    # every node resolves them too (its own mirrors, its own environment cache)
    repository_extras = frozenset(REPOSITORY_EXTRAS)

    def __init__(self, config: SandboxConfig, warn: WarnCallback | None = None) -> None:
        self._ray = ray = _ray()
        self.config = config
        super().__init__(f"ray backend ({location(config)})", "ray", warn)
        self.environment = config.environment or EnvironmentRef("host")
        self.transient = _transient(ray)
        self._nodes: dict[str, _Node] = {}
        # nodes lost to this run: Ray may list one alive for a while after it went (until its
        # heartbeats are missed), and a node that comes back does so under a new id
        self._lost: set[str] = set()
        self._cgroups: set[str] = set()  # what the nodes said, over the run
        self._connected = False
        #: verdicts each node has sent, by node name (how a run spread over the cluster)
        self.served: Counter[str] = Counter()
        if not ray.is_initialized():
            address = _address(config)
            options: dict[str, Any] = {"logging_level": "WARNING", "log_to_driver": False}
            if address is not None:
                check_address(address)
            else:  # Ray starts a cluster here: small, no dashboard
                options.update(
                    include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES
                )
            try:
                ray.init(address=config.own(RayConfig).address, **options)
            except (ConnectionError, RuntimeError, ValueError) as error:
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise InputError(
                    f"cannot connect to the Ray cluster at {location(config)}: {first}",
                    field="ray_address",
                ) from None
            self._connected = True  # so close() disconnects: a connection we made is ours
        self._runner = ray.remote(NodeRunner)
        try:
            # every node checked before anything runs: one without the environment (or
            # bubblewrap, or this passbench) is named now, not halfway through the run
            self._alive_nodes()
        except BaseException:
            self.close()
            raise

    def _request(self, programs: Iterable[Program], workers: int) -> str:
        """A chunk as the wire's JSON text: what a node reads is what any runner reads."""
        request = RunRequest(self.environment, self.config.limits, workers, tuple(programs))
        return json.dumps(request_to_json(request))

    def _alive_nodes(self) -> list[_Node]:
        """The cluster's live nodes that offer CPUs (a head kept free of work offers none),
        with an actor each, started and checked; SandboxError naming those that cannot serve
        this run."""
        ray = self._ray
        seen: set[str] = set()
        for entry in ray.nodes():
            cpus = int(entry.get("Resources", {}).get("CPU", 0))
            if not entry.get("Alive") or cpus < 1 or entry["NodeID"] in self._lost:
                continue
            node_id = entry["NodeID"]
            seen.add(node_id)
            if node_id not in self._nodes:
                address = f"{entry['NodeManagerAddress']}:{entry['NodeManagerPort']}"
                workers = self.config.workers or cpus
                self._nodes[node_id] = _Node(node_id, address, workers)
        for node_id in list(self._nodes):
            if node_id not in seen:
                self._drop(self._nodes[node_id])
        if not self._nodes:
            raise BackendUnavailable(f"{self.where}: the cluster has no live node with CPUs")
        starting = [node for node in self._nodes.values() if node.actor is None]
        if starting:
            self._start(starting)
        return list(self._nodes.values())

    def _start(self, nodes: list[_Node]) -> None:
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        checks = {}
        for node in nodes:
            node.actor = self._runner.options(
                # the node's local sandbox decides how many cores its samples use
                num_cpus=0,
                max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False),
            ).remote()
            checks[node.node_id] = node.actor.prepare.remote(self._request((), node.workers))
        ours = version("passbench")
        refused: list[str] = []
        for node_id, check in checks.items():
            node = self._nodes[node_id]
            try:
                info = ray.get(check, timeout=PREPARE_TIMEOUT_S)
            except self.transient as error:
                # lost while starting (Ray may list a node alive for a while after it went):
                # the run goes on without it, once every other node has been checked
                self.warn(f"{self.where}: {node.name} did not start: {_first_line(error)}")
                self._lost.add(node_id)
                self._drop(node)
                continue
            self._cgroups.add(str(info.get("cgroup", "none")))
            if info.get("error"):
                refused.append(f"{node.name}: {info['error']}")
            elif info.get("passbench") != ours or info.get("protocol") != PROTOCOL:
                refused.append(
                    f"{node.name} runs passbench {info.get('passbench')}, this one {ours}: "
                    "install the same version on every node"
                )
        if refused:
            for node in nodes:
                self._drop(node)
            raise SandboxError(f"{self.where}: " + "; ".join(refused))
        if not self._nodes:
            raise BackendUnavailable(f"{self.where}: no node of the cluster could start")
        # how the nodes cap their workers ("ray:v2"; "ray:none,v2" when they differ)
        self._cgroup = "ray:" + ",".join(sorted(self._cgroups))

    def _check_repositories(self, nodes: list[_Node], programs: list[Program]) -> None:
        """Ask every node whether it has the repository commits and test environments that
        `programs` name (once per node and need); SandboxError naming each node that lacks
        one, and what, before anything runs."""
        needed = needs(programs)
        asks = {}
        for node in nodes:
            new = [key for key in needed if key not in node.checked]
            if new:
                request = RunRequest(
                    self.environment, self.config.limits, 0, tuple(needed[key] for key in new)
                )
                asks[node.node_id] = (
                    new,
                    node.actor.missing.remote(json.dumps(request_to_json(request))),
                )
        refused: list[str] = []
        for node_id, (new, ask) in asks.items():
            node = self._nodes[node_id]
            try:
                lacks = self._ray.get(ask, timeout=PREPARE_TIMEOUT_S)
            except self.transient as error:
                raise BackendUnavailable(
                    f"{node.name} did not answer: {_first_line(error)}"
                ) from None
            if lacks:
                refused.append(f"{node.name} lacks: " + "; ".join(lacks))
            else:
                node.checked.update(new)
        if refused:
            raise SandboxError(f"{self.where}: " + " | ".join(refused))

    def _drop(self, node: _Node) -> None:
        self._nodes.pop(node.node_id, None)
        if node.actor is not None:
            # an actor on a lost node is already gone: Ray may say so any way it likes
            with contextlib.suppress(Exception):
                self._ray.kill(node.actor)
            node.actor = None

    def _attempt(self, programs: list[Program]) -> Iterator[ExecResult]:
        """Chunks of `programs` to every live node as it frees up, verdicts as they arrive;
        a node lost on the way stops getting chunks and the others go on; then the first such
        loss is raised, so the programs it held are tried again."""
        ray = self._ray
        nodes = self._alive_nodes()
        self._check_repositories(nodes, programs)
        # every chunk asks for the modules the whole batch preloads, as the local sandbox's
        # workers preload them for a batch given at once: a node's workers then start once,
        # not again (tensorflow and all) whenever a chunk brings a new library
        preload = tuple(sorted({module for program in programs for module in program.preload}))
        # slowest first over the whole batch (by expected duration), as one node would
        queue = [replace(program, preload=preload) for program in schedule(programs)]
        calls: dict[Any, _Call] = {}
        lost: BaseException | None = None
        retried: tuple[type[BaseException], ...] = (*self.transient, BackendUnavailable)

        def dispatch(node: _Node) -> None:
            size = max(1, CHUNK_PER_WORKER * node.workers)
            chunk, queue[:] = queue[:size], queue[size:]
            if not chunk:
                return
            generator = node.actor.run.remote(self._request(chunk, node.workers))
            call = _Call(node, generator, iter(()))
            call.reader = read_verdicts((ray.get(ref) for ref in generator), node.name, call.done)
            calls[generator] = call

        for node in nodes:
            dispatch(node)
        while calls:
            ready, _ = ray.wait(list(calls), num_returns=1, fetch_local=True)
            call = calls[ready[0]]
            try:
                result = next(call.reader)
            except StopIteration:  # the chunk is answered: the node takes the next one
                del calls[ready[0]]
                dispatch(call.node)
                continue
            except retried as error:
                del calls[ready[0]]
                self.warn(f"{self.where}: {_first_line(error)}; its other programs go elsewhere")
                if isinstance(error, self.transient):
                    self._lost.add(call.node.node_id)
                self._drop(call.node)
                lost = lost or error
                if not calls and queue:
                    break  # no node left working: the next attempt looks for nodes again
                continue
            self.served[call.node.name] += 1
            yield result
        if lost is not None:
            raise BackendUnavailable(_first_line(lost))

    def close(self) -> None:
        ray = self._ray
        closing = [node.actor.close.remote() for node in self._nodes.values() if node.actor]
        if closing:
            # the nodes' sandboxes stop their workers; a node that is gone is not waited for
            ray.wait(closing, num_returns=len(closing), timeout=30)
        for node in list(self._nodes.values()):
            self._drop(node)
        if self._connected:
            self._connected = False
            ray.shutdown()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)[:300]
