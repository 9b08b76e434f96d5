"""A loopback E2B: the control-plane REST API and the in-sandbox agent (envd) on 127.0.0.1,
speaking E2B's real protocol to the real `e2b` SDK, so the e2b backend is tested without an
account or the internet.

What it implements is what the SDK calls for the backend (and nothing it does not):

- REST, authenticated by the X-API-KEY header: POST /v2/sandboxes (template, timeout,
  metadata, env vars), GET and DELETE /sandboxes/{id}, POST /sandboxes/{id}/timeout,
  GET /templates/aliases/{alias};
- envd, addressed by the E2b-Sandbox-Id header the SDK sends (with E2B_SANDBOX_URL every
  sandbox shares one URL) and checked against the sandbox's access token: the Connect RPC
  service process.Process (Start streams the process's start, output and end events; Connect
  RPC framing and JSON codec by `connectrpc`'s own server with the message classes shipped in
  the e2b package; SendSignal kills), GET /health, GET/POST /files.

A sandbox is a temporary folder standing for /home/user; its commands run for real on this
host (bash -l -c, as envd starts them), with HOME there and the template's profile
(~/.bash_profile) standing for what the template image installs. A sandbox lives until its
timeout: then its processes are killed, an open command stream ends as envd's does when its
sandbox goes away, and every later call gets the proxy's "was not found" answer. Tests can
expire or cut a sandbox after it has written N lines of output (`plan`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

import uvicorn
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from e2b.envd.process import process_connect, process_pb
from protobuf import Oneof
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

#: The envd version the loopback claims (recent enough for every feature the SDK gates).
ENVD_VERSION = "0.6.4"
#: Where envd puts the default user's home; the loopback maps it onto a sandbox's folder.
HOME = PurePosixPath("/home/user")
#: What a command inherits before the template's profile runs (nothing of the test process).
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class LoopbackTemplate:
    """A template as the loopback knows it: its profile (what its image puts on the login
    shell's PATH and in its environment) and its environment variables."""

    name: str
    profile: str = ""
    env: tuple[tuple[str, str], ...] = ()


@dataclass
class Plan:
    """Trouble to cause in the next sandbox created: once its commands have written
    `after_lines` lines to stdout, expire the sandbox ("expire") or drop the command stream
    while the sandbox lives on ("drop")."""

    action: str
    after_lines: int


@dataclass
class _Sandbox:
    sandbox_id: str
    template: LoopbackTemplate
    home: Path
    end_at: float
    started_at: datetime
    metadata: dict[str, str]
    env: dict[str, str]
    access_token: str
    plan: Plan | None = None
    lines_out: int = 0
    gone: asyncio.Event = field(default_factory=asyncio.Event)
    drop: asyncio.Event = field(default_factory=asyncio.Event)
    processes: dict[int, asyncio.subprocess.Process] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    """Something the loopback saw, for tests to assert on."""

    kind: str  # create, kill, expire, timeout, start, upload, download
    sandbox_id: str
    detail: Any = None


class LoopbackE2B:
    """The server: `with LoopbackE2B(...) as server:` serves on `server.url` until exit."""

    def __init__(self, templates: list[LoopbackTemplate], api_key: str) -> None:
        self.templates = {template.name: template for template in templates}
        self.api_key = api_key
        self.events: list[Event] = []
        self.sandboxes: dict[str, _Sandbox] = {}
        self._plans: list[Plan] = []
        self._root = Path(tempfile.mkdtemp(prefix="e2b-loopback-"))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- what tests use ------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def plan(self, action: str, after_lines: int) -> None:
        """Cause trouble in the next sandbox created (see Plan)."""
        self._plans.append(Plan(action, after_lines))

    def kinds(self, kind: str) -> list[Event]:
        return [event for event in self.events if event.kind == kind]

    def live(self) -> list[str]:
        return [sid for sid, box in self.sandboxes.items() if not box.gone.is_set()]

    def __enter__(self) -> LoopbackE2B:
        self.port = _free_port()
        config = uvicorn.Config(
            self._asgi,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            interface="asgi3",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the loopback E2B server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            for box in list(self.sandboxes.values()):
                self._loop.call_soon_threadsafe(self._end, box, "kill")
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=20)
        shutil.rmtree(self._root, ignore_errors=True)

    # -- the ASGI application: envd's Connect service, the rest by Starlette -------------

    async def _asgi(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            self._loop = asyncio.get_running_loop()
            self._reaper = asyncio.ensure_future(self._reap())
            await self._rest(scope, receive, send)
            return
        if scope["type"] == "http" and scope["path"].startswith("/process.Process/"):
            await self._process(scope, receive, send)
            return
        await self._rest(scope, receive, send)

    @property
    def _rest(self) -> Starlette:
        if not hasattr(self, "_rest_app"):
            self._rest_app = Starlette(
                routes=[
                    Route("/v2/sandboxes", self._create, methods=["POST"]),
                    Route("/sandboxes/{sandbox_id}", self._info, methods=["GET"]),
                    Route("/sandboxes/{sandbox_id}", self._kill, methods=["DELETE"]),
                    Route("/sandboxes/{sandbox_id}/timeout", self._timeout, methods=["POST"]),
                    Route("/templates/aliases/{alias:path}", self._alias, methods=["GET"]),
                    Route("/health", self._health, methods=["GET"]),
                    Route("/files", self._read_file, methods=["GET"]),
                    Route("/files", self._write_file, methods=["POST"]),
                ]
            )
        return self._rest_app

    @property
    def _process(self) -> process_connect.ProcessASGIApplication:
        if not hasattr(self, "_process_app"):
            self._process_app = process_connect.ProcessASGIApplication(_ProcessService(self))
        return self._process_app

    # -- the control plane ---------------------------------------------------------------

    def _unauthorized(self, request: Request) -> Response | None:
        if request.headers.get("x-api-key") != self.api_key:
            return _error(401, "Invalid API key")
        return None

    async def _create(self, request: Request) -> Response:
        refused = self._unauthorized(request)
        if refused is not None:
            return refused
        body = await request.json()
        template = self.templates.get(body.get("templateID", ""))
        if template is None:
            return _error(404, f"template '{body.get('templateID')}' not found")
        sandbox_id = "lb" + secrets.token_hex(8)
        home = self._root / sandbox_id
        home.mkdir()
        (home / ".bash_profile").write_text(template.profile)
        box = _Sandbox(
            sandbox_id=sandbox_id,
            template=template,
            home=home,
            end_at=time.monotonic() + int(body.get("timeout", 300)),
            started_at=datetime.now(timezone.utc),
            metadata=dict(body.get("metadata") or {}),
            env=dict(body.get("envVars") or {}),
            access_token=secrets.token_hex(16),
            plan=self._plans.pop(0) if self._plans else None,
        )
        self.sandboxes[sandbox_id] = box
        self.events.append(Event("create", sandbox_id, dict(body)))
        return JSONResponse(
            {
                "templateID": template.name,
                "sandboxID": sandbox_id,
                "clientID": "loopback",
                "envdVersion": ENVD_VERSION,
                "envdAccessToken": box.access_token,
            },
            status_code=201,
        )

    def _live(self, request: Request) -> _Sandbox | Response:
        refused = self._unauthorized(request)
        if refused is not None:
            return refused
        box = self.sandboxes.get(request.path_params["sandbox_id"])
        if box is None or box.gone.is_set():
            return _error(404, f"sandbox '{request.path_params['sandbox_id']}' not found")
        return box

    async def _info(self, request: Request) -> Response:
        box = self._live(request)
        if isinstance(box, Response):
            return box
        end = datetime.fromtimestamp(time.time() + box.end_at - time.monotonic(), timezone.utc)
        return JSONResponse(
            {
                "templateID": box.template.name,
                "sandboxID": box.sandbox_id,
                "clientID": "loopback",
                "startedAt": box.started_at.isoformat(),
                "endAt": end.isoformat(),
                "envdVersion": ENVD_VERSION,
                "cpuCount": os.cpu_count() or 1,
                "memoryMB": 1024,
                "diskSizeMB": 1024,
                "state": "running",
                "metadata": box.metadata,
            }
        )

    async def _kill(self, request: Request) -> Response:
        box = self._live(request)
        if isinstance(box, Response):
            return box
        self._end(box, "kill")
        return Response(status_code=204)

    async def _timeout(self, request: Request) -> Response:
        box = self._live(request)
        if isinstance(box, Response):
            return box
        seconds = int((await request.json())["timeout"])
        box.end_at = time.monotonic() + seconds
        self.events.append(Event("timeout", box.sandbox_id, seconds))
        return Response(status_code=204)

    async def _alias(self, request: Request) -> Response:
        refused = self._unauthorized(request)
        if refused is not None:
            return refused
        alias = request.path_params["alias"]
        if alias not in self.templates:
            return _error(404, f"template alias '{alias}' not found")
        return JSONResponse({"templateID": alias, "public": False})

    def _end(self, box: _Sandbox, why: str) -> None:
        """Kill or expire a sandbox: its processes die, its streams end, it is not found."""
        if box.gone.is_set():
            return
        box.gone.set()
        for process in box.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        self.events.append(Event(why, box.sandbox_id))

    async def _reap(self) -> None:
        while True:
            now = time.monotonic()
            for box in list(self.sandboxes.values()):
                if not box.gone.is_set() and box.end_at <= now:
                    self._end(box, "expire")
            await asyncio.sleep(0.05)

    # -- envd: which sandbox, and its files ----------------------------------------------

    def sandbox_for(self, headers: Any) -> _Sandbox | None:
        """The live sandbox a request to envd is for, or None (the proxy's "not found")."""
        box = self.sandboxes.get(headers.get("e2b-sandbox-id", ""))
        if box is None or box.gone.is_set():
            return None
        return box

    def _envd(self, request: Request) -> _Sandbox | Response:
        box = self.sandbox_for(request.headers)
        if box is None:
            sandbox_id = request.headers.get("e2b-sandbox-id", "")
            return _error(502, f"The sandbox {sandbox_id} was not found", sandboxId=sandbox_id)
        if request.headers.get("x-access-token") != box.access_token:
            return _error(401, "invalid access token")
        return box

    async def _health(self, request: Request) -> Response:
        box = self._envd(request)
        return box if isinstance(box, Response) else Response(status_code=204)

    async def _read_file(self, request: Request) -> Response:
        box = self._envd(request)
        if isinstance(box, Response):
            return box
        path = host_path(box, request.query_params.get("path", ""))
        if path is None:
            return _error(400, "path outside the user's home")
        if not path.is_file():
            return _error(404, f"file '{request.query_params.get('path')}' not found")
        self.events.append(Event("download", box.sandbox_id, request.query_params["path"]))
        return Response(path.read_bytes(), media_type="application/octet-stream")

    async def _write_file(self, request: Request) -> Response:
        box = self._envd(request)
        if isinstance(box, Response):
            return box
        written = []
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            form = await request.form()
            parts = [(str(part.filename), await part.read()) for _, part in form.multi_items()]  # type: ignore[union-attr]
        else:
            parts = [(request.query_params.get("path", ""), await request.body())]
        for name, data in parts:
            wanted = request.query_params.get("path") or name
            path = host_path(box, wanted)
            if path is None:
                return _error(400, "path outside the user's home")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            self.events.append(Event("upload", box.sandbox_id, (wanted, data)))
            shown = HOME / path.relative_to(box.home)
            written.append({"name": path.name, "type": "file", "path": str(shown)})
        return JSONResponse(written)


def host_path(box: _Sandbox, path: str) -> Path | None:
    """Where a path in the sandbox lies on this host: relative paths and paths under
    /home/user map into the sandbox's folder; anything else (or an escape) is refused."""
    posix = PurePosixPath(path)
    if posix.is_absolute():
        try:
            posix = posix.relative_to(HOME)
        except ValueError:
            return None
    resolved = (box.home / posix).resolve()
    if resolved != box.home and box.home not in resolved.parents:
        return None
    return resolved


class _ProcessService(process_connect.Process):
    """envd's process.Process service: what the SDK's commands call (the rest stays
    UNIMPLEMENTED, as the generated base answers)."""

    def __init__(self, server: LoopbackE2B) -> None:
        self.server = server

    def _sandbox(self, ctx: RequestContext[Any, Any]) -> _Sandbox:
        box = self.server.sandbox_for(ctx.request_headers)
        if box is None:
            sandbox_id = ctx.request_headers.get("e2b-sandbox-id", "")
            raise ConnectError(Code.UNAVAILABLE, f"The sandbox {sandbox_id} was not found")
        if ctx.request_headers.get("x-access-token") != box.access_token:
            raise ConnectError(Code.UNAUTHENTICATED, "invalid access token")
        return box

    async def start(
        self, request: process_pb.StartRequest, ctx: RequestContext[Any, Any]
    ) -> AsyncIterator[process_pb.StartResponse]:
        box = self._sandbox(ctx)
        config = request.process
        cwd = host_path(box, config.cwd) if config.has_field("cwd") else box.home
        if cwd is None or not cwd.is_dir():
            raise ConnectError(Code.INVALID_ARGUMENT, f"cwd '{config.cwd}' does not exist")
        env = {
            "PATH": BASE_PATH,
            "HOME": str(box.home),
            "USER": "user",
            "LANG": "C.UTF-8",
            **dict(box.template.env),
            **box.env,
            **dict(config.envs),
        }
        process = await asyncio.create_subprocess_exec(
            config.cmd,
            *config.args,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        box.processes[process.pid] = process
        # the command, and the deadline the client put on its stream (its `timeout`)
        started = {"argv": [config.cmd, *config.args], "timeout_ms": ctx.timeout_ms}
        self.server.events.append(Event("start", box.sandbox_id, started))
        yield _event(Oneof("start", process_pb.ProcessEvent.StartEvent(pid=process.pid)))
        queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        readers = [
            asyncio.ensure_future(_pump(process.stdout, "stdout", queue)),
            asyncio.ensure_future(_pump(process.stderr, "stderr", queue)),
        ]
        try:
            open_streams = 2
            while open_streams:
                got = asyncio.ensure_future(queue.get())
                gone = asyncio.ensure_future(box.gone.wait())
                dropped = asyncio.ensure_future(box.drop.wait())
                await asyncio.wait({got, gone, dropped}, return_when=asyncio.FIRST_COMPLETED)
                for waiter in (got, gone, dropped):
                    if waiter is not got or not got.done():
                        waiter.cancel()
                if box.gone.is_set() or box.drop.is_set():
                    box.drop.clear()
                    # what envd answers when the connection to its sandbox is lost mid-stream
                    raise ConnectError(
                        Code.UNAVAILABLE,
                        f"the connection to sandbox {box.sandbox_id} ended before the "
                        "stream completed",
                    )
                name, chunk = got.result()
                if not chunk:
                    open_streams -= 1
                    continue
                yield _event(
                    Oneof("data", process_pb.ProcessEvent.DataEvent(output=Oneof(name, chunk)))
                )  # type: ignore[arg-type]
                if name == "stdout":
                    self._count_lines(box, chunk)
            code = await process.wait()
            end = process_pb.ProcessEvent.EndEvent(
                exit_code=code, exited=True, status=f"exit status {code}"
            )
            yield _event(Oneof("end", end))
        finally:
            for reader in readers:
                reader.cancel()
            box.processes.pop(process.pid, None)

    def _count_lines(self, box: _Sandbox, chunk: bytes) -> None:
        box.lines_out += chunk.count(b"\n")
        plan = box.plan
        if plan is not None and box.lines_out >= plan.after_lines:
            box.plan = None
            if plan.action == "expire":
                self.server._end(box, "expire")
            else:
                box.drop.set()

    async def send_signal(
        self, request: process_pb.SendSignalRequest, ctx: RequestContext[Any, Any]
    ) -> process_pb.SendSignalResponse:
        box = self._sandbox(ctx)
        selector = request.process.selector if request.process is not None else None
        pid = selector.value if isinstance(selector, Oneof) and selector.field == "pid" else -1
        if pid not in box.processes:
            raise ConnectError(Code.NOT_FOUND, f"process with pid {pid} not found")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        self.server.events.append(Event("signal", box.sandbox_id, pid))
        return process_pb.SendSignalResponse()


def _event(payload: Any) -> process_pb.StartResponse:
    return process_pb.StartResponse(event=process_pb.ProcessEvent(event=payload))


async def _pump(
    stream: asyncio.StreamReader | None, name: str, queue: asyncio.Queue[tuple[str, bytes]]
) -> None:
    """Copy a pipe into the queue as it arrives, then an empty chunk at its end."""
    if stream is not None:
        while chunk := await stream.read(65536):
            await queue.put((name, chunk))
    await queue.put((name, b""))


def _error(status: int, message: str, **extra: str) -> JSONResponse:
    return JSONResponse({"code": status, "message": message, **extra}, status_code=status)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def loopback_environment(server: LoopbackE2B, api_key: str | None) -> Iterator[None]:
    """Point the e2b SDK at the loopback server (its documented environment variables), and
    put everything back after."""
    wanted = {
        "E2B_API_URL": server.url,
        "E2B_SANDBOX_URL": server.url,
        "E2B_API_KEY": api_key,
        "E2B_DEBUG": None,  # debug mode would skip the API altogether
        "E2B_DOMAIN": None,
        "E2B_HTTP_VERSION": None,
    }
    saved = {name: os.environ.get(name) for name in wanted}
    try:
        for name, value in wanted.items():
            _set(name, value)
        yield
    finally:
        for name, value in saved.items():
            _set(name, value)


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def describe(events: list[Event]) -> str:
    """The events as text, for assertion messages."""
    return json.dumps([[e.kind, e.sandbox_id] for e in events])
