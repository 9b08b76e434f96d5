"""The `e2b` backend: programs run in E2B sandboxes (Firecracker microVMs), verdicts stream back.

Each batch of programs (at most CHUNK, so an expired sandbox costs little) gets a fresh sandbox made
from the passbench template (deploy/e2b): the run request is written into it, the agent (`python -m
passbench.stages.sandbox.remote.agent`, sandbox/remote/agent.py) runs the programs there in
bubblewrap, and its answer streams back over the command's stdout, one verdict a line, yielded as
each arrives. The agent also appends every line to a file in the sandbox: when the stream is lost
but the sandbox lives, the verdicts it already wrote are read back from there. A sandbox that
expires, dies or cannot be reached is BackendUnavailable: `run_with_retries` asks again, in a new
sandbox, for only the programs still without a verdict. Every sandbox is killed when its batch ends,
however it ends, and when the backend closes.

The SDK (`pip install 'passbench[e2b]'`) is imported only when this backend is chosen; it reads
the API key from E2B_API_KEY (and E2B_DOMAIN, E2B_API_URL, E2B_SANDBOX_URL as documented by E2B).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from typing import Any

from passbench.core.errors import BackendUnavailable, InputError, SandboxError
from passbench.core.records import ExecResult, Program
from passbench.stages.sandbox.base import (
    BackendTarget,
    E2BConfig,
    EnvironmentRef,
    SandboxConfig,
    WarnCallback,
)
from passbench.stages.sandbox.remote.backend import RemoteBackend
from passbench.stages.sandbox.remote.wire import (
    PROTOCOL,
    RunRequest,
    offered_environment,
    read_verdicts,
    request_to_json,
)

#: The template when none is named (`--image`): what deploy/e2b builds.
DEFAULT_TEMPLATE = "passbench"
#: Programs per sandbox: an expired or lost sandbox costs at most this many re-runs.
CHUNK = 50
#: Sandboxes running batches at once.
SANDBOXES = 4
#: Seconds a sandbox and its command get beyond the programs' own limits (start, setup).
SLACK_S = 120
#: Where the agent runs (the sandbox's default user's home) and its files there.
HOME = "/home/user"
REQUEST_FILE = "request.json"
ANSWER_FILE = "answer.ndjson"
#: The agent, as the template's login shell finds it (deploy/e2b puts passbench's interpreter
#: first on PATH and names its NLTK data in PASSBENCH_NLTK_DATA).
AGENT = "python -m passbench.stages.sandbox.remote.agent"
NLTK_OPTION = '${PASSBENCH_NLTK_DATA:+--nltk-data "$PASSBENCH_NLTK_DATA"}'
#: Longest stderr tail quoted in an error.
STDERR_TAIL = 600


def _sdk() -> Any:
    try:
        import e2b
    except ImportError:
        raise InputError(
            "--backend e2b needs the E2B SDK: pip install 'passbench[e2b]'", field="backend"
        ) from None
    return e2b


def _require_api_key() -> None:
    if not os.environ.get("E2B_API_KEY"):
        raise InputError(
            "--backend e2b needs an E2B API key: set E2B_API_KEY "
            "(https://e2b.dev/dashboard?tab=keys)",
            field="E2B_API_KEY",
        )


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:400]


def translate(error: Exception, where: str) -> Exception:
    """An SDK failure as passbench's: a refused API key is bad input, a request E2B rejects
    for what it asks (a template it lacks, a timeout too long for the account) a SandboxError,
    anything else (the sandbox expired or died, a timeout, a dropped connection, a busy
    service) BackendUnavailable, which is retried."""
    e2b = _sdk()
    if isinstance(error, e2b.AuthenticationException):
        return InputError(f"{where}: E2B refused the API key (E2B_API_KEY): {_first_line(error)}")
    status = getattr(error, "status_code", None)
    if isinstance(error, e2b.SandboxException) and status in (400, 403, 404, 409, 422):
        return SandboxError(f"{where}: {_first_line(error)}")
    return BackendUnavailable(f"{where}: {_first_line(error)}")


def _template(config: SandboxConfig) -> str:
    return config.own(E2BConfig).template or DEFAULT_TEMPLATE


def describe(config: SandboxConfig) -> BackendTarget:
    """The template, checked to exist, and what its agent offers: one short-lived sandbox runs
    `agent --describe`, so the environment and isolation recorded are the template's own."""
    _require_api_key()
    e2b = _sdk()
    template = _template(config)
    where = f"e2b:{template}"
    try:
        exists = e2b.Template.exists(template)
    except Exception as error:
        raise translate(error, where) from error
    if not exists:
        raise InputError(
            f"E2B has no template '{template}': build it from deploy/e2b "
            "(docs/backend-e2b.md) or name yours with --image",
            field="image",
        )
    info = _agent_info(e2b, template, where)
    if info.get("protocol") != PROTOCOL:
        raise SandboxError(
            f"{where}: its passbench speaks protocol {info.get('protocol')!r}, this one "
            f"{PROTOCOL}: rebuild the template for passbench {version('passbench')}"
        )
    wanted = config.environment or EnvironmentRef("host")
    if info.get("bubblewrap"):
        isolation = "bubblewrap in an E2B microVM"
    else:
        isolation = (
            "an E2B microVM where bubblewrap refused "
            f"({info.get('bubblewrap_refusal') or 'no reason given'})"
        )
    return BackendTarget(
        backend="e2b",
        location=where,
        environment=template_environment(info, wanted, where),
        isolation=isolation,
    )


def template_environment(
    info: dict[str, Any], wanted: EnvironmentRef, where: str
) -> EnvironmentRef:
    """The template's environment that serves `wanted`, as its agent describes it."""
    return offered_environment(
        info.get("environments") or {},
        wanted,
        where=where,
        missing_hint=": rebuild the template from deploy/e2b",
        lock_hint="build both from the same passbench and Python version",
    )


def _agent_info(e2b: Any, template: str, where: str) -> dict[str, Any]:
    sandbox = None
    try:
        sandbox = e2b.Sandbox.create(template=template, timeout=SLACK_S, metadata=_metadata())
        result = sandbox.commands.run(f"{AGENT} --describe", cwd=HOME, timeout=SLACK_S)
        info: dict[str, Any] = json.loads(result.stdout)
        return info
    except e2b.CommandExitException as error:
        raise SandboxError(
            f"{where}: the template's passbench agent failed (exit {error.exit_code}): "
            f"{error.stderr[-STDERR_TAIL:].strip()}"
        ) from error
    except ValueError as error:
        raise SandboxError(f"{where}: the agent's --describe is not JSON: {error}") from error
    except Exception as error:
        raise translate(error, where) from error
    finally:
        if sandbox is not None:
            with contextlib.suppress(Exception):
                sandbox.kill()


def _metadata() -> dict[str, str]:
    return {"app": "passbench", "passbench": version("passbench")}


def command_timeout_s(programs: list[Program], workers: int) -> int:
    """How long the agent may take on `programs`: each program's wall limit, run `workers` at
    a time (0 = as many as the sandbox has cores, unknown here: counted as one), plus the
    longest once more for the last to start, plus SLACK_S."""
    if not programs:
        return SLACK_S
    slots = max(1, workers)
    limits = [program.timeout_s for program in programs]
    return SLACK_S + math.ceil(sum(limits) / slots + max(limits))


class E2BSandbox(RemoteBackend):
    """A Sandbox whose programs run in E2B sandboxes made from `E2BConfig.template`
    (default DEFAULT_TEMPLATE)."""

    def _no_repositories(self) -> str:
        # an E2B sandbox runs on E2B's machines: it cannot be shown this machine's mirrors and
        # test environments, and has none of its own (runs_repositories stays False)
        return (
            f"{self.where} does not run repository programs (SWE-bench): its sandboxes run on "
            "E2B's machines, which have none of this machine's mirrors and test environments; "
            "use --backend local, docker, podman, ray or remote"
        )

    def __init__(self, config: SandboxConfig, warn: WarnCallback | None = None) -> None:
        _require_api_key()
        self._e2b = _sdk()
        self.config = config
        self.template = _template(config)
        super().__init__(f"e2b:{self.template}", "e2b", warn)
        self.environment = config.environment or EnvironmentRef("host")
        self._lock = threading.Lock()
        self._live: dict[str, Any] = {}  # sandbox id -> SDK Sandbox, killed on close

    def run(self, programs: Iterable[Program]) -> Iterator[ExecResult]:
        batch = list(programs)
        chunks = [batch[start : start + CHUNK] for start in range(0, len(batch), CHUNK)]
        if len(chunks) <= 1:
            return self._with_retries(batch)
        return self._parallel(chunks)

    def _parallel(self, chunks: list[list[Program]]) -> Iterator[ExecResult]:
        """The chunks in up to SANDBOXES sandboxes at once, each retried on its own; results
        come back to the caller's thread."""
        arrived: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()

        def work(chunk: list[Program]) -> None:
            try:
                for result in self._with_retries(chunk):
                    if stop.is_set():
                        return
                    arrived.put(("result", result))
            except BaseException as error:  # handed to the caller's thread, raised there
                arrived.put(("error", error))
            finally:
                arrived.put(("done", None))

        pool = ThreadPoolExecutor(SANDBOXES, thread_name_prefix="passbench-e2b")
        try:
            for chunk in chunks:
                pool.submit(work, chunk)
            remaining = len(chunks)
            while remaining:
                kind, value = arrived.get()
                if kind == "done":
                    remaining -= 1
                elif kind == "error":
                    raise value
                else:
                    yield value
        finally:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            self._kill_live()  # unblocks workers still streaming from a sandbox

    def _attempt(self, programs: list[Program]) -> Iterator[ExecResult]:
        """One sandbox runs `programs`: their verdicts as the agent writes them."""
        request = RunRequest(
            self.environment, self.config.limits, self.config.workers, tuple(programs)
        )
        command_s = command_timeout_s(programs, self.config.workers)
        sandbox = self._create(command_s + SLACK_S)
        where = f"{self.where} sandbox {sandbox.sandbox_id}"
        try:
            try:
                sandbox.files.write(REQUEST_FILE, json.dumps(request_to_json(request)))
                handle = sandbox.commands.run(
                    self._command(), background=True, cwd=HOME, timeout=command_s
                )
            except Exception as error:
                raise translate(error, where) from error
            stderr: list[str] = []
            done: dict[str, Any] = {}
            try:
                yield from read_verdicts(_stdout_lines(handle, stderr), where, done)
            except SandboxError as error:
                if not isinstance(error, BackendUnavailable):
                    raise
                yield from self._read_back(sandbox, where)
                raise BackendUnavailable(f"{error}{_quoted(stderr)}") from error
            except Exception as error:
                lost = translate(error, where)
                if not isinstance(lost, BackendUnavailable):
                    raise lost from error
                yield from self._read_back(sandbox, where)
                raise lost from error
            self._take_done(done)
        finally:
            self._kill(sandbox)

    def _command(self) -> str:
        command = f"{AGENT} --request {REQUEST_FILE} --output {ANSWER_FILE} {NLTK_OPTION}"
        if self.config.allow_unsandboxed:
            command += " --allow-unsandboxed"
        return command

    def _create(self, timeout_s: int) -> Any:
        try:
            sandbox = self._e2b.Sandbox.create(
                template=self.template,
                timeout=timeout_s,
                metadata=_metadata(),
                # the agent needs no network; programs get it only when the run allows it
                allow_internet_access=self.config.limits.allow_network,
            )
        except Exception as error:
            raise translate(error, self.where) from error
        with self._lock:
            self._live[sandbox.sandbox_id] = sandbox
        return sandbox

    def _read_back(self, sandbox: Any, where: str) -> Iterator[ExecResult]:
        """The verdicts the agent wrote to its answer file before the stream was lost (none
        when the sandbox is gone too)."""
        try:
            text = sandbox.files.read(ANSWER_FILE)
        except Exception as error:
            self.warn(f"{where}: its answer file cannot be read back: {_first_line(error)}")
            return
        lines = text.splitlines()
        if lines and not text.endswith("\n"):
            lines.pop()  # a line still being written
        with contextlib.suppress(SandboxError):
            yield from read_verdicts(lines, where, {})

    def _kill(self, sandbox: Any) -> None:
        with self._lock:
            self._live.pop(sandbox.sandbox_id, None)
        try:
            sandbox.kill()
        except Exception as error:  # it ends at its own timeout anyway
            self.warn(
                f"{self.where}: sandbox {sandbox.sandbox_id} could not be killed, it ends at "
                f"its timeout: {_first_line(error)}"
            )

    def _kill_live(self) -> None:
        with self._lock:
            live = list(self._live.values())
        for sandbox in live:
            self._kill(sandbox)

    def close(self) -> None:
        self._kill_live()


def _stdout_lines(handle: Any, stderr: list[str]) -> Iterator[str]:
    """The command's stdout as whole lines, as they arrive (its stderr kept in `stderr`)."""
    pending = ""
    for out, err, _ in handle:
        if err:
            stderr.append(err)
            del stderr[:-20]
        if out:
            pending += out
            *complete, pending = pending.split("\n")
            yield from complete
    if pending:
        yield pending


def _quoted(stderr: list[str]) -> str:
    tail = "".join(stderr)[-STDERR_TAIL:].strip()
    return f" (its stderr: {tail})" if tail else ""
