"""The trusted side of differential testing: decide an io program's verdict from its outputs.

The sandbox reports, for each input it fed the candidate, a record (sandbox/inside/_io_style.py):
its output's type name, equality digest, size, EvalPlus's `is_floats`, and the value itself when
small or asked for; or the exception it raised; or that a time limit ran out. This module
compares those records with the expected ones, as EvalPlus 0.3.1's `unsafe_execute` compares
outputs, and nothing from the candidate's process is executed here: values are rebuilt from
tagged JSON into builtins only.

EvalPlus's rules, per input in order (its default `fast_check`: the first failure ends the
phase):

- `exact_match = out == exp`;
- MBPP+'s special oracles (`Phase.match`: set equality, "not None", Mbpp/558 and 581's
  alternative answers) decide `exact_match` instead, then the rules below apply as usual;
- a special oracle replaces the comparison where the benchmark has one (HumanEval/32
  `find_zero`: `|poly(xs, out)| <= atol`), and skips the rule below; EvalPlus 0.3.1 does not
  count an input its oracle accepts, which fails every such phase
  (`_as_evalplus_counts_oracle_inputs`);
- when `atol` is 0 and the expected output is a float or a non-empty list/tuple of floats,
  `atol` becomes 1e-6 for this input and every later one of the phase;
- unequal outputs pass with a non-zero `atol` when `type(out) == type(exp)`, lists and tuples
  have the same length, and `numpy.allclose(out, exp, rtol=1e-07, atol=atol)`.

Statuses as EvalPlus reports them: "pass"; "fail" for an exception, a wrong output or an input
over its time limit; "timeout" when the program was killed at the whole-program limit or died
without reporting (EvalPlus cannot tell those apart either).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from passbench.core.records import ErrorCategory, ExecResult, Status
from passbench.stages.sandbox.inside import _values

#: EvalPlus's tolerance for float outputs when the task gives none.
FLOAT_ATOL = 1e-6
#: numpy.testing.assert_allclose's default, which EvalPlus passes to numpy.allclose.
RTOL = 1e-07

#: A special oracle: (input arguments, candidate output, tolerance) -> passes.
Oracle = Callable[[Sequence[Any], Any, float], bool]
#: An MBPP+ special oracle: (input arguments, output, expected, out == exp) -> exact match.
Match = Callable[[Sequence[Any], Any, Any, bool], bool]

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


@dataclass(frozen=True)
class PhaseSpec:
    """What the judge needs to know about one phase of one task."""

    name: str  # "base", "plus"
    atol: float
    time_limits: tuple[float, ...]
    oracle: Oracle | None = None
    inputs: Sequence[Any] = ()  # argument lists, as the reference received them (oracles)
    match: Match | None = None  # MBPP+'s special oracles (benchmarks.base.Phase.match)


def wanted_values(
    expected: Sequence[Mapping[str, Any]], atol: float, oracle: bool
) -> tuple[int, ...]:
    """Inputs whose output the judge needs whole: where a tolerance or an oracle applies."""
    if oracle:
        return tuple(range(len(expected)))
    wanted = []
    tolerance = atol
    for index, record in enumerate(expected):
        if tolerance == 0 and record.get("floats"):
            tolerance = FLOAT_ATOL
        if tolerance != 0:
            wanted.append(index)
    return tuple(wanted)


def judge(
    result: ExecResult, expected: Sequence[Mapping[str, Any]], phase: PhaseSpec
) -> ExecResult:
    """The final verdict on one io program's report (a result without a report — the worker
    died or stopped answering — is returned as it is, with no inputs done)."""
    io = result.outputs
    if io is None:
        return replace(result, inputs_done=0)
    verdict = _decide(io, expected, phase)
    if phase.oracle is not None:
        verdict = _as_evalplus_counts_oracle_inputs(verdict, len(expected))
    return replace(
        result,
        status=verdict.status,
        category=verdict.category,
        reason=verdict.reason,
        details={phase.name: verdict.reason} if verdict.status != "pass" else {},
        outputs=None,
        inputs_done=verdict.done,
        tests_run=verdict.done,
    )


@dataclass(frozen=True)
class _Verdict:
    status: Status
    category: ErrorCategory | None
    reason: str
    done: int  # EvalPlus's progress: inputs judged, the failing one included


def _as_evalplus_counts_oracle_inputs(verdict: _Verdict, n_inputs: int) -> _Verdict:
    """EvalPlus 0.3.1's verdict where a special oracle judges the outputs (HumanEval/32).

    Its `unsafe_execute` leaves the oracle's branch with `continue` before it counts the input
    (`details[i] = True; progress += 1`), so an input that passes the oracle is never counted;
    a failing one is, by the exception handler. `untrusted_check` then keeps
    `details[:progress]` and fails a phase whose details are fewer than its inputs: every
    sample of such a task fails, the canonical solution included, and a failing one reports
    the phase's first input. EvalPlus's published HumanEval+ numbers carry this; passbench
    mirrors it so its numbers are EvalPlus's (docs/benchmarks.md, deviations).
    """
    if verdict.status == "pass" and n_inputs > 0:
        return _Verdict(
            "fail",
            ErrorCategory.ASSERTION_FAILED,
            "every output passed the oracle, but EvalPlus 0.3.1 counts no input its special "
            "oracle accepts, so it fails the phase (mirrored: docs/benchmarks.md)",
            0,
        )
    if verdict.status == "fail" and verdict.done > 0:
        return replace(verdict, done=1)  # only the failing input was counted
    if verdict.status == "timeout":
        return replace(verdict, done=0)
    return verdict


def _decide(
    io: Mapping[str, Any], expected: Sequence[Mapping[str, Any]], phase: PhaseSpec
) -> _Verdict:
    where = phase.name
    if io.get("protocol_error"):
        return _Verdict("fail", ErrorCategory.TAMPERED, f"{where}: {io['protocol_error']}", 0)
    exec_error = io.get("exec_error")
    if exec_error:
        category = _exception_category(str(exec_error.get("exc_type")), loading=True)
        return _Verdict("fail", category, f"{where}: failed while loading: {_exc(exec_error)}", 0)
    records = list(io.get("records") or [])
    tolerance = phase.atol
    for index, exp in enumerate(expected):
        record = records[index] if index < len(records) else None
        label = f"{where} input {index}"
        if record is None:
            return _missing(io, index, label, phase)
        if record.get("kind") == "error":
            category = _exception_category(str(record.get("exc_type")), loading=False)
            return _Verdict("fail", category, f"{label}: {_exc(record)}", index + 1)
        ok, tolerance, message = compare(record, exp, tolerance, phase, index)
        if not ok:
            return _Verdict(
                "fail", ErrorCategory.ASSERTION_FAILED, f"{label}: {message}", index + 1
            )
    return _Verdict("pass", None, "", len(expected))


def _missing(io: Mapping[str, Any], index: int, label: str, phase: PhaseSpec) -> _Verdict:
    """No record for input `index`: a time limit, or the program died."""
    if io.get("input_timeout") == index:
        limit = phase.time_limits[index] if index < len(phase.time_limits) else float("nan")
        return _Verdict(
            "fail",
            ErrorCategory.TIMEOUT,
            f"{label}: took longer than its {limit:.3g}s limit",
            index + 1,
        )
    if io.get("cap_hit"):
        return _Verdict(
            "timeout", ErrorCategory.TIMEOUT, f"{label}: the program's time limit ran out", index
        )
    died = io.get("died")
    if died:
        category, reason = died
        return _Verdict("timeout", category, f"{label}: {reason}", index)
    return _Verdict(
        "timeout", ErrorCategory.KILLED, f"{label}: the program ended without answering", index
    )


def compare(
    record: Mapping[str, Any],
    exp: Mapping[str, Any],
    tolerance: float,
    phase: PhaseSpec,
    index: int,
) -> tuple[bool, float, str]:
    """(passes, the tolerance for the next inputs, why not) for one output, by EvalPlus's rules."""
    out_value = _value(record)
    exp_value = _value(exp)
    exact = _exactly_equal(record, exp, out_value, exp_value)
    if phase.oracle is not None:
        if out_value is _MISSING:
            return False, tolerance, "output too large to check"
        try:
            args = phase.inputs[index]
            ok = bool(phase.oracle(args, out_value, tolerance))
        except Exception as error:  # the oracle on a wrong-typed output raises, as in EvalPlus
            return (
                False,
                tolerance,
                f"the oracle rejected {_show(out_value)}: {type(error).__name__}",
            )
        return ok, tolerance, "" if ok else f"the oracle rejected {_show(out_value)}"
    if phase.match is not None:
        if out_value is _MISSING or exp_value is _MISSING:
            return False, tolerance, "output too large to check"
        try:
            exact = bool(phase.match(phase.inputs[index], out_value, exp_value, exact))
        except Exception as error:  # e.g. set() of an unhashable output: EvalPlus fails it too
            return False, tolerance, f"the oracle rejected {_show(out_value)}: {error!r:.100}"
    if tolerance == 0 and exp.get("floats"):
        tolerance = FLOAT_ATOL
    if not exact and tolerance != 0:
        if record.get("type") != exp.get("type"):
            return False, tolerance, f"expected a {exp.get('type')}, got a {record.get('type')}"
        if out_value is _MISSING or exp_value is _MISSING:
            return False, tolerance, f"output too large to compare within {tolerance:g}"
        if isinstance(exp_value, (list, tuple)) and len(out_value) != len(exp_value):
            return False, tolerance, f"expected {len(exp_value)} items, got {len(out_value)}"
        if not allclose(out_value, exp_value, tolerance):
            return (
                False,
                tolerance,
                (f"expected {_show(exp_value)} (atol {tolerance:g}), got {_show(out_value)}"),
            )
        return True, tolerance, ""
    if exact:
        return True, tolerance, ""
    return (
        False,
        tolerance,
        f"expected {_describe(exp, exp_value)}, got {_describe(record, out_value)}",
    )


class _Missing:
    def __repr__(self) -> str:
        return "<not carried>"


_MISSING: Any = _Missing()


def _value(record: Mapping[str, Any]) -> Any:
    if "value" not in record:
        return _MISSING
    try:
        return _values.from_tagged(record["value"])
    except (ValueError, RecursionError, OverflowError):
        return _MISSING


def _exactly_equal(
    record: Mapping[str, Any], exp: Mapping[str, Any], out_value: Any, exp_value: Any
) -> bool:
    """EvalPlus's `out == exp`, on the values when both travelled, else on the digests."""
    if out_value is not _MISSING and exp_value is not _MISSING:
        try:
            return bool(out_value == exp_value)
        except Exception:  # deep structures: RecursionError
            return False
    if exp.get("nan") or record.get("nan"):
        return False  # NaN is unequal to every other NaN; opaque values to everything
    out_digest = record.get("digest")
    if out_digest is None and out_value is not _MISSING:
        out_digest, _ = _values.equality_digest(out_value)
    return out_digest is not None and out_digest == exp.get("digest")


def allclose(out: Any, exp: Any, atol: float) -> bool:
    """numpy.allclose(out, exp, rtol=1e-07, atol=atol); False where numpy raises."""
    try:
        import numpy

        return bool(numpy.allclose(out, exp, rtol=RTOL, atol=atol))
    except ImportError:  # pragma: no cover - numpy is a dependency; kept for minimal installs
        return _close(out, exp, atol)
    except Exception:
        return False


def _close(out: Any, exp: Any, atol: float) -> bool:
    """numpy.allclose's rule in plain Python, for same-shaped nested sequences of numbers."""
    if isinstance(exp, (list, tuple)):
        return (
            isinstance(out, (list, tuple))
            and len(out) == len(exp)
            and all(_close(o, e, atol) for o, e in zip(out, exp))  # noqa: B905 - lengths checked
        )
    if not isinstance(out, (int, float)) or not isinstance(exp, (int, float)):
        return False
    if math.isnan(out) or math.isnan(exp):
        return False
    if math.isinf(out) or math.isinf(exp):
        return out == exp
    return abs(out - exp) <= atol + RTOL * abs(exp)


def _describe(record: Mapping[str, Any], value: Any) -> str:
    if value is not _MISSING:
        return _show(value)
    kind = record.get("type", "?")
    length = record.get("length")
    return f"a {kind} of length {length}" if length is not None else f"a {kind}"


def _show(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _exc(record: Mapping[str, Any]) -> str:
    message = str(record.get("exc_message", "")).strip().splitlines()
    first = message[-1] if message else ""
    return f"{record.get('exc_type', '?')}: {first}" if first else str(record.get("exc_type", "?"))


def _exception_category(exc_type: str, *, loading: bool) -> ErrorCategory:
    if loading and exc_type in ("SyntaxError", "IndentationError", "TabError"):
        return ErrorCategory.SYNTAX_ERROR
    if exc_type in _IMPORT_ERRORS:
        return ErrorCategory.IMPORT_ERROR
    if exc_type == "MemoryError":
        return ErrorCategory.OUT_OF_MEMORY
    if exc_type == "AssertionError":
        return ErrorCategory.ASSERTION_FAILED
    return ErrorCategory.EXCEPTION
