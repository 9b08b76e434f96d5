"""The fixed set of programs every backend must judge as the local sandbox does: ordinary ones,
and hostile ones (an infinite loop, a fork bomb, a memory bomb, the network, huge output,
killing the parent, exiting early, faking the runner's output, tampering with unittest)."""

from __future__ import annotations

from tests.stages.sandbox.helpers import checks_program, unittest_program

from passbench.core.records import Program

CONFORMANCE: dict[str, Program] = {
    "pass": unittest_program("pass", "def f(x):\n    return x + 1\n"),
    "wrong": unittest_program("wrong", "def f(x):\n    return x\n"),
    "infinite-loop": unittest_program(
        "infinite-loop", "def f(x):\n    while True: pass\n", timeout_s=2.0
    ),
    "fork-bomb": checks_program(
        "fork-bomb",
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        timeout_s=3.0,
    ),
    "memory-bomb": checks_program("memory-bomb", "x = bytearray(8 * 1024 ** 3)"),
    "exit": unittest_program("exit", "import sys\nsys.exit(0)\n"),
    "fake-output": unittest_program(
        "fake-output", "print('OK'); print('Ran 2 tests'); import os; os._exit(0)\n"
    ),
    "network": checks_program(
        "network", "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)"
    ),
    "huge-output": unittest_program(
        "huge-output", "print('x' * 20_000_000)\ndef f(x):\n    return x + 1\n"
    ),
    "kill-parent": unittest_program(
        "kill-parent",
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\ndef f(x):\n    return x + 1\n",
    ),
    "tamper-unittest": unittest_program(
        "tamper-unittest",
        "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "def f(x):\n    return 0\n",
    ),
}

#: What the local sandbox must say about them (the reference the backends are held to).
NEVER_PASS = ("wrong", "fork-bomb", "memory-bomb", "exit", "fake-output", "network")
