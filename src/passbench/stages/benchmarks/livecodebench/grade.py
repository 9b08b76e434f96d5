"""The trusted side of LiveCodeBench grading: an io program's report -> LiveCodeBench's verdict.

The candidate ran in the sandbox (_lcb_harness.py beside this file); its outputs come back here
and are compared with the expected ones as lcb_runner/evaluation/testing_util.py compares them,
test by test, the first failure ending the run:

- functional (LeetCode) tests: `prediction == json.loads(expected)` (a tuple was made a list);
- stdin tests: the captured stdout and the expected text are each stripped and split into
  stripped lines; different line counts are "Wrong answer: mismatched output length"; each pair
  of lines is equal, or equal as lists of `Decimal`s of their whitespace-separated fields, or
  "Wrong answer at output_line_idx=N: <got> != <expected>".

LiveCodeBench's error codes and its metadata dict, kept per sample (`ExecResult.details`, key
`livecodebench`, as the JSON text LiveCodeBench writes):

    -1 global timeout: the whole program ran past (timeout + 1) * tests + 5 seconds
    -2 wrong answer            -3 time limit exceeded (one test past `timeout`)
    -4 runtime error, or "Error during testing: ..." when the code does not load
    -5 test-runner error: the program died without answering (LiveCodeBench: its IndexError)

A passing sample's metadata is `{"execution time": seconds}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from passbench.core.records import ErrorCategory, ExecResult, Status, Task
from passbench.stages.sandbox.inside import _values

#: The key of the LiveCodeBench metadata JSON in a verdict's details.
DETAILS_KEY = "livecodebench"
#: LiveCodeBench's error codes.
GLOBAL_TIMEOUT, WRONG_ANSWER, TIME_LIMIT, RUNTIME_ERROR, RUNNER_ERROR = -1, -2, -3, -4, -5


def truncatefn(value: Any, length: int = 300) -> str:
    """testing_util.truncatefn: str() of the value, its middle cut when longer than `length`."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= length:
        return text
    return text[: length // 2] + "...(truncated) ..." + text[-length // 2 :]


def stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(field) for field in line.split()]
    except (InvalidOperation, ValueError):
        return None


def compare_stdout(prediction: str, expected: str) -> str | None:
    """None when `prediction` passes as grade_stdio decides; else its error message."""
    got, want = stripped_lines(prediction), stripped_lines(expected)
    if len(got) != len(want):
        return "Wrong answer: mismatched output length"
    for index, (got_line, want_line) in enumerate(zip(got, want, strict=True)):
        if got_line == want_line:
            continue
        got_numbers, want_numbers = _decimals(got_line), _decimals(want_line)
        if got_numbers is None or want_numbers is None or got_numbers != want_numbers:
            return (
                f"Wrong answer at output_line_idx={index}: "
                f"{truncatefn(got_line)} != {truncatefn(want_line)}"
            )
    return None


@dataclass(frozen=True)
class Grade:
    """LiveCodeBench's (results, metadata) for one sample, and passbench's verdict fields."""

    results: tuple[Any, ...]  # True per passing test, then the failing test's code
    metadata: dict[str, Any]
    status: Status
    category: ErrorCategory | None
    reason: str
    done: int  # tests judged, the failing one included

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r is True for r in self.results)


def _runner_error(error: str, done: int, reason: str, category: ErrorCategory) -> Grade:
    # LiveCodeBench: its metadata list is empty, `metadata_list[0]` raises IndexError, and
    # evaluate_generations_by_problem records the test-runner error with results [-2]
    return Grade(
        (WRONG_ANSWER,),
        {"error": error, "error_code": RUNNER_ERROR, "error_message": "TestRunnerError"},
        "fail",
        category,
        reason,
        done,
    )


def grade(report: Mapping[str, Any] | None, task: Task) -> Grade:
    """LiveCodeBench's verdict on one io report of `task`'s program."""
    tests = task.metadata["tests"]
    func_name: str | None = task.metadata["func_name"]
    died = "IndexError('list index out of range')"
    if report is None:
        return _runner_error(died, 0, "the sandbox returned no report", ErrorCategory.KILLED)
    if report.get("protocol_error"):
        reason = str(report["protocol_error"])
        return _runner_error(died, 0, reason, ErrorCategory.TAMPERED)
    exec_error = report.get("exec_error")
    if exec_error:
        exc_type = str(exec_error.get("exc_type"))
        loading = str(exec_error.get("exc_message", ""))
        syntax = exc_type in ("SyntaxError", "IndentationError", "TabError")
        return Grade(
            (RUNTIME_ERROR,),
            {"error_code": RUNTIME_ERROR, "error_message": f"Error during testing: {loading}"},
            "fail",
            ErrorCategory.SYNTAX_ERROR if syntax else ErrorCategory.EXCEPTION,
            f"failed while loading: {exc_type}: {loading}",
            0,
        )
    records = list(report.get("records") or [])
    results: list[Any] = []
    elapsed = 0.0
    for index, test in enumerate(tests):
        shown_input: Any = test.input
        shown_expected: Any = test.output
        if func_name is not None:
            shown_input = [json.loads(line) for line in test.input.split("\n")]
            shown_expected = json.loads(test.output)
        label = f"test {index}"
        record = records[index] if index < len(records) else None
        if record is None:
            if report.get("input_timeout") == index:
                return _fail(
                    results,
                    TIME_LIMIT,
                    {
                        "error": "TimeoutException()",
                        "error_code": TIME_LIMIT,
                        "error_message": "Time Limit Exceeded",
                        "inputs": truncatefn(shown_input),
                        "expected": truncatefn(shown_expected),
                    },
                    ErrorCategory.TIMEOUT,
                    f"{label}: Time Limit Exceeded",
                )
            if report.get("cap_hit"):
                return Grade(
                    (GLOBAL_TIMEOUT,) * len(tests),
                    {"error_code": GLOBAL_TIMEOUT, "error_message": "Global Timeout"},
                    "timeout",
                    ErrorCategory.TIMEOUT,
                    f"{label}: the program's global time limit ran out",
                    index,
                )
            return _runner_error(
                died, index, f"{label}: the program ended without answering", ErrorCategory.KILLED
            )
        if record.get("kind") != "output":  # a BaseException LiveCodeBench does not catch
            reason = f"{label}: {record.get('exc_type', '?')} escaped the test"
            return _runner_error(died, index + 1, reason, ErrorCategory.KILLED)
        answer = _answer(record)
        if answer is None:
            reason = f"{label}: the harness's answer was not [kind, value]"
            return _runner_error(died, index + 1, reason, ErrorCategory.TAMPERED)
        kind, value = answer
        if kind == "error":
            text = str(value)
            timeout = "timeoutexception" in text.lower()  # LiveCodeBench's own test
            code = TIME_LIMIT if timeout else RUNTIME_ERROR
            return _fail(
                results,
                code,
                {
                    "error": text,
                    "error_code": code,
                    "error_message": "Time Limit Exceeded" if timeout else "Runtime Error",
                    "inputs": truncatefn(shown_input),
                    "expected": truncatefn(shown_expected),
                },
                ErrorCategory.TIMEOUT if timeout else ErrorCategory.EXCEPTION,
                f"{label}: {text[:200]}",
            )
        elapsed += float(record.get("t") or 0.0)
        if func_name is not None:
            if value is _TOO_LARGE or value != shown_expected:
                output = "(an output too large to bring back)" if value is _TOO_LARGE else value
                metadata = {
                    "output": truncatefn(output),
                    "inputs": truncatefn(shown_input),
                    "expected": truncatefn(shown_expected),
                    "error_code": WRONG_ANSWER,
                    "error_message": "Wrong Answer",
                }
                return _fail(results, WRONG_ANSWER, metadata, ErrorCategory.ASSERTION_FAILED, label)
        else:
            if value is _TOO_LARGE or not isinstance(value, str):
                message: str | None = "Wrong answer: output too large to compare"
                value = "(an output too large to bring back)"
            else:
                message = compare_stdout(value, test.output)
            if message is not None:
                metadata = {
                    "output": truncatefn(value),
                    "inputs": truncatefn(test.input),
                    "expected": truncatefn(test.output),
                    "error_code": WRONG_ANSWER,
                    "error_message": message,
                }
                return _fail(
                    results,
                    WRONG_ANSWER,
                    metadata,
                    ErrorCategory.ASSERTION_FAILED,
                    f"{label}: {message[:200]}",
                )
        results.append(True)
    return Grade(tuple(results), {"execution time": elapsed}, "pass", None, "", len(tests))


def _fail(
    results: list[Any],
    code: int,
    metadata: dict[str, Any],
    category: ErrorCategory,
    reason: str,
) -> Grade:
    return Grade((*results, code), metadata, "fail", category, reason, len(results) + 1)


class _TooLarge:
    def __repr__(self) -> str:
        return "<too large>"


_TOO_LARGE: Any = _TooLarge()


def _answer(record: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The harness's ["ok" | "error", value], rebuilt from tagged JSON (builtins only)."""
    if "value" not in record:
        # too large to travel whole: a wrong answer we cannot show (the record has its size)
        return ("ok", _TOO_LARGE)
    try:
        value = _values.from_tagged(record["value"])
    except (ValueError, RecursionError, OverflowError):
        return None
    if not isinstance(value, list) or len(value) != 2 or value[0] not in ("ok", "error"):
        return None
    return value[0], value[1]


def judge(result: ExecResult, task: Task) -> ExecResult:
    """The final verdict on `task`'s io program: LiveCodeBench's grade, with its metadata in
    `details[DETAILS_KEY]` (pass or fail) and its results list in `outputs`-free form."""
    verdict = grade(result.outputs, task)
    details = {DETAILS_KEY: json.dumps(verdict.metadata), "results": json.dumps(verdict.results)}
    return replace(
        result,
        status=verdict.status,
        category=verdict.category,
        reason=verdict.reason,
        details=details,
        outputs=None,
        inputs_done=verdict.done,
        tests_run=verdict.done,
    )


def lcb_metadata(details: Mapping[str, str]) -> dict[str, Any] | None:
    """The LiveCodeBench metadata a verdict's details hold (None when they hold none)."""
    text = details.get(DETAILS_KEY)
    return json.loads(text) if text else None


def graded(results: Sequence[Any]) -> bool:
    """extract_instance_results: every test's result is > 0 (True)."""
    return all(r is True or (not isinstance(r, bool) and r > 0) for r in results)
