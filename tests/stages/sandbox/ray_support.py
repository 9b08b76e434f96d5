"""A real multi-node Ray cluster on this machine, for the ray backend's tests (and the contract
suite): `ray start --head` plus more `ray start --address=...` nodes, each its own raylet.

    with ray_cluster() as address:          # two nodes, one CPU each
        config = replace(config, backend_config=RayConfig(address))
    with running_ray(config) as (backend, config):   # the same, for a suite of backends
        open_sandbox(config, backend=backend)

Every node is a `ray start --block` in a session of its own, so stopping the cluster (or losing
one node on purpose, `RayCluster.kill_node`) signals only the processes these tests started:
`ray stop` would stop every Ray process on the machine, other people's included. Ray resolves
127.0.0.1 to the machine's address on purpose (a node must be reachable by the others), so the
nodes advertise that address; ports are chosen free, the object store is small, no dashboard.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import passbench
from passbench.stages.sandbox import RayConfig, SandboxConfig

RAY = Path(sys.executable).with_name("ray")
OBJECT_STORE_BYTES = 100 * 1024 * 1024
START_TIMEOUT_S = 120.0


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return RAY.exists()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Node:
    process: subprocess.Popen[bytes]
    node_manager_port: int
    log: Path

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


@dataclass
class RayCluster:
    """Nodes started by these tests; `address` is the head's GCS (HOST:PORT)."""

    root: Path
    address: str = ""
    nodes: list[Node] = field(default_factory=list)

    def _environment(self, extra: Mapping[str, str]) -> dict[str, str]:
        env = dict(os.environ)
        # the nodes' workers import this very passbench (the checkout under test), as every
        # node of a real cluster must run the caller's version
        source = str(Path(passbench.__file__).resolve().parents[1])
        parts = [source, *(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)]
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in parts)
        env.pop("RAY_ADDRESS", None)
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        env.update(extra)
        return env

    def add_node(self, *, cpus: int = 1, env: Mapping[str, str] | None = None) -> Node:
        """Start one more node (the head first) and wait until the cluster counts it."""
        head = not self.nodes
        manager_port = free_port()
        command = [
            str(RAY),
            "start",
            "--block",
            f"--num-cpus={cpus}",
            f"--object-store-memory={OBJECT_STORE_BYTES}",
            f"--node-manager-port={manager_port}",
            f"--object-manager-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            "--min-worker-port=0",
            "--max-worker-port=0",
            "--disable-usage-stats",
        ]
        if head:
            port = free_port()
            command += [
                "--head",
                f"--port={port}",
                "--include-dashboard=false",
                f"--dashboard-port={free_port()}",
                f"--temp-dir={self.root / 'ray'}",
            ]
        else:
            command.append(f"--address={self.address}")
        log = self.root / f"node-{len(self.nodes)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self._environment(env or {}),
                start_new_session=True,  # its own session: stopped as one, and only it
            )
        node = Node(process, manager_port, log)
        self.nodes.append(node)
        if head:
            self.address = f"{_node_ip()}:{port}"
        self._wait_for(node)
        return node

    def _wait_for(self, node: Node) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not node.alive:
                raise RuntimeError(f"ray start failed:\n{node.log.read_text()[-3000:]}")
            if self.address and _listening(self.address) and self._counts(node):
                return
            time.sleep(0.5)
        raise RuntimeError(f"a Ray node did not join in {START_TIMEOUT_S:g} s")

    def _counts(self, node: Node) -> bool:
        """Whether the cluster lists `node` alive (read from the raylet's log: asking the
        cluster would connect this process to it)."""
        text = node.log.read_text(errors="replace")
        return "Ray runtime started" in text

    def kill_node(self, node: Node) -> None:
        """Lose `node` as a machine is lost: every process of it killed at once."""
        _kill_session(node.process.pid, signal.SIGKILL)
        node.process.wait()

    def stop(self) -> None:
        """Stop every node these tests started (later nodes first), and only them."""
        for node in reversed(self.nodes):
            if node.alive:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(node.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for node in reversed(self.nodes):
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            # whatever of the node outlived its `ray start` (it stays in the session)
            _kill_session(node.process.pid, signal.SIGKILL)
            if node.process.poll() is None:
                node.process.wait()


def _kill_session(session: int, signal_number: int) -> None:
    """Signal every process of the session `ray start` leads: its raylet and the workers that
    raylet started (each in a process group of its own, but all in this session)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getsid(pid) == session:
                os.kill(pid, signal_number)


def _node_ip() -> str:
    """The address Ray gives this machine's nodes (it never advertises loopback)."""
    from ray._private.services import get_node_ip_address

    return str(get_node_ip_address())


def _listening(address: str) -> bool:
    host, _, port = address.rpartition(":")
    with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=1):
        return True
    return False


@contextlib.contextmanager
def running_cluster(
    nodes: int = 2, cpus_per_node: int = 1, env: Mapping[str, str] | None = None
) -> Iterator[RayCluster]:
    """A cluster of `nodes` nodes (the head one of them), stopped on exit, whatever happened.
    `env` is added to the nodes' environment (PASSBENCH_ENV_DIR: where a node finds the
    evaluation environment)."""
    # short: Ray's socket paths live under it and must fit in a Unix socket address
    root = Path(tempfile.mkdtemp(prefix="pbray-", dir="/tmp" if Path("/tmp").is_dir() else None))
    cluster = RayCluster(root)
    try:
        for _ in range(nodes):
            cluster.add_node(cpus=cpus_per_node, env=env)
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def ray_cluster(
    nodes: int = 2, cpus_per_node: int = 1, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """The address of a real `nodes`-node Ray cluster on this machine (see the module doc)."""
    with running_cluster(nodes, cpus_per_node, env) as cluster:
        yield cluster.address


@contextlib.contextmanager
def running_ray(
    config: SandboxConfig, env: Mapping[str, str] | None = None
) -> Iterator[tuple[str, SandboxConfig]]:
    """For suites that run every backend: ("ray", `config` pointed at a fresh two-node cluster).
    Each node finds the environment `config.environment` names on this machine, as any node
    would (PASSBENCH_ENV_DIR in `env` or this process's environment, else the default
    location), with its own NLTK data. `config.env` is not sent: a node's samples get the
    environment's variables, as with the agent."""
    with ray_cluster(env=env) as address:
        yield "ray", replace(config, backend_config=RayConfig(address))
