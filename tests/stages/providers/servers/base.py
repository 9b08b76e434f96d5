"""A small real HTTP server on 127.0.0.1 for testing providers through their real SDKs.

Each vendor's fake (openai_fake.py, anthropic_fake.py, ...) subclasses `FakeServer` and answers
in that vendor's wire format. Tests script faults ahead of time:

    server.fail(429, headers={"Retry-After": "1"})     # the next request gets a 429
    server.fail(500, times=2)                          # the next two get a 500
    server.hang(5.0)                                   # the next request answers after 5 s
    server.malformed()                                 # the next request gets broken JSON

Every request is recorded (path, headers, JSON body) in `server.requests`. Built on the standard
library's ThreadingHTTPServer so it needs no dependency and holds many slow requests at once.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    status: int = 500
    body: Any = None  # JSON-able, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    pass_through: bool = False  # delay only, then answer normally


@dataclass
class Reply:
    status: int
    body: Any  # JSON-able, bytes, or a list of (event, JSON) pairs for server-sent events
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as SDK connection pools expect
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: test output is for failures

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        fake = self.server.fake
        fake.enter()
        try:
            self._answer(fake, raw, body)
        finally:
            fake.leave()

    def _answer(self, fake: FakeServer, raw: bytes, body: Any) -> None:
        record = Recorded(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        fake.record(record)
        fault = fake.next_fault()
        if fault is not None and fault.delay_s:
            time.sleep(fault.delay_s)
        if fault is not None and not fault.pass_through:
            reply = Reply(
                fault.status,
                fault.body if fault.body is not None else fake.error_body(fault.status),
                fault.headers,
            )
        else:
            fake.meet()
            if fake.latency_s:
                time.sleep(fake.latency_s)
            reply = fake.answer(record)
        # the client may have given up (a timeout test); nothing to do then
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._send(reply)

    def _send(self, reply: Reply) -> None:
        if (
            isinstance(reply.body, list)
            and reply.headers.get("Content-Type") == "text/event-stream"
        ):
            payload = b"".join(
                (f"event: {event}\n" if event else "").encode()
                + b"data: "
                + json.dumps(data).encode()
                + b"\n\n"
                for event, data in reply.body
            )
        elif isinstance(reply.body, bytes):
            payload = reply.body
        else:
            payload = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        headers = {"Content-Type": "application/json", **reply.headers}
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _handle
    do_POST = _handle


#: How long a request waits for the others of a rendezvous before answering anyway.
RENDEZVOUS_S = 10.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # the throughput benchmark opens dozens of connections at once
    fake: FakeServer


class FakeServer:
    """Base class: serves on 127.0.0.1:<free port> in a thread until `close()`."""

    def __init__(self, latency_s: float = 0.0, rendezvous: int = 0) -> None:
        """`rendezvous`: the first that many requests are answered only once all of them are
        in flight together (each waits up to RENDEZVOUS_S): a client that never has that many
        requests open at once gets its answers late and leaves `rendezvous_met` False."""
        self.latency_s = latency_s
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.rendezvous_met = False
        self._barrier = threading.Barrier(rendezvous) if rendezvous else None
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- scripting ----------------------------------------------------------------------

    def fail(
        self,
        status: int,
        *,
        body: Any = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        with self._lock:
            for _ in range(times):
                self._faults.append(Fault(status, body, dict(headers or {})))

    def hang(self, seconds: float, *, times: int = 1) -> None:
        """The next request(s) answer normally, but only after `seconds`."""
        with self._lock:
            for _ in range(times):
                self._faults.append(Fault(delay_s=seconds, pass_through=True))

    def malformed(self, *, times: int = 1, body: bytes = b'{"id": "x", "choices": [{"ind') -> None:
        with self._lock:
            for _ in range(times):
                self._faults.append(Fault(200, body))

    def next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def meet(self) -> None:
        """Wait for the rendezvous (see __init__); later requests pass straight through."""
        barrier = self._barrier
        if barrier is None or barrier.broken or self.rendezvous_met:
            return
        try:
            barrier.wait(timeout=RENDEZVOUS_S)
        except threading.BrokenBarrierError:
            return
        self.rendezvous_met = True

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def record(self, record: Recorded) -> None:
        with self._lock:
            self.requests.append(record)

    def bodies(self, path_part: str = "") -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests if path_part in r.path]

    # ---- vendor-specific ----------------------------------------------------------------

    def answer(self, request: Recorded) -> Reply:
        raise NotImplementedError

    def error_body(self, status: int) -> Any:
        return {"error": {"message": f"fake error {status}", "type": "fake", "code": status}}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message, whatever the vendor's content shape."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def sample_text(prompt: str, index: int) -> str:
    """A deterministic answer that shows which prompt and which choice it came from."""
    return f"def answer():\n    return {prompt[:40]!r}, {index}\n"


#: A prompt holding this gets an answer cut by the token limit, in the vendor's own words.
CUT = "[cut]"


def cut_text(prompt: str, index: int) -> str:
    """What a model that ran out of tokens sends: the start of its answer."""
    return sample_text(prompt, index)[:12]
