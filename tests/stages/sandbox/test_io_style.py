"""io programs in the real sandbox: the candidate gets inputs, the worker enforces each input's
limit on its own clock, and records reach the host even when the candidate is killed."""

from __future__ import annotations

import json
from typing import Any

from passbench.core.records import ExecResult, IOSpec, Program
from passbench.stages.sandbox import Sandbox
from passbench.stages.sandbox.inside import _values

from .helpers import run_one


def io_program(
    key: str,
    source: str,
    inputs: list[list[Any]],
    *,
    limits: float | list[float] = 1.0,
    cap_s: float = 20.0,
    want: tuple[int, ...] = (),
) -> Program:
    per_input = limits if isinstance(limits, list) else [limits] * len(inputs)
    return Program(
        key=key,
        task_id=key,
        source=source,
        style="io",
        timeout_s=cap_s,
        io=IOSpec(
            entry_point="f",
            inputs_json=json.dumps([_values.to_tagged(args) for args in inputs]),
            time_limits=tuple(per_input),
            want_values=want,
        ),
    )


def outputs(result: ExecResult) -> list[Any]:
    assert result.outputs is not None
    found = []
    for record in result.outputs["records"]:
        if record["kind"] == "output":
            found.append(_values.from_tagged(record["value"]) if "value" in record else record)
        else:
            found.append(record["exc_type"])
    return found


def test_the_candidate_answers_each_input(any_sandbox: Sandbox) -> None:
    source = "def f(x, y=1):\n    return {'sum': x + y, 'items': (x, [y])}\n"
    result = run_one(any_sandbox, io_program("io-ok", source, [[1], [2, 3]]))
    assert outputs(result) == [{"sum": 2, "items": (1, [1])}, {"sum": 5, "items": (2, [3])}]
    assert result.outputs is not None and not result.outputs["cap_hit"]


def test_inputs_arrive_as_the_reference_would_get_them(any_sandbox: Sandbox) -> None:
    source = "def f(x):\n    return type(x).__name__\n"
    inputs = [[{"a": 1}], [(1, 2)], [{1, 2}], [float("inf")], [10**40]]
    assert outputs(run_one(any_sandbox, io_program("io-types", source, inputs))) == [
        "dict",
        "tuple",
        "set",
        "float",
        "int",
    ]


def test_an_input_over_its_limit_is_killed_by_the_worker(any_sandbox: Sandbox) -> None:
    # ignoring SIGALRM and disarming timers does not help: the limit is the worker's
    source = (
        "import signal, time\n"
        "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "def f(x):\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "    if x == 2:\n"
        "        sum(range(10**11))  # busy in C, never returns to Python\n"
        "    return x\n"
    )
    result = run_one(any_sandbox, io_program("io-slow", source, [[0], [1], [2], [3]], limits=0.5))
    assert result.outputs is not None and result.outputs["input_timeout"] == 2
    assert outputs(result) == [0, 1]  # what it answered before survives the kill
    assert result.wall_s < 5


def test_a_slow_input_within_its_own_limit_passes(any_sandbox: Sandbox) -> None:
    source = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
    program = io_program("io-limits", source, [[0.0], [0.6]], limits=[0.2, 2.0])
    result = run_one(any_sandbox, program)
    assert outputs(result) == [0.0, 0.6]
    assert result.outputs is not None and result.outputs["input_timeout"] is None


def test_the_whole_program_limit(any_sandbox: Sandbox) -> None:
    source = "while True:\n    pass\n"
    result = run_one(any_sandbox, io_program("io-cap", source, [[1]], limits=100, cap_s=1.0))
    assert result.outputs is not None and result.outputs["cap_hit"]
    assert outputs(result) == []


def test_loading_errors_and_exceptions(any_sandbox: Sandbox) -> None:
    broken = run_one(any_sandbox, io_program("io-syntax", "def f(x) return x\n", [[1]]))
    assert broken.outputs is not None
    assert broken.outputs["exec_error"]["exc_type"] == "SyntaxError"
    missing = run_one(any_sandbox, io_program("io-missing", "def g(x):\n    return x\n", [[1]]))
    assert missing.outputs is not None and missing.outputs["exec_error"]["exc_type"] == "KeyError"
    raising = run_one(
        any_sandbox, io_program("io-raise", "def f(x):\n    return 1 // x\n", [[1], [0], [2]])
    )
    assert outputs(raising) == [1, "ZeroDivisionError"]  # the first exception ends the program


def test_evalplus_reliability_guard(any_sandbox: Sandbox) -> None:
    # EvalPlus sets open, os.remove, subprocess.Popen, ... to None: calling them fails there
    source = "import os\ndef f(x):\n    return open('/etc/hostname').read()\n"
    assert outputs(run_one(any_sandbox, io_program("io-open", source, [[1]]))) == ["TypeError"]
    source = "import subprocess\ndef f(x):\n    return subprocess.run(['true']).returncode\n"
    assert outputs(run_one(any_sandbox, io_program("io-popen", source, [[1]]))) == ["TypeError"]


def test_large_outputs_travel_as_digests_unless_wanted(any_sandbox: Sandbox) -> None:
    source = "def f(n):\n    return [0.5] * n\n"
    result = run_one(any_sandbox, io_program("io-big", source, [[10], [100_000]], want=(1,)))
    small, large = result.outputs["records"] if result.outputs else ([], [])
    assert small["value"] == [0.5] * 10
    assert _values.from_tagged(large["value"]) == [0.5] * 100_000  # wanted: sent whole
    unwanted = run_one(any_sandbox, io_program("io-big2", source, [[100_000]]))
    assert unwanted.outputs is not None
    record = unwanted.outputs["records"][0]
    assert "value" not in record and record["digest"] == _values.equality_digest([0.5] * 100_000)[0]


def test_a_candidate_cannot_write_records_for_itself(any_sandbox: Sandbox) -> None:
    # the shared memory is reachable from the candidate's process: what it writes there is
    # at best a record of an output it could have returned; garbage makes the report unreadable
    source = (
        "import gc, mmap, os\n"
        "def f(x):\n"
        "    for obj in gc.get_objects():\n"
        "        if isinstance(obj, mmap.mmap):\n"
        "            obj[64:80] = b'\\xff' * 16\n"
        "            obj[24:32] = (16).to_bytes(8, 'little')\n"
        "    os._exit(0)\n"
    )
    result = run_one(any_sandbox, io_program("io-scribble", source, [[1]]))
    assert result.outputs is not None and result.outputs["protocol_error"]
