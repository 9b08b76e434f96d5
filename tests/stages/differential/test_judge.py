"""EvalPlus's comparison rules, applied outside the sandbox to the records it reports.

Records are made by the same `describe` the sandbox's child uses, so these tests see exactly
what the judge sees in a real run."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from passbench.core.records import ErrorCategory, ExecResult, Isolation
from passbench.stages.differential.judge import PhaseSpec, allclose, judge, wanted_values
from passbench.stages.sandbox.inside import _io_style


def record(
    value: Any, index: int, *, reference: bool = False, want: bool = False
) -> dict[str, Any]:
    described, value_json = _io_style.describe(value, want, reference)
    described.update(kind="output", i=index, t=0.001)
    if value_json is not None:
        described["value"] = json.loads(value_json)
    return described


def expected(*outputs: Any) -> list[dict[str, Any]]:
    return [record(value, i, reference=True) for i, value in enumerate(outputs)]


def run(
    outputs: Sequence[Any] | None = None,
    *,
    exp: list[dict[str, Any]],
    atol: float = 0.0,
    oracle: Any = None,
    inputs: Sequence[Any] = (),
    **io: Any,
) -> ExecResult:
    want = set(wanted_values(exp, atol, oracle is not None))
    records = [record(v, i, want=i in want) for i, v in enumerate(outputs or [])]
    report = {"records": records, "exec_error": None, "cap_hit": False, "input_timeout": None}
    report.update(io)
    result = ExecResult(
        key="k",
        task_id="HumanEval/0",
        status="pass",
        category=None,
        details={},
        duration_s=0.0,
        wall_s=0.0,
        isolation=Isolation.BUBBLEWRAP,
        outputs=report,
    )
    limits = (1.0,) * len(exp)
    return judge(result, exp, PhaseSpec("base", atol, limits, oracle, inputs))


def test_equal_outputs_pass_and_the_first_difference_fails() -> None:
    exp = expected(1, [1, 2], "abc", {"a": 1})
    assert run([1, [1, 2], "abc", {"a": 1}], exp=exp).status == "pass"
    result = run([1, [2, 1], "abc", {"a": 1}], exp=exp)
    assert (result.status, result.category, result.inputs_done) == (
        "fail",
        ErrorCategory.ASSERTION_FAILED,
        2,
    )
    assert result.reason == "base input 1: expected [1, 2], got [2, 1]"
    assert result.details == {"base": result.reason} and result.outputs is None


def test_equality_is_pythons() -> None:
    exp = expected(1, [1, 2], (1,), {1: "x"})
    # 1 == True == 1.0 and dict order does not matter, as `out == exp` in EvalPlus
    assert run([True, [1.0, 2], (1,), {1.0: "x"}], exp=exp).status == "pass"
    assert run([1, [1, 2], [1], {1: "x"}], exp=exp).status == "fail"  # a list is not a tuple


def test_large_outputs_compare_by_digest() -> None:
    big = "x" * 200_000
    exp = expected(big, list(range(100_000)))
    assert "value" not in exp[0] and exp[0]["digest"]
    assert run([big, [float(i) for i in range(100_000)]], exp=exp).status == "pass"
    failed = run([big[:-1] + "y", list(range(100_000))], exp=exp)
    assert failed.status == "fail" and "a str of length 200000" in failed.reason


def test_float_rule_applies_from_the_first_float_output_on() -> None:
    # atol 0: exact until an expected output is a float (or list of floats); from then on
    # EvalPlus compares with atol 1e-6, even outputs that are not floats
    exp = expected(1.0, 10)
    assert run([1.0 + 1e-9, 10], exp=exp).status == "pass"
    exp = expected(10, 1.0)
    assert run([10.0000001, 1.0], exp=exp).status == "fail"  # 10 is compared exactly
    exp = expected([0.5, 0.25], 3.0)
    assert run([[0.5000001, 0.25], 3.0], exp=exp).status == "pass"
    assert run([[0.5001, 0.25], 3.0], exp=exp).status == "fail"


def test_tolerance_needs_the_same_type_and_length() -> None:
    exp = expected([1.0, 2.0])
    assert run([(1.0, 2.0)], exp=exp).status == "fail"
    assert run([[1.0]], exp=exp).status == "fail"
    assert "expected a list, got a tuple" in run([(1.0, 2.0)], exp=exp).reason


def test_task_atol_applies_to_everything() -> None:
    exp = expected(3, [1.5, 2.5])
    assert run([3.0000001, [1.5, 2.5000001]], exp=exp, atol=1e-6).status == "fail"  # int vs float
    assert run([3, [1.5, 2.5000009]], exp=exp, atol=1e-6).status == "pass"


def test_nan_never_equals_nan() -> None:
    exp = expected(math.nan)
    assert run([math.nan], exp=exp).status == "fail"


def test_find_zero_oracle_accepts_any_root() -> None:
    def oracle(args: Sequence[Any], out: Any, atol: float) -> bool:
        xs = args[0]
        return abs(sum(c * math.pow(out, i) for i, c in enumerate(xs))) <= atol

    inputs = [[[-6.0, 11.0, -6.0, 1.0]], [[-2.0, 1.0]]]  # roots 1, 2, 3; root 2
    exp = expected(1.0, 2.0)
    # EvalPlus 0.3.1 never counts an input its oracle accepts, so even all-correct roots fail
    # the phase, with nothing reported as failing; a rejected root counts as the one input done
    right = run([3.0, 2.0], exp=exp, atol=1e-4, oracle=oracle, inputs=inputs)
    assert (right.status, right.inputs_done) == ("fail", 0)
    assert "every output passed the oracle" in right.reason
    wrong = run([3.0, 2.5], exp=exp, atol=1e-4, oracle=oracle, inputs=inputs)
    assert (wrong.status, wrong.inputs_done) == ("fail", 1)
    assert "input 1: the oracle rejected 2.5" in wrong.reason
    typed = run(["no"], exp=exp, atol=1e-4, oracle=oracle, inputs=inputs)
    assert (typed.status, typed.inputs_done) == ("fail", 1)
    capped = run([3.0], exp=exp, atol=1e-4, oracle=oracle, inputs=inputs, cap_hit=True)
    assert (capped.status, capped.inputs_done) == ("timeout", 0)


def test_statuses_follow_evalplus() -> None:
    exp = expected(1, 2, 3)
    crashed = run(
        [1],
        exp=exp,
        records=[record(1, 0), {"kind": "error", "i": 1, "exc_type": "ZeroDivisionError"}],
    )
    assert (crashed.status, crashed.category, crashed.inputs_done) == (
        "fail",
        ErrorCategory.EXCEPTION,
        2,
    )
    slow = run([1], exp=exp, input_timeout=1)
    assert (slow.status, slow.category, slow.inputs_done) == ("fail", ErrorCategory.TIMEOUT, 2)
    capped = run([1, 2], exp=exp, cap_hit=True)
    assert (capped.status, capped.inputs_done) == ("timeout", 1 + 1)
    died = run([1], exp=exp, died=(ErrorCategory.KILLED, "killed by SIGSEGV"))
    assert (died.status, died.category, died.inputs_done) == ("timeout", ErrorCategory.KILLED, 1)
    loading = run(exp=exp, exec_error={"exc_type": "SyntaxError", "exc_message": "bad"})
    assert (loading.status, loading.category, loading.inputs_done) == (
        "fail",
        ErrorCategory.SYNTAX_ERROR,
        0,
    )
    tampered = run([1], exp=exp, protocol_error="records out of order")
    assert tampered.category == ErrorCategory.TAMPERED


def test_a_wrong_output_before_a_timeout_is_a_failure() -> None:
    # EvalPlus stops at the first failing input: a later time-out never happens there
    exp = expected(1, 2, 3)
    assert run([9, 2], exp=exp, cap_hit=True).status == "fail"


def test_values_are_wanted_where_a_tolerance_or_oracle_applies() -> None:
    exp = expected(1, 2.0, "x")
    assert wanted_values(exp, 0.0, False) == (1, 2)
    assert wanted_values(exp, 1e-6, False) == (0, 1, 2)
    assert wanted_values(expected(1), 0.0, True) == (0,)


pairs = st.lists(
    st.tuples(
        st.floats(allow_nan=True, allow_infinity=True, width=64),
        st.floats(allow_nan=True, allow_infinity=True, width=64),
    ),
    min_size=1,
    max_size=5,
)


@given(pairs, st.sampled_from([1e-6, 1e-4, 0.5]))
def test_allclose_is_numpys(values: list[tuple[float, float]], atol: float) -> None:
    out = [a for a, _ in values]
    exp = [b for _, b in values]
    assert allclose(out, exp, atol) == bool(np.allclose(out, exp, rtol=1e-07, atol=atol))


def test_allclose_false_where_numpy_raises() -> None:
    assert allclose(["a"], [1.0], 1e-6) is False
    assert allclose(None, 1.0, 1e-6) is False


@pytest.mark.parametrize("atol", [0.0, 1e-6])
def test_an_output_that_did_not_travel_cannot_pass_a_tolerance(atol: float) -> None:
    exp = expected([0.5] * 10)
    stripped = record([0.5] * 10, 0)
    stripped.pop("value", None)
    stripped.pop("digest", None)
    result = run(exp=exp, atol=atol, records=[stripped])
    assert result.status == "fail"
