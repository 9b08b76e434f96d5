"""Turn a worker's report on one sample into an ExecResult (status, category, one-line reason).

`status` follows the official evaluator exactly: "pass" only when the tests ran and none failed or
errored; "fail" when the program raised or a test failed; "timeout" when the process ended without
a verdict (official: the process was still alive at the deadline, or died before reporting). The
`category` says what really happened, which the official status cannot.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from passbench.core.records import ErrorCategory, ExecResult, Isolation, Program, Status

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
_MEMORY_HINTS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")
_TIMEOUT_EXCEPTIONS = {"TimeoutException"}
_STDOUT_TAIL = 4096
_BROKEN_CHANNEL_EXIT = 97  # _runner._CHILD_BROKEN_CHANNEL


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failure)\b.*")


_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _first_line(text: str, limit: int = 300) -> str:
    """The line of a traceback a person wants: the last "SomeError: message" line, else the
    last line with words in it."""
    text = _ANSI_ESCAPE.sub("", text)  # NLTK colours its messages
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    worded = [line for line in lines if any(c.isalnum() for c in line)]
    named = [index for index, line in enumerate(worded) if _EXCEPTION_LINE.match(line)]
    if named:
        index = named[-1]
        line = worded[index]
        if line.endswith(":") and index + 1 < len(worded):
            # a message that starts on the next line (NLTK's LookupError, for one)
            line = f"{line} {worded[index + 1]}"
    else:
        line = (worded or [""])[-1]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(
    report: Mapping[str, Any], timeout_s: float
) -> tuple[Status, ErrorCategory | None, str]:
    """(status, category, reason) for one worker report."""
    verdict = report.get("verdict")
    output = str(report.get("output_tail", ""))
    if report.get("timed_out"):
        return (
            "timeout",
            ErrorCategory.TIMEOUT,
            (f"timed out after {timeout_s:g}s; killed with every process it started"),
        )
    if report.get("scratch_exceeded"):
        # its disk-backed /tmp has no size cap of its own: the worker measures and kills
        return "fail", ErrorCategory.KILLED, str(report["scratch_exceeded"])
    if verdict is None:
        if report.get("channel_tampered"):
            return "fail", ErrorCategory.TAMPERED, str(report["channel_tampered"])
        return "timeout", *_died(report, output)
    if "runner_error" in verdict:
        error = str(verdict["runner_error"])
        if "MemoryError" in error:
            return "fail", ErrorCategory.OUT_OF_MEMORY, "ran out of memory while reporting"
        return "fail", ErrorCategory.TAMPERED, f"the runner could not report: {error}"
    exc_type = verdict.get("exc_type")
    if exc_type:
        return "fail", _exception_category(verdict), _exception_reason(verdict)
    tampered = list(verdict.get("tampered") or [])
    if tampered:
        return (
            "fail",
            ErrorCategory.TAMPERED,
            "tampered with the test machinery: " + ", ".join(tampered[:4]),
        )
    details: Mapping[str, str] = verdict.get("details") or {}
    run, loaded = int(verdict.get("tests_run", 0)), int(verdict.get("tests_loaded", 0))
    if not details and run != loaded:
        return "fail", ErrorCategory.TAMPERED, f"only {run} of {loaded} tests ran"
    if not details:
        if report.get("exit_code") != 0:
            return "fail", ErrorCategory.KILLED, "the program ended abnormally after its tests"
        return "pass", None, ""
    return "fail", _test_category(verdict), _test_reason(verdict, details)


def _died(report: Mapping[str, Any], output: str) -> tuple[ErrorCategory, str]:
    sig = report.get("signal")
    code = report.get("exit_code")
    memory = any(hint in output for hint in _MEMORY_HINTS)
    if sig is not None:
        name = _signal_name(int(sig))
        if sig == signal.SIGXCPU:
            return ErrorCategory.TIMEOUT, "CPU time limit exceeded"
        if memory:
            return ErrorCategory.OUT_OF_MEMORY, f"killed by {name} after running out of memory"
        return ErrorCategory.KILLED, f"killed by {name} before reporting a verdict"
    if code == _BROKEN_CHANNEL_EXIT:
        return ErrorCategory.TAMPERED, "the verdict channel was closed or broken by the program"
    if memory:
        return ErrorCategory.OUT_OF_MEMORY, "ran out of memory before reporting a verdict"
    return ErrorCategory.KILLED, f"exited with code {code} before reporting a verdict"


def _exception_category(verdict: Mapping[str, Any]) -> ErrorCategory:
    exc_type = str(verdict.get("exc_type"))
    if verdict.get("phase") == "compile":
        return ErrorCategory.SYNTAX_ERROR
    if exc_type in _IMPORT_ERRORS:
        return ErrorCategory.IMPORT_ERROR
    if exc_type == "MemoryError":
        return ErrorCategory.OUT_OF_MEMORY
    if exc_type in _TIMEOUT_EXCEPTIONS or verdict.get("alarm"):
        return ErrorCategory.TIMEOUT
    if exc_type == "AssertionError":
        return ErrorCategory.ASSERTION_FAILED
    return ErrorCategory.EXCEPTION


def _exception_reason(verdict: Mapping[str, Any]) -> str:
    message = _first_line(str(verdict.get("exc_message", "")))
    exc_type = str(verdict.get("exc_type"))
    where = {"compile": "does not compile", "exec": "failed while loading"}.get(
        str(verdict.get("phase")), "failed"
    )
    return f"{where}: {exc_type}: {message}" if message else f"{where}: {exc_type}"


def _test_category(verdict: Mapping[str, Any]) -> ErrorCategory:
    kinds = [tuple(k) for k in verdict.get("kinds") or []]
    exc_types = {str(k[2]) for k in kinds if len(k) == 3}
    if verdict.get("alarm") or exc_types & _TIMEOUT_EXCEPTIONS:
        return ErrorCategory.TIMEOUT
    if "MemoryError" in exc_types:
        return ErrorCategory.OUT_OF_MEMORY
    if exc_types & _IMPORT_ERRORS:
        return ErrorCategory.IMPORT_ERROR
    if any(len(k) == 3 and k[1] == "failure" for k in kinds):
        return ErrorCategory.ASSERTION_FAILED
    return ErrorCategory.EXCEPTION


def _test_reason(verdict: Mapping[str, Any], details: Mapping[str, str]) -> str:
    name, trace = next(iter(details.items()))
    more = f" (+{len(details) - 1} more)" if len(details) > 1 else ""
    return f"{name}: {_first_line(trace)}{more}"


def exec_result(
    program: Program,
    report: Mapping[str, Any],
    isolation: Isolation,
    wall_s: float,
    network: bool = False,
) -> ExecResult:
    if program.style == "io":
        result = _io_result(program, report, isolation, wall_s, network)
    elif program.style == "process" and (report.get("verdict") or {}).get("process"):
        result = _process_result(program, report, isolation, wall_s, network)
    else:
        result = _tested_result(program, report, isolation, wall_s, network)
    return replace(
        result, cpu_s=_seconds(report.get("cpu_s")), cpu_wait_s=_seconds(report.get("cpu_wait_s"))
    )


def _seconds(value: object) -> float | None:
    """The runner's CPU measurement; None from a runner that does not make it."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _tested_result(
    program: Program,
    report: Mapping[str, Any],
    isolation: Isolation,
    wall_s: float,
    network: bool,
) -> ExecResult:
    status, category, reason = classify(report, program.timeout_s)
    verdict = report.get("verdict") or {}
    details = dict(verdict.get("details") or {}) if status != "timeout" else {}
    if report.get("scratch_exceeded"):
        details = {"ALL": reason}
    tail = str(verdict.get("swallowed", "")) + str(report.get("output_tail", ""))
    return ExecResult(
        key=program.key,
        task_id=program.task_id,
        status=status,
        category=category,
        details=details,
        duration_s=float(verdict.get("duration_s", 0.0) or report.get("wall_s", 0.0)),
        wall_s=wall_s,
        isolation=isolation,
        reason=reason,
        tests_run=int(verdict.get("tests_run", 0) or 0),
        stdout_tail=tail[-_STDOUT_TAIL:],
        network=network,
    )


def _io_result(
    program: Program,
    report: Mapping[str, Any],
    isolation: Isolation,
    wall_s: float,
    network: bool,
) -> ExecResult:
    """An io program's report, undecided: the judge compares its outputs with the expected
    ones (passbench.stages.differential). Only how the process ended is read here."""
    if report.get("scratch_exceeded"):
        # decided here, as a failure: the judge passes a result without outputs through
        reason = str(report["scratch_exceeded"])
        return ExecResult(
            key=program.key,
            task_id=program.task_id,
            status="fail",
            category=ErrorCategory.KILLED,
            details={"ALL": reason},
            duration_s=float(report.get("wall_s", 0.0)),
            wall_s=wall_s,
            isolation=isolation,
            reason=reason,
            stdout_tail=str(report.get("output_tail", ""))[-_STDOUT_TAIL:],
            network=network,
        )
    io = dict(report.get("io") or {})
    io["exit_code"] = report.get("exit_code")
    io["signal"] = report.get("signal")
    io["died"] = (
        _died(report, str(report.get("output_tail", ""))) if not io.get("cap_hit") else None
    )
    records = io.get("records") or []
    duration = sum(float(r.get("t", 0.0) or 0.0) for r in records if r.get("kind") == "output")
    return ExecResult(
        key=program.key,
        task_id=program.task_id,
        status="pass",
        category=None,
        details={},
        duration_s=duration,
        wall_s=wall_s,
        isolation=isolation,
        reason="",
        tests_run=len(records),
        stdout_tail=str(report.get("output_tail", ""))[-_STDOUT_TAIL:],
        network=network,
        outputs=io,
    )


#: stderr that says a failed run was an assertion (C++ assert, Java -ea, node:assert, Rust's
#: assert!/assert_eq!, luaunit), to tell failed tests from crashes in the category
_ASSERTION_HINTS = (
    "Assertion",
    "AssertionError",
    "assertion failed",
    "assertion `left",
    "expected: ",  # luaunit, on stdout
    "--- FAIL: ",  # go test: a test that reported an error (t.Errorf)
)
#: go test's output of a test that panicked: it also shows "--- FAIL:", but is no assertion
_GO_PANIC = re.compile(r"^panic: ", re.MULTILINE)


def _process_result(
    program: Program,
    report: Mapping[str, Any],
    isolation: Isolation,
    wall_s: float,
    network: bool,
) -> ExecResult:
    """A "process" program's MultiPL-E status (OK / SyntaxError / Exception / Timeout) as a
    verdict: it passes when the status is OK (the run exited 0)."""
    verdict = report["verdict"]
    process = verdict["process"]
    status_name = str(process.get("status"))
    stderr = str(process.get("stderr", ""))
    stdout = str(process.get("stdout", ""))
    status: Status
    category: ErrorCategory | None
    if report.get("scratch_exceeded"):
        status, category = "fail", ErrorCategory.KILLED
        reason = str(report["scratch_exceeded"])
    elif status_name == "OK":
        status, category, reason = "pass", None, ""
    elif status_name == "Timeout":
        which = "build" if verdict.get("phase") == "build" else "run"
        status, category = "timeout", ErrorCategory.TIMEOUT
        reason = f"Timeout: the {which} outlived its limit; killed with every process it started"
    elif status_name == "SyntaxError":
        status, category = "fail", ErrorCategory.SYNTAX_ERROR
        reason = f"SyntaxError: {_first_line(stderr) or 'the build failed'}"
    else:
        status = "fail"
        code = process.get("exit_code")
        memory = any(hint in stderr for hint in _MEMORY_HINTS)
        if memory:
            category = ErrorCategory.OUT_OF_MEMORY
        elif any(hint in stderr + stdout for hint in _ASSERTION_HINTS) and not _GO_PANIC.search(
            stdout
        ):
            category = ErrorCategory.ASSERTION_FAILED
        else:
            category = ErrorCategory.EXCEPTION
        reason = f"Exception (exit code {code}): {_first_line(stderr or stdout)}".rstrip(": ")
    run_s = process.get("run_s")
    return ExecResult(
        key=program.key,
        task_id=program.task_id,
        status=status,
        category=category,
        details={} if status == "pass" else {"ALL": (stderr or stdout)[-_STDOUT_TAIL:]},
        duration_s=float(process.get("build_s") or 0.0) + float(run_s or 0.0),
        wall_s=wall_s,
        isolation=isolation,
        reason=reason,
        tests_run=1 if run_s is not None else 0,
        stdout_tail=(stdout + stderr)[-_STDOUT_TAIL:],
        network=network,
        # MultiPL-E's own status and the build and run times, for reports and our figures
        outputs={
            "multipl_e_status": status_name,
            "exit_code": process.get("exit_code"),
            "build_s": process.get("build_s"),
            "run_s": run_s,
        },
    )


def lost(
    program: Program,
    isolation: Isolation,
    wall_s: float,
    reason: str,
    category: ErrorCategory,
    network: bool = False,
) -> ExecResult:
    """A sample whose worker vanished or stopped answering: no verdict, as official "timeout"."""
    return ExecResult(
        key=program.key,
        task_id=program.task_id,
        status="timeout",
        category=category,
        details={},
        duration_s=wall_s,
        wall_s=wall_s,
        isolation=isolation,
        reason=reason,
        network=network,
    )
