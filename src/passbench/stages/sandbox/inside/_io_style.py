"""The "io" program style, both ends inside the sandbox: the worker hands over the inputs, the
child calls the candidate on each. This file runs INSIDE the sandbox (imported by _runner.py):
standard library only, no passbench imports, Python 3.8+.

Differential benchmarks (HumanEval+, MBPP+) judge a candidate by what it returns, so the
candidate's process receives nothing but its own code and the inputs:

    worker                                    child (fork of the worker)
      ── fork ───────────────────────────────►  exec(solution) in an empty namespace
      ── {"inputs": [...]} (pipe) ───────────►  for each input i: out = entry_point(*args)
      ◄── progress (shared memory header) ────   (i, calling | describing), before and after
      ◄── records (shared memory, or the pipe    one per input: type, size, the value when
          for large ones) ───────────────────    small, else its equality digest; or the
                                                 exception; "exec_error" when loading fails

Expected outputs, reference solutions and the comparison stay on the host: the worker reports
the records and the host judges them (passbench/stages/differential/).

Time limits are the worker's: it watches the shared header (every few milliseconds, no system
call on the child's side) and kills the child when one input has been "calling" for longer than
its limit, measured on the worker's own clock, so the candidate cannot stretch or disable it.
Describing a large output (its digest) is not counted. A whole-program limit (`timeout_s`)
bounds everything, as EvalPlus's per-task cap. Records live in memory the worker reads after
the child has ended, so none is lost when the child is killed or crashes, and writing one costs
a memory copy rather than a system call and a context switch (most inputs take microseconds).

Child-side semantics follow EvalPlus 0.3.1 (`evalplus/eval/__init__.py`, `unsafe_execute`, and
`eval/utils.py`, MIT licence, the EvalPlus authors and OpenAI): a fresh temporary working
directory, its `reliability_guard` (which sets many `os`, `shutil`, `subprocess` functions and
`open` to None), the solution executed in an empty namespace under `swallow_io`, each call
under `swallow_io`, the first exception ending the program (its default `fast_check`).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import mmap
import os
import select
import struct
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

try:  # inside the sandbox this file's folder is on sys.path
    _frames: Any = importlib.import_module("_frames")
    _guards: Any = importlib.import_module("_guards")
    _values: Any = importlib.import_module("_values")
except ImportError:  # imported from the passbench package (tests, the rlimit fallback)
    from passbench.stages.sandbox.inside import _frames, _guards, _values

#: An output whose tagged JSON is at most this long travels whole; a longer one as its digest.
INLINE_LIMIT = 64 * 1024
#: Largest output sent whole when the judge asked for the value (tolerances, oracles).
VALUE_CAP = 16 * 1024 * 1024
#: All values of one program together, so that the worker's report fits in one frame.
TOTAL_VALUE_CAP = 40 * 1024 * 1024
#: Shared memory for one program's progress header and small records.
SHARED_BYTES = 16 * 1024 * 1024
#: Records larger than this go through the pipe.
SHARED_RECORD_MAX = 256 * 1024
#: How often the worker looks at the progress header (at most; less when limits are short).
_POLL_S = 0.005

# the shared header: four little-endian u64 — magic, input index, state, bytes of records
_HEADER = struct.Struct("<QQQQ")
_DATA = 64
_MAGIC = 0x10_57_17_E5
_LOADING, _CALLING, _DESCRIBING, _DONE = 0, 1, 2, 3
_MAX_CHILD_FRAME = VALUE_CAP + 64 * 1024
_CPU_REPORT_S = 0.25

_write = os.write
_read = os.read
_exit = os._exit
_close = os.close
_perf = time.perf_counter
_encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
_dumps = json.dumps
_loads = json.loads
# the exact types whose tagged JSON is plain JSON, with their type names
_PLAIN = {int: "int", str: "str", bool: "bool", type(None): "NoneType"}


# --------------------------------------------------------------------------- framing


def _frame(message: dict[str, Any], value_json: str | None = None) -> bytes:
    data = _encode(message)
    if value_json is not None:
        data = data[:-1] + ',"value":' + value_json + "}"
    framed: bytes = _frames.pack(data.encode("ascii"))
    return framed


_write_all = _frames.write_all
FrameReader = _frames.FrameReader


def _read_frame(fd: int) -> dict[str, Any]:
    """The worker's batch: trusted, and as large as the job it came in, so no size limit."""
    message: dict[str, Any] = _frames.receive(fd, limit=1 << 32)
    return message


# --------------------------------------------------------------------------- the child


class WriteOnlyStringIO(io.StringIO):
    """EvalPlus's and the official BigCodeBench harness's: a StringIO that raises when read."""

    def read(self, *args: Any, **kwargs: Any) -> str:
        raise OSError

    def readline(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        raise OSError

    def readlines(self, *args: Any, **kwargs: Any) -> list[str]:  # type: ignore[override]
        raise OSError

    def readable(self, *args: Any, **kwargs: Any) -> bool:
        return False


class RedirectStdin(contextlib._RedirectStream):  # type: ignore[type-arg]
    _stream = "stdin"


@contextlib.contextmanager
def swallow_io() -> Iterator[None]:
    """EvalPlus's swallow_io: a fresh write-only buffer for stdout, stderr and stdin."""
    stream = WriteOnlyStringIO()
    with (
        contextlib.redirect_stdout(stream),
        contextlib.redirect_stderr(stream),
        RedirectStdin(stream),
    ):
        yield


def _exception(error: BaseException) -> dict[str, str]:
    try:
        message = str(error)
    except BaseException:
        message = "<unprintable>"
    return {"exc_type": type(error).__name__, "exc_message": message[:500]}


def _obviously_larger(value: Any, limit: int) -> bool:
    """Whether `value`'s tagged JSON surely exceeds `limit` characters (every element takes at
    least two): then it is not encoded at all, only digested."""
    if isinstance(value, (str, bytes, bytearray)):
        return len(value) > limit
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return 2 * len(value) > limit
    return False


def _small_plain(kind: str, value: Any) -> bool:
    if kind == "int":
        return bool(-_SMALL_INT <= value <= _SMALL_INT)
    return kind != "str" or len(value) <= INLINE_LIMIT // 6  # escapes take at most 6 chars


def describe(value: Any, want_value: bool, reference: bool) -> tuple[dict[str, Any], str | None]:
    """The record of one output, and its tagged JSON when it travels whole.

    Small outputs travel whole; so do outputs the judge asked for and, from the reference,
    float-valued ones (a tolerance may be needed to compare with them), up to VALUE_CAP. The
    equality digest is computed for outputs that do not travel, and for the large ones that do
    (the worker may drop their value to keep its report within bounds)."""
    plain = _PLAIN.get(type(value))
    if plain is not None and _small_plain(plain, value):
        # the common case, quickly: an int, a short string, a bool, None
        return {"type": plain, "floats": False}, _encode(value)
    record: dict[str, Any] = {"type": "?"}
    value_json: str | None = None
    try:
        record["type"] = _values.type_name(value)
        if reference:
            record["floats"] = bool(_values.is_floats(value))
        limit = VALUE_CAP if want_value or record.get("floats") else INLINE_LIMIT
        if isinstance(value, (str, bytes, bytearray, list, tuple, dict, set, frozenset)):
            record["length"] = len(value)
        if not _obviously_larger(value, limit):
            text = _encode(_values.to_tagged(value))
            record["size"] = len(text)
            if len(text) <= limit:
                value_json = text
    except BaseException as error:  # too large, too deep, a hostile object
        record["unencodable"] = _exception(error)["exc_message"][:200]
    if value_json is None or len(value_json) > INLINE_LIMIT:
        try:
            digest, unequal = _values.equality_digest(value)
            record["digest"] = digest
            record["nan"] = unequal
        except BaseException as error:
            record["unencodable"] = _exception(error)["exc_message"][:200]
    return record, value_json


def new_shared() -> mmap.mmap:
    """The memory a worker shares with the child of one program (anonymous, MAP_SHARED)."""
    shared = mmap.mmap(-1, SHARED_BYTES)
    _HEADER.pack_into(shared, 0, _MAGIC, 0, _LOADING, 0)
    return shared


class _Channel:
    """The child's way to the worker: records into shared memory, large ones down the pipe."""

    def __init__(self, shared: mmap.mmap, out_fd: int) -> None:
        self.shared = shared
        self.out_fd = out_fd
        self.used = 0
        self.me = os.getpid()

    def progress(self, index: int, state: int) -> None:
        _PROGRESS.pack_into(self.shared, 8, index, state)

    def send(self, message: dict[str, Any], value_json: str | None = None) -> None:
        if os.getpid() != self.me:  # a process the candidate forked never speaks for it
            _exit(0)
        frame = _frame(message, value_json)
        end = _DATA + self.used + len(frame)
        if len(frame) <= SHARED_RECORD_MAX and end <= SHARED_BYTES:
            self.shared[_DATA + self.used : end] = frame
            self.used += len(frame)
            _USED.pack_into(self.shared, 24, self.used)
            return
        try:
            _write_all(self.out_fd, frame)
        except BaseException:
            _exit(97)


_PROGRESS = struct.Struct("<QQ")
_SMALL_INT = 1 << 53
_USED = struct.Struct("<Q")


def child_main(job: dict[str, Any], shared: mmap.mmap, out_fd: int, in_fd: int) -> NoReturn:
    """Runs in the forked child: load the solution, then call it on every input."""
    channel = _Channel(shared, out_fd)
    with contextlib.suppress(OSError):
        os.chdir(tempfile.mkdtemp())  # EvalPlus: create_tempdir
    try:
        batch = _read_frame(in_fd)
        inputs = _values.from_tagged(batch["inputs"])
    except BaseException as error:
        channel.send({"kind": "exec_error", "i": -1, **_exception(error)})
        _exit(0)
    want = set(batch.get("want_values") or ())
    reference = bool(batch.get("reference"))
    if job.get("guard") in ("evalplus", "lcb"):
        _guards.apply(job["guard"])
    namespace: dict[str, Any] = {}
    try:
        with swallow_io():
            exec(job["source"], namespace)
            function: Callable[..., Any] = namespace[job["entry_point"]]
    except BaseException as error:
        channel.send({"kind": "exec_error", "i": -1, **_exception(error)})
        _exit(0)
    for index in range(len(inputs)):
        args = inputs[index]
        inputs[index] = None  # what the candidate has answered, it no longer needs
        channel.progress(index, _CALLING)
        started = _perf()
        try:
            with swallow_io():
                out = function(*args)
        except BaseException as error:
            channel.progress(index, _DESCRIBING)
            channel.send({"kind": "error", "i": index, **_exception(error)})
            _exit(0)
        elapsed = _perf() - started
        channel.progress(index, _DESCRIBING)
        record, value_json = describe(out, index in want, reference)
        record["kind"] = "output"
        record["i"] = index
        record["t"] = elapsed
        channel.send(record, value_json)
        del out, args
    channel.progress(len(inputs), _DONE)
    _exit(0)


class Feeder:
    """The worker's side of one io program: hand over the inputs, enforce the limits, collect
    the records once the child has ended.

    `report_cpu` is called every quarter second (the host schedules by CPU use); `kill` ends
    the child and everything it started."""

    def __init__(
        self,
        job: dict[str, Any],
        pid: int,
        shared: mmap.mmap,
        out_r: int,
        in_w: int,
        output: Any,
        output_r: int,
        started: float,
        report_cpu: Callable[[], None],
        kill: Callable[[], None],
        pidfd: int | None,
    ) -> None:
        self.pid = pid
        self.shared = shared
        self.out_r = out_r
        self.in_w = in_w
        self.output = output
        self.output_r = output_r
        self.started = started
        self.report_cpu = report_cpu
        self.kill = kill
        self.pidfd = pidfd
        self.limits = [float(limit) for limit in job["time_limits"]]
        self.deadline = started + float(job["timeout_s"])
        self.poll = min([_POLL_S] + [limit / 10 for limit in self.limits])
        wanted = _dumps(list(job.get("want_values") or ()))
        reference = "true" if job.get("reference") else "false"
        # the inputs as the host encoded them, not parsed and re-encoded here
        batch = f'{{"inputs":{job["inputs_json"]},"want_values":{wanted},"reference":{reference}}}'
        payload = batch.encode("utf-8")
        self.pending = bytearray(_frames.pack(payload))
        self.piped = bytearray()  # records that came down the pipe
        self.input_timeout: int | None = None
        self.cap_hit = False
        self.status: int | None = None
        self.rusage: Any = None

    def run(self) -> dict[str, Any]:
        os.set_blocking(self.in_w, False)
        self._flush()
        open_fds = {self.out_r, self.output_r}
        next_cpu = self.started + _CPU_REPORT_S
        watched: tuple[int, float] | None = None  # (input, when the worker saw it start)
        while True:
            now = _perf()
            timeout = max(0.0, min(self.deadline, next_cpu, now + self.poll) - now)
            readable = list(open_fds) + ([self.pidfd] if self.pidfd is not None else [])
            writable = [self.in_w] if self.pending else []
            ready_r, ready_w, _ = select.select(readable, writable, [], timeout)
            if ready_w:
                self._flush()
            for fd in ready_r:
                if fd != self.pidfd:
                    self._read(fd, open_fds)
            done, status, usage = os.wait4(self.pid, os.WNOHANG)
            if done:
                self.status, self.rusage = status, usage
                self._drain(open_fds)
                break
            now = _perf()
            _, index, state, _ = _HEADER.unpack_from(self.shared, 0)
            if state != _CALLING:
                watched = None
            elif watched is None or watched[0] != index:
                watched = (index, now)
            elif index < len(self.limits) and now - watched[1] > self.limits[index]:
                self.input_timeout = index
            if now >= self.deadline:
                self.cap_hit = self.input_timeout is None
            if self.input_timeout is not None or self.cap_hit:
                self.kill()
                _, self.status, self.rusage = os.wait4(self.pid, 0)
                self._drain(open_fds)
                break
            if now >= next_cpu:
                next_cpu = now + _CPU_REPORT_S
                self.report_cpu()
        return self._report()

    def _report(self) -> dict[str, Any]:
        """Every record the child left, in order, as the host's judge reads them."""
        report: dict[str, Any] = {
            "ready": False,
            "exec_error": None,
            "records": [],
            "input_timeout": self.input_timeout,
            "cap_hit": self.cap_hit,
            "protocol_error": None,
        }
        magic, _, _, used = _HEADER.unpack_from(self.shared, 0)
        messages: list[dict[str, Any]] = []
        try:
            if magic != _MAGIC or used > SHARED_BYTES - _DATA:
                raise ValueError("the progress header was overwritten")
            reader = FrameReader(SHARED_RECORD_MAX)
            messages += reader.feed(bytes(self.shared[_DATA : _DATA + used]))
            if reader.buffer:
                raise ValueError("a record was cut short")
            reader = FrameReader(_MAX_CHILD_FRAME)
            messages += reader.feed(bytes(self.piped))
        except ValueError as error:
            report["protocol_error"] = f"unreadable message from the program: {error}"
            return report
        messages.sort(
            key=lambda message: message.get("i", -2) if isinstance(message.get("i"), int) else -2
        )
        budget = TOTAL_VALUE_CAP
        for message in messages:
            kind = message.get("kind")
            if kind == "exec_error":
                report["exec_error"] = {
                    "exc_type": str(message.get("exc_type", "?")),
                    "exc_message": str(message.get("exc_message", "")),
                }
                return report
            expected_index = len(report["records"])
            if kind not in ("output", "error") or message.get("i") != expected_index:
                report["protocol_error"] = "records out of order"
                return report
            if "value" in message:
                size = int(message.get("size") or 0)
                if size > budget:
                    del message["value"]
                    message["value_dropped"] = True
                else:
                    budget -= size
            report["records"].append(message)
            if kind == "error":
                break
        report["ready"] = True
        return report

    def _read(self, fd: int, open_fds: set[int]) -> None:
        try:
            chunk = _read(fd, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            open_fds.discard(fd)
        elif fd == self.out_r:
            if len(self.piped) + len(chunk) <= TOTAL_VALUE_CAP + _MAX_CHILD_FRAME:
                self.piped += chunk
        else:
            self.output.add(chunk)

    def _drain(self, open_fds: set[int]) -> None:
        """What the child wrote before it ended (leftover processes may hold the pipes)."""
        for fd in list(open_fds):
            for _ in range(256):
                ready, _, _ = select.select([fd], [], [], 0)
                if not ready or fd not in open_fds:
                    break
                self._read(fd, open_fds)

    def _flush(self) -> None:
        try:
            written = _write(self.in_w, self.pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # the child closed its end: it is ending
            self.pending.clear()
            return
        del self.pending[:written]
