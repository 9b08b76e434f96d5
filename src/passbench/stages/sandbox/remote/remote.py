"""The `remote` backend: programs run on a `passbench serve` elsewhere, verdicts stream back.

The server's program API (serve/programs.py) takes a batch of programs and answers with one
verdict a line as each finishes. Everything stateful stays here, with the caller: the journal
records each verdict as it arrives, so a dropped connection costs only the verdicts not yet
received. Infrastructure failures (no connection, a connection dropped mid-stream, a busy or
failing server) are retried with backoff for the programs still without a verdict; a verdict
is never asked for twice.

Repository programs (SWE-bench) run too, on a server that says it resolves them (its info's
"repositories", and "repository_extras" for git submodules and loopback services): before a
batch with some runs, the server is asked what it lacks of the repository and submodule
commits, test environments and services' tool environments the batch names (POST
/passbench/v1/missing, each need once per run), and a server that lacks any stops the run
there, in one line naming the server and what it lacks; it finds them in its own folders and
puts its own paths in the caller's (serve/programs.py, remote/repositories.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from passbench.core.errors import BackendUnavailable, InputError, SandboxError, WireError
from passbench.core.records import ExecResult, Isolation, Program
from passbench.stages.sandbox.base import (
    BackendTarget,
    EnvironmentRef,
    RemoteConfig,
    SandboxConfig,
    WarnCallback,
)
from passbench.stages.sandbox.remote.backend import REPOSITORY_EXTRAS, RemoteBackend
from passbench.stages.sandbox.remote.repositories import needs
from passbench.stages.sandbox.remote.wire import (
    PROTOCOL,
    RunRequest,
    offered_environment,
    read_verdicts,
    request_to_json,
)

#: Seconds of silence after which a run's connection counts as dead (the server's heartbeat
#: comes every 10 s).
READ_TIMEOUT_S = 60.0
#: Seconds the server may take to say what it lacks (POST /passbench/v1/missing).
MISSING_READ_S = 600.0


def server_info(endpoint: str, token: str | None, *, timeout_s: float = 30) -> dict[str, Any]:
    """What a `passbench serve` offers (GET /passbench/v1/info); BackendUnavailable when it
    cannot be reached, SandboxError when it answers but not as one."""
    url = endpoint.rstrip("/") + "/passbench/v1/info"
    try:
        response = httpx.get(url, headers=_headers(token), timeout=timeout_s)
    except httpx.HTTPError as error:
        raise BackendUnavailable(f"remote backend {endpoint}: cannot connect ({error})") from error
    if response.status_code == 401:
        raise SandboxError(
            f"remote backend {endpoint}: the server wants a bearer token "
            "(set PASSBENCH_REMOTE_TOKEN to its PASSBENCH_SERVE_TOKEN)"
        )
    if response.status_code != 200:
        raise SandboxError(
            f"remote backend {endpoint}: GET /passbench/v1/info answered "
            f"HTTP {response.status_code}; is it a passbench serve?"
        )
    try:
        info: dict[str, Any] = response.json()
    except ValueError as error:
        raise WireError(f"remote backend {endpoint}: /passbench/v1/info is not JSON") from error
    if info.get("protocol") != PROTOCOL:
        raise SandboxError(
            f"remote backend {endpoint} speaks protocol {info.get('protocol')!r}, this "
            f"passbench {PROTOCOL}: use the same passbench version on both sides"
        )
    return info


def _environment(info: dict[str, Any], wanted: EnvironmentRef, endpoint: str) -> EnvironmentRef:
    """The server's environment that serves `wanted`, as the server describes it."""
    return offered_environment(
        info.get("environments") or {},
        wanted,
        where=f"remote backend {endpoint}",
        lock_hint="build the same environment on both sides, or run without a local one to "
        "take the server's",
    )


def describe(config: SandboxConfig) -> BackendTarget:
    """The server at the endpoint and the environment it offers for this run."""
    own = config.own(RemoteConfig)
    if not own.endpoint:
        raise InputError("--backend remote needs --endpoint URL", field="endpoint")
    wanted = config.environment or EnvironmentRef("host")
    info = server_info(own.endpoint, own.token)
    return BackendTarget(
        backend="remote",
        location=own.endpoint,
        environment=_environment(info, wanted, own.endpoint),
        isolation=f"{info.get('isolation', Isolation.BUBBLEWRAP.value)} on the server",
    )


class RemoteSandbox(RemoteBackend):
    """A Sandbox whose programs run on a passbench server (`RemoteConfig.endpoint`)."""

    def __init__(self, config: SandboxConfig, warn: WarnCallback | None = None) -> None:
        own = config.own(RemoteConfig)
        if not own.endpoint:
            raise SandboxError("the remote backend needs an endpoint (--endpoint URL)")
        if config.environment is None:
            raise SandboxError("the remote backend needs the environment's identity")
        self.config = config
        self.endpoint = own.endpoint.rstrip("/")
        super().__init__(f"remote backend {self.endpoint}", "remote", warn)
        info = server_info(self.endpoint, own.token)
        self.environment = _environment(info, config.environment, self.endpoint)
        self._isolation = Isolation(info.get("isolation", Isolation.BUBBLEWRAP.value))
        # a server of this protocol but an older passbench does not resolve them
        self.runs_repositories = bool(info.get("repositories"))
        extras = info.get("repository_extras")
        self.repository_extras = frozenset(
            extra
            for extra in (extras if isinstance(extras, list) else ())
            if extra in REPOSITORY_EXTRAS
        )
        self._server_version = str(info.get("passbench", "?"))
        self._checked: set[tuple[str, ...]] = set()  # repository needs the server has
        self._client = httpx.Client(
            headers=_headers(own.token),
            # the server sends a line at least every 10 s (a verdict or a heartbeat): silence
            # this long means a dead connection, which is retried
            timeout=httpx.Timeout(30.0, read=READ_TIMEOUT_S),
        )

    transient = (httpx.TransportError,)

    def _no_repositories(self) -> str:
        return (
            f"{self.where} runs passbench {self._server_version}, which does not run "
            "repository programs (SWE-bench): install this passbench on the server"
        )

    def _extra_hint(self) -> str:
        return (
            f"the server runs passbench {self._server_version}: install this passbench on the "
            "server, or use --backend local"
        )

    def _check_repositories(self, programs: list[Program]) -> None:
        """Ask the server whether it has the repository commits and test environments that
        `programs` name (each once per run); SandboxError naming what it lacks, before
        anything runs."""
        needed = needs(programs)
        new = [key for key in needed if key not in self._checked]
        if not new:
            return
        request = RunRequest(
            self.environment, self.config.limits, 0, tuple(needed[key] for key in new)
        )
        url = self.endpoint + "/passbench/v1/missing"
        # the server checks each environment's integrity manifest the first time: hashing a
        # large one on a busy machine may take minutes
        response = self._client.post(
            url, json=request_to_json(request), timeout=httpx.Timeout(30.0, read=MISSING_READ_S)
        )
        if response.status_code in (502, 503, 504):
            raise BackendUnavailable(f"HTTP {response.status_code}")
        try:
            lacks = response.json().get("missing") if response.status_code == 200 else None
        except (ValueError, AttributeError):
            lacks = None
        if not isinstance(lacks, list) or not all(isinstance(text, str) for text in lacks):
            raise SandboxError(
                f"{self.where}: POST /passbench/v1/missing answered HTTP "
                f"{response.status_code}: {response.text[:300]}"
            )
        if lacks:
            raise SandboxError(f"{self.where}: the server lacks: " + "; ".join(lacks))
        self._checked.update(new)

    def _attempt(self, programs: list[Program]) -> Iterator[ExecResult]:
        self._check_repositories(programs)
        request = RunRequest(
            self.environment, self.config.limits, self.config.workers, tuple(programs)
        )
        url = self.endpoint + "/passbench/v1/run"
        with self._client.stream("POST", url, json=request_to_json(request)) as response:
            if response.status_code in (502, 503, 504):
                raise BackendUnavailable(f"HTTP {response.status_code}")
            if response.status_code != 200:
                response.read()
                raise SandboxError(
                    f"remote backend {self.endpoint}: HTTP {response.status_code}: "
                    f"{response.text[:300]}"
                )
            done: dict[str, Any] = {}
            yield from read_verdicts(response.iter_lines(), self.where, done)
            self._take_done(done)

    def close(self) -> None:
        self._client.close()


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}
