"""Pure parts of the local backend: order, concurrency, verdict classification."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from passbench.core.records import ErrorCategory, Program
from passbench.stages.sandbox import Limits, SandboxConfig, open_sandbox
from passbench.stages.sandbox.base import expected_to_wait
from passbench.stages.sandbox.host.local import (
    LocalSandbox,
    auto_concurrency,
    long_computing,
    pick,
    schedule,
    usable_cores,
    waiting_room,
)
from passbench.stages.sandbox.verdict import classify

from .helpers import PYTHON, TEST_LIMITS, checks_program


def _program(key: str, expected: float | None) -> Program:
    return Program(key=key, task_id=key, source="", expected_duration_s=expected)


def test_slowest_first_unknown_keep_their_order() -> None:
    programs = [_program("a", None), _program("b", 5.0), _program("c", None), _program("d", 9.0)]
    assert [p.key for p in schedule(programs)] == ["d", "b", "a", "c"]


def _timed(key: str, duration: float, share: float | None) -> Program:
    return Program(
        key=key, task_id=key, source="", expected_duration_s=duration, expected_cpu_share=share
    )


WAITS = _timed("waits", 100.0, 0.05)  # BigCodeBench/461's test_case_6: polls a sleeping script
KERAS_A = _timed("keras-a", 70.0, 1.0)  # 417, 289: train keras models
KERAS_B = _timed("keras-b", 60.0, 1.0)
SEABORN = _timed("seaborn", 55.0, 1.0)  # 102
SHORT = _timed("short", 3.0, 1.0)


def test_a_third_long_computing_program_waits_for_the_cores_a_shorter_one_goes_ahead() -> None:
    pending = schedule([SHORT, SEABORN])
    # the two running leave no core: even when their measured use dips for a moment (the
    # cores look free), the third long one would stretch all three
    assert pick(pending, [KERAS_A, KERAS_B], cores=2, cores_busy=False) == 1
    assert pick(pending, [KERAS_A, WAITS], cores=2, cores_busy=False) == 0
    # with nothing else to start, nothing starts
    assert pick([SEABORN], [KERAS_A, KERAS_B], cores=2, cores_busy=False) is None
    # one program alone may use every core
    assert pick([_timed("wide", 60.0, 4.0)], [], cores=2, cores_busy=False) == 0


def test_busy_cores_take_only_programs_known_to_wait() -> None:
    pending = schedule([SEABORN, SHORT, _timed("unknown", 30.0, None), _timed("part", 10.0, 0.1)])
    assert [p.key for p in pending] == ["seaborn", "unknown", "part", "short"]
    assert pick(pending, [KERAS_A, KERAS_B], cores=2, cores_busy=True) == 2
    others = [p for p in pending if p.key != "part"]
    assert pick(others, [KERAS_A, KERAS_B], cores=2, cores_busy=True) is None
    # programs without a CPU time (samples; timings from before CPU times) keep the old rule
    assert pick(pending[1:], [KERAS_A, KERAS_B], cores=2, cores_busy=False) == 0
    assert not long_computing(SHORT) and long_computing(SEABORN) and expected_to_wait(WAITS)


def _simulate(
    programs: list[Program], cores: int, slots: int, room: int = 0
) -> dict[str, tuple[float, float]]:
    """Start and end of each program when each takes its expected duration and the backend
    admits by `pick` (the cores busy when `cores` running programs compute), with `room`
    slots for programs known to wait beyond the `slots`."""
    pending = schedule(programs)
    running: dict[str, tuple[Program, float]] = {}
    spans: dict[str, tuple[float, float]] = {}
    now = 0.0
    while pending or running:
        while pending and len(running) < slots + room:
            computing = sum(not expected_to_wait(p) for p, _ in running.values())
            chosen = pick(
                pending,
                [p for p, _ in running.values()],
                cores,
                computing >= cores,
                concurrency=slots,
                waiting_room=room,
            )
            if chosen is None:
                break
            program = pending.pop(chosen)
            running[program.key] = (program, now + (program.expected_duration_s or 0.0))
            spans[program.key] = (now, running[program.key][1])
        key = min(running, key=lambda k: running[k][1])
        now = running.pop(key)[1]
    return spans


def test_waiting_long_work_starts_first_and_long_computing_work_is_spread() -> None:
    parts = [_timed(f"part{i}", 10.0, 0.1) for i in range(4)]  # another task's waiting tests
    shorts = [_timed(f"short{i}", 3.0, 1.0) for i in range(20)]
    spans = _simulate([*shorts, SEABORN, KERAS_B, *parts, KERAS_A, WAITS], cores=2, slots=4)
    assert spans["waits"][0] == 0.0
    assert spans["keras-a"][0] == spans["keras-b"][0] == 0.0  # the longest first
    # the third long computing program starts when one of the first two ends, not with them
    assert spans["seaborn"][0] == min(spans["keras-a"][1], spans["keras-b"][1])
    # waiting work fills the slots the busy cores leave: while both keras programs compute,
    # and before the short computing work
    assert max(spans[p.key][0] for p in parts) < spans["keras-b"][1]
    assert max(spans[p.key][0] for p in parts) < min(spans[p.key][0] for p in shorts)
    long_ones = ("keras-a", "keras-b", "seaborn")
    for moment in {start for start, _ in spans.values()}:
        at_once = sum(spans[k][0] <= moment < spans[k][1] for k in long_ones)
        assert at_once <= 2
    assert len(spans) == 28


def test_waiting_test_methods_get_slots_of_their_own_and_leave_the_cores_busy() -> None:
    # BigCodeBench's full ground truth on 2 cores: 461's 100 s test method and dozens of
    # 10 s waiting test methods of other tasks; longest first, they used to take every slot
    # while the short computing tasks queued behind them and the cores sat idle
    parts = [_timed(f"part{i}", 10.0, 0.1) for i in range(12)]
    shorts = [_timed(f"short{i}", 3.0, 1.0) for i in range(60)]
    programs = [WAITS, *parts, *shorts]
    with_room = _simulate(programs, cores=2, slots=4, room=4)
    assert min(with_room[p.key][0] for p in shorts) == 0.0
    # the computing work runs two at a time from the start: everything ends with 461's test
    assert max(end for _, end in with_room.values()) == WAITS.expected_duration_s
    assert max(with_room[p.key][1] for p in parts) <= 40.0  # three room slots beside 461's
    without = _simulate(programs, cores=2, slots=4)  # workers set by hand: no room
    assert min(without[p.key][0] for p in shorts) >= 10.0
    assert max(end for _, end in without.values()) > 120.0


def test_waiting_room_only_for_measured_waits_and_automatic_workers() -> None:
    programs = [WAITS, SHORT, KERAS_A, _timed("unknown", 30.0, None)]
    assert waiting_room(programs, concurrency=4, workers=0) == 1
    assert waiting_room([_timed(f"p{i}", 10.0, 0.1) for i in range(9)], 4, 0) == 4
    assert waiting_room(programs, concurrency=4, workers=4) == 0
    # the room full: a waiting program does not take a general slot while others are pending
    running = [_timed(f"r{i}", 10.0, 0.1) for i in range(4)]
    pending = schedule([_timed("part", 10.0, 0.1), SHORT])
    assert pick(pending, running, cores=2, cores_busy=False, concurrency=4, waiting_room=4) == 1
    # at the end of the run, with only waiting programs left, it does
    assert pick(pending[:1], running, 2, False, concurrency=4, waiting_room=4) == 0
    # the general slots are counted without the room's programs
    full = [*running, SHORT, SHORT, SHORT, SHORT]
    assert pick([SHORT], full, cores=8, cores_busy=False, concurrency=4, waiting_room=4) is None


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


def _spans(results: list[Any]) -> list[tuple[float, float]]:
    spans = []
    for result in results:
        assert result.status == "pass"
        words = result.stdout_tail.split()
        spans.append((float(words[words.index("start") + 1]), float(words[words.index("end") + 1])))
    return spans


@pytest.mark.slow
def test_programs_measured_waiting_run_beyond_the_automatic_concurrency() -> None:
    body = "import time\nprint('start', time.time())\ntime.sleep(2)\nprint('end', time.time())"
    config = SandboxConfig(python=PYTHON, limits=TEST_LIMITS)  # workers: automatic
    with open_sandbox(config, backend="local-rlimit", warn=lambda m: None) as sandbox:
        assert isinstance(sandbox, LocalSandbox)
        count = sandbox.concurrency + 2
        waiting = [
            checks_program(f"wait{i}", body, expected_duration_s=2.0, expected_cpu_share=0.01)
            for i in range(count)
        ]
        spans = _spans(list(sandbox.run(waiting)))
    most = max(sum(start <= t < end for start, end in spans) for t, _ in spans)
    assert most == count  # every one at once: the concurrency's slots and the waiting room's
