"""Pure parts of the local backend: order, concurrency, verdict classification."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from passbench.core.records import ErrorCategory, Program
from passbench.stages.sandbox import Limits, SandboxConfig, open_sandbox
from passbench.stages.sandbox.host.local import auto_concurrency, schedule, usable_cores
from passbench.stages.sandbox.verdict import classify

from .helpers import PYTHON, TEST_LIMITS, checks_program


def _program(key: str, expected: float | None) -> Program:
    return Program(key=key, task_id=key, source="", expected_duration_s=expected)


def test_slowest_first_unknown_keep_their_order() -> None:
    programs = [_program("a", None), _program("b", 5.0), _program("c", None), _program("d", 9.0)]
    assert [p.key for p in schedule(programs)] == ["d", "b", "a", "c"]


def test_auto_concurrency_bounded_by_cores_and_memory() -> None:
    limits = Limits(memory_mb=4096, tmp_mb=512)
    assert auto_concurrency(limits, cores=2, memory_mb=24 * 1024) == 4
    assert auto_concurrency(limits, cores=16, memory_mb=24 * 1024) == 4  # memory-bound
    assert auto_concurrency(limits, cores=2, memory_mb=2048) == 1  # never zero


def _report(**verdict: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"phase": "done", "tests_run": 1, "tests_loaded": 1, "details": {}}
    base.update(verdict)
    return {"verdict": base, "exit_code": 0, "signal": None, "timed_out": False}


CASES: list[tuple[dict[str, Any], str, ErrorCategory | None]] = [
    (_report(), "pass", None),
    ({"verdict": None, "timed_out": True}, "timeout", ErrorCategory.TIMEOUT),
    ({"verdict": None, "signal": signal.SIGKILL}, "timeout", ErrorCategory.KILLED),
    ({"verdict": None, "signal": signal.SIGXCPU}, "timeout", ErrorCategory.TIMEOUT),
    (
        {"verdict": None, "signal": signal.SIGABRT, "output_tail": "std::bad_alloc"},
        "timeout",
        ErrorCategory.OUT_OF_MEMORY,
    ),
    ({"verdict": None, "exit_code": 0}, "timeout", ErrorCategory.KILLED),
    ({"verdict": None, "exit_code": 97}, "timeout", ErrorCategory.TAMPERED),
    ({"verdict": None, "channel_tampered": "foreign bytes"}, "fail", ErrorCategory.TAMPERED),
    (_report(phase="compile", exc_type="SyntaxError"), "fail", ErrorCategory.SYNTAX_ERROR),
    (_report(phase="exec", exc_type="ModuleNotFoundError"), "fail", ErrorCategory.IMPORT_ERROR),
    (_report(phase="exec", exc_type="MemoryError"), "fail", ErrorCategory.OUT_OF_MEMORY),
    (_report(phase="exec", exc_type="ValueError"), "fail", ErrorCategory.EXCEPTION),
    (_report(tampered=["TestCase.run replaced"]), "fail", ErrorCategory.TAMPERED),
    (_report(tests_run=0, tests_loaded=2), "fail", ErrorCategory.TAMPERED),
    (
        _report(
            details={"test_a": "AssertionError"}, kinds=[["test_a", "failure", "AssertionError"]]
        ),
        "fail",
        ErrorCategory.ASSERTION_FAILED,
    ),
    (
        _report(
            details={"test_a": "x", "test_b": "y"},
            kinds=[["test_a", "failure", "AssertionError"], ["test_b", "error", "ImportError"]],
        ),
        "fail",
        ErrorCategory.IMPORT_ERROR,
    ),
    (
        _report(
            details={"test_a": "x"}, kinds=[["test_a", "error", "TimeoutException"]], alarm=True
        ),
        "fail",
        ErrorCategory.TIMEOUT,
    ),
    (
        _report(details={"test_a": "x"}, kinds=[["test_a", "error", "KeyError"]]),
        "fail",
        ErrorCategory.EXCEPTION,
    ),
    ({**_report(), "exit_code": 1}, "fail", ErrorCategory.KILLED),
]


@pytest.mark.parametrize(("report", "status", "category"), CASES)
def test_classify(report: dict[str, Any], status: str, category: ErrorCategory | None) -> None:
    got_status, got_category, reason = classify(report, timeout_s=10.0)
    assert (got_status, got_category) == (status, category)
    assert (reason == "") == (status == "pass")
    assert "\n" not in reason


@pytest.mark.slow
def test_waiting_samples_overlap_beyond_the_core_count() -> None:
    # Samples that sleep use no CPU, so more of them run at once than there are cores.
    slots = usable_cores() + 2
    body = "import time\nprint('start', time.time())\ntime.sleep(1.5)\nprint('end', time.time())"
    programs = [checks_program(f"sleep{i}", body) for i in range(slots)]
    config = SandboxConfig(python=PYTHON, workers=slots, limits=TEST_LIMITS)
    with open_sandbox(config, backend="local-rlimit", warn=lambda m: None) as sandbox:
        results = list(sandbox.run(programs))
    spans = []
    for result in results:
        assert result.status == "pass"
        words = result.stdout_tail.split()
        spans.append((float(words[words.index("start") + 1]), float(words[words.index("end") + 1])))
    most = max(sum(start <= t < end for start, end in spans) for t, _ in spans)
    assert most > usable_cores()
