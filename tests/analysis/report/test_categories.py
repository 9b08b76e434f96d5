"""Failure categories: recorded by passbench, or read from the official files' tracebacks."""

from __future__ import annotations

import pytest

from passbench.analysis.report.categories import (
    classify_details,
    failure_label,
    failure_of,
    last_exception,
)
from passbench.core.records import ErrorCategory
from passbench.stages.results import RunResults, SampleResult


def traceback(error: str, frames: int = 1) -> str:
    lines = ["Traceback (most recent call last):"]
    for i in range(frames):
        lines += [f'  File "__test__.py", line {10 + i}, in test_x', "    do_something()"]
    return "\n".join([*lines, error]) + "\n"


def sample(status: str, details: dict[str, str], **extra: object) -> SampleResult:
    return SampleResult(
        task_id="T/1", sample_index=0, status=status, solution="", details=details, **extra
    )  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (traceback("KeyError: 'x'"), ("KeyError", "'x'")),
        (
            traceback("ZeroDivisionError: division by zero", frames=3),
            ("ZeroDivisionError", "division by zero"),
        ),
        (traceback("StopIteration"), ("StopIteration", "")),
        (
            traceback("pandas.errors.ParserError: bad line"),
            ("pandas.errors.ParserError", "bad line"),
        ),
        (
            traceback(
                "AssertionError: Lists differ: [1] != [2]\n\nFirst differing element 0:\n1\n2"
            ),
            ("AssertionError", "Lists differ: [1] != [2]"),
        ),
        (
            traceback("KeyError: 'a'")
            + "\nDuring handling of the above exception, another exception occurred:\n\n"
            + traceback("ValueError: b"),
            ("ValueError", "b"),
        ),
        ("AssertionError: 3 != 4", ("AssertionError", "3 != 4")),
        ("No module named 'foo'", (None, "")),
        ("", (None, "")),
    ],
)
def test_last_exception(text: str, expected: tuple[str | None, str]) -> None:
    assert last_exception(text) == expected


@pytest.mark.parametrize(
    ("details", "category", "exception_type"),
    [
        (
            {"ALL": "invalid syntax (__test__.py, line 12)"},
            ErrorCategory.SYNTAX_ERROR,
            "SyntaxError",
        ),
        (
            {"ALL": "unexpected indent (__test__.py, line 3)"},
            ErrorCategory.SYNTAX_ERROR,
            "SyntaxError",
        ),
        ({"ALL": "No module named 'wordcloud'"}, ErrorCategory.IMPORT_ERROR, "ModuleNotFoundError"),
        (
            {"ALL": "cannot import name 'x' from 'y' (/a/y.py)"},
            ErrorCategory.IMPORT_ERROR,
            "ImportError",
        ),
        ({"ALL": "Timed out!"}, ErrorCategory.TIMEOUT, "TimeoutException"),
        ({"ALL": "something odd"}, ErrorCategory.EXCEPTION, None),
        (
            {"t": traceback("AssertionError: 1 != 2")},
            ErrorCategory.ASSERTION_FAILED,
            "AssertionError",
        ),
        ({"t": traceback("MemoryError")}, ErrorCategory.OUT_OF_MEMORY, "MemoryError"),
        (
            {"t": traceback("bigcodebench.eval.utils.TimeoutException: Timed out!")},
            ErrorCategory.TIMEOUT,
            "bigcodebench.eval.utils.TimeoutException",
        ),
        (
            {"t": traceback("ModuleNotFoundError: No module named 'x'")},
            ErrorCategory.IMPORT_ERROR,
            "ModuleNotFoundError",
        ),
        (
            {"t": traceback("IndentationError: unexpected indent")},
            ErrorCategory.SYNTAX_ERROR,
            "IndentationError",
        ),
    ],
)
def test_classify_details(
    details: dict[str, str], category: ErrorCategory, exception_type: str | None
) -> None:
    got_category, got_type, _ = classify_details(details)
    assert (got_category, got_type) == (category, exception_type)


def test_a_crash_outranks_a_wrong_value_and_the_commonest_exception_is_named() -> None:
    details = {
        "a": traceback("AssertionError: 1 != 2"),
        "b": traceback("TypeError: bad operand"),
        "c": traceback("KeyError: 'k'"),
        "d": traceback("KeyError: 'j'"),
    }
    category, exception_type, message = classify_details(details)
    assert category is ErrorCategory.EXCEPTION
    assert exception_type == "KeyError"
    assert message == "KeyError: 'k'"


def test_failure_of_prefers_what_the_evaluator_recorded() -> None:
    recorded = sample(
        "fail",
        {"ALL": "killed by signal 9"},
        category=ErrorCategory.KILLED,
        reason="killed by signal 9 (SIGKILL)",
    )
    failure = failure_of(recorded)
    assert failure is not None
    assert (failure.category, failure.derived, failure.message) == (
        ErrorCategory.KILLED,
        False,
        "killed by signal 9 (SIGKILL)",
    )
    assert failure_label(failure) == "killed"


def test_failure_of_reads_the_type_from_a_recorded_reason_without_details() -> None:
    # ground_truth.json keeps the category and reason of a failure but no tracebacks.
    recorded = sample(
        "fail",
        {},
        category=ErrorCategory.EXCEPTION,
        reason="test_basic: urllib.error.URLError: <urlopen error> (+2 more)",
    )
    failure = failure_of(recorded)
    assert failure is not None
    assert failure_label(failure) == "exception:URLError"


def test_failure_of_a_pass_is_none_and_a_timeout_status_wins() -> None:
    assert failure_of(sample("pass", {})) is None
    timed_out = failure_of(sample("timeout", {}))
    assert (
        timed_out is not None and timed_out.category is ErrorCategory.TIMEOUT and timed_out.derived
    )


def test_labels_split_exceptions_by_type(official_run: RunResults) -> None:
    labels = {
        task_id: failure_label(f)
        for task_id, samples in official_run.tasks.items()
        if (f := failure_of(samples[0])) is not None
    }
    assert labels == {
        "BigCodeBench/15": "assertion_failed",
        "BigCodeBench/17": "timeout",
        "BigCodeBench/34": "import_error",
        "BigCodeBench/37": "exception:KeyError",
        "BigCodeBench/82": "syntax_error",
        "BigCodeBench/92": "exception:ValueError",
        "BigCodeBench/99": "assertion_failed",
        "BigCodeBench/101": "timeout",
    }
