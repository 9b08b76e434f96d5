"""Why a sample failed: its error category and exception type, recorded or read from tracebacks.

passbench's evaluator records a category per sample; the official evaluator's files only carry
`status` and `details` (failing test -> traceback text, or `"ALL"` -> `str(exception)` when the
program failed before the tests ran). For those we derive the category from that text:

- status `timeout`, or a `TimeoutException` / "Timed out!"                 -> timeout
- a SyntaxError / IndentationError / TabError, or an `"ALL"` message ending
  in `(<file>.py, line N)` (how `str(SyntaxError)` reads)                   -> syntax_error
- ModuleNotFoundError / ImportError, or "No module named ..."               -> import_error
- MemoryError                                                               -> out_of_memory
- every failing test ends in AssertionError (unittest's failures)           -> assertion_failed
- any other exception in any test                                           -> exception

One sample has one category: a whole-program error outranks per-test ones, and a test that
raised (exception) outranks a test whose assertion failed, since a crash says more about the
code than a wrong value. `killed` and `tampered` are only known from the sandbox, so only
passbench's own files have them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace

from passbench.core.records import ErrorCategory
from passbench.core.runs import NO_ANSWER_TRUNCATED
from passbench.stages.results import SampleResult

# "pkg.module.ErrorName: message" or a bare "ErrorName", as Python prints an exception.
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")
_TRACEBACK_HEADER = "Traceback (most recent call last):"
_SYNTAX_MESSAGE = re.compile(r"\([^()]*\.py, line \d+\)\s*$")
_SYNTAX_TYPES = {"SyntaxError", "IndentationError", "TabError"}
_IMPORT_TYPES = {"ModuleNotFoundError", "ImportError"}
_TIMEOUT_TYPES = {"TimeoutException", "TimeoutError"}
_WHOLE_PROGRAM = "ALL"
_RANK = {
    ErrorCategory.TAMPERED: 0,
    ErrorCategory.KILLED: 1,
    ErrorCategory.OUT_OF_MEMORY: 2,
    ErrorCategory.TIMEOUT: 3,
    ErrorCategory.SYNTAX_ERROR: 4,
    ErrorCategory.IMPORT_ERROR: 5,
    ErrorCategory.EXCEPTION: 6,
    ErrorCategory.ASSERTION_FAILED: 7,
}


@dataclass(frozen=True)
class Failure:
    """What went wrong in one failing sample."""

    category: ErrorCategory
    exception_type: str | None  # "KeyError", "pandas.errors.ParserError", None when unknown
    message: str  # one line a person can read
    derived: bool  # True when read from traceback text rather than recorded by the evaluator
    # the answer was cut short: counted as "no answer (truncated)", not as a test failure
    truncated: bool = False


def last_exception(traceback: str) -> tuple[str | None, str]:
    """The exception type and message a traceback ends with, e.g. ("KeyError", "'x'").

    The exception line is the first unindented line after the last traceback header (frames
    and source lines are indented); messages may run over several lines, so reading the
    text's last line would not do. Text without a header is read as "Type: message" itself.
    """
    lines = traceback.strip().splitlines()
    start = 0
    for number in range(len(lines) - 1, -1, -1):
        if lines[number].startswith(_TRACEBACK_HEADER):
            start = number + 1
            break
    else:
        if not lines:
            return None, ""
        match = _EXCEPTION_LINE.match(lines[0].strip())
        if match and match.group(1).rsplit(".", 1)[-1][:1].isupper():
            return match.group(1), (match.group(2) or "").strip()
        return None, ""
    for line in lines[start:]:
        if line and not line[0].isspace():
            match = _EXCEPTION_LINE.match(line)
            if match:
                return match.group(1), (match.group(2) or "").strip()
            return None, line.strip()
    return None, ""


def _short_type(exception_type: str) -> str:
    return exception_type.rsplit(".", 1)[-1]


def _classify_text(name: str, text: str) -> tuple[ErrorCategory, str | None, str]:
    """Category, exception type and message of one `details` entry."""
    exception_type, message = last_exception(text)
    if exception_type is None and name == _WHOLE_PROGRAM:
        # str(exception) only: recognise the common shapes by their wording.
        stripped = text.strip()
        if stripped == "Timed out!":
            return ErrorCategory.TIMEOUT, "TimeoutException", stripped
        if _SYNTAX_MESSAGE.search(stripped):
            return ErrorCategory.SYNTAX_ERROR, "SyntaxError", stripped
        if stripped.startswith("No module named"):
            return ErrorCategory.IMPORT_ERROR, "ModuleNotFoundError", stripped
        if stripped.startswith("cannot import name"):
            return ErrorCategory.IMPORT_ERROR, "ImportError", stripped
        return ErrorCategory.EXCEPTION, None, stripped.splitlines()[0] if stripped else ""
    if exception_type is None:
        return ErrorCategory.EXCEPTION, None, _first_line(text)
    short = _short_type(exception_type)
    line = f"{exception_type}: {message}" if message else exception_type
    if short in _SYNTAX_TYPES:
        return ErrorCategory.SYNTAX_ERROR, exception_type, line
    if short in _IMPORT_TYPES:
        return ErrorCategory.IMPORT_ERROR, exception_type, line
    if short in _TIMEOUT_TYPES or message == "Timed out!":
        return ErrorCategory.TIMEOUT, exception_type, line
    if short == "MemoryError":
        return ErrorCategory.OUT_OF_MEMORY, exception_type, line
    if short == "AssertionError":
        return ErrorCategory.ASSERTION_FAILED, exception_type, line
    return ErrorCategory.EXCEPTION, exception_type, line


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def classify_details(details: Mapping[str, str]) -> tuple[ErrorCategory, str | None, str]:
    """The one category of a failing sample from its `details` (see the module docstring)."""
    if not details:
        return ErrorCategory.EXCEPTION, None, ""
    if _WHOLE_PROGRAM in details:
        return _classify_text(_WHOLE_PROGRAM, details[_WHOLE_PROGRAM])
    verdicts = [_classify_text(name, text) for name, text in details.items()]
    best = min(verdicts, key=lambda verdict: _RANK[verdict[0]])
    if best[0] is ErrorCategory.EXCEPTION:
        # Name the exception most tests died of, not whichever came first.
        types = Counter(v[1] for v in verdicts if v[0] is ErrorCategory.EXCEPTION)
        common = types.most_common(1)[0][0]
        best = next(v for v in verdicts if v[0] is ErrorCategory.EXCEPTION and v[1] == common)
    return best


def _reason_type(reason: str) -> str | None:
    """The exception type in a sandbox reason, "<test name>: <Type>: <message> (+N more)".

    Needed where the file keeps no `details` to read it from (ground_truth.json).
    """
    _, _, rest = reason.partition(": ")
    return last_exception(rest)[0] if rest else None


def failure_of(sample: SampleResult) -> Failure | None:
    """Why `sample` failed, or None when it passed."""
    failure = _test_failure(sample)
    if failure is None or not sample.no_answer:
        return failure
    return replace(failure, truncated=True, message=f"{NO_ANSWER_TRUNCATED}: {sample.truncated}")


def _test_failure(sample: SampleResult) -> Failure | None:
    if sample.passed:
        return None
    if sample.category is not None and sample.reason:
        # passbench's evaluator recorded both: they are authoritative, and reading the
        # tracebacks is needed only when the reason does not name the exception.
        exception_type, _ = last_exception(sample.reason)
        if exception_type is None and sample.category is ErrorCategory.EXCEPTION:
            exception_type = classify_details(sample.details)[1] or _reason_type(sample.reason)
        return Failure(sample.category, exception_type, sample.reason, derived=False)
    derived_category, exception_type, message = classify_details(sample.details)
    if sample.status == "timeout":
        derived_category = ErrorCategory.TIMEOUT
        message = message or "timed out"
    if sample.reason:
        # The evaluator's own one-line reason is better than anything we parse.
        reason_type, _ = last_exception(sample.reason)
        exception_type = exception_type or reason_type
        message = sample.reason
    if sample.category is not None:
        return Failure(sample.category, exception_type, message, derived=False)
    return Failure(derived_category, exception_type, message, derived=True)


def failure_label(failure: Failure) -> str:
    """The group a failure is counted under: its category, or `exception:<Type>`; an answer
    cut short is "no answer (truncated)", whatever the tests then said."""
    if failure.truncated:
        return NO_ANSWER_TRUNCATED
    if failure.category is ErrorCategory.EXCEPTION:
        return f"exception:{_short_type(failure.exception_type or 'unknown')}"
    return str(failure.category.value)
