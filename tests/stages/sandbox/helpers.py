"""Helpers for the sandbox tests: programs shaped like the benchmarks' and a one-shot runner."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from passbench.core.records import ExecResult, Program
from passbench.stages.sandbox import Limits, Sandbox, SandboxConfig, open_sandbox


def _stdlib_python() -> Path:
    """The interpreter behind this venv: stdlib only, and outside the repository (the venv's
    editable install would otherwise make the repo visible inside the sandbox)."""
    for candidate in (Path(sys.base_prefix) / "bin" / "python3", Path(sys.executable)):
        if candidate.exists():
            return candidate
    return Path(sys.executable)


PYTHON = _stdlib_python()
EVALENV_PYTHON = Path(
    os.environ.get(
        "PASSBENCH_EVALENV_PYTHON",
        Path.home() / ".local/share/passbench/envs/bigcodebench/bin/python",
    )
)
# Small limits keep hostile samples cheap for a test machine.
TEST_LIMITS = Limits(memory_mb=1024, file_size_mb=16, tmp_mb=64, processes=64)

UNITTEST_TAIL = """
import unittest
class TestCases(unittest.TestCase):
    def test_one(self):
        self.assertEqual(f(1), 2)
    def test_two(self):
        self.assertEqual(f(2), 3)
"""


def unittest_program(key: str, solution: str, **fields: object) -> Program:
    """A BigCodeBench-shaped program: the solution, then tests of `f(x) == x + 1`."""
    return Program(key=key, task_id=key, source=solution + "\n" + UNITTEST_TAIL, **fields)  # type: ignore[arg-type]


def checks_program(key: str, body: str, **fields: object) -> Program:
    """A program whose single test runs `body` (indented into a test method)."""
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    header = "import unittest\nclass TestCases(unittest.TestCase):\n    def test_it(self):\n"
    source = header + indented + "\n"
    return Program(key=key, task_id=key, source=source, **fields)  # type: ignore[arg-type]


def run_one(sandbox: Sandbox, program: Program) -> ExecResult:
    results = list(sandbox.run([program]))
    assert len(results) == 1
    return results[0]


def bwrap_usable() -> bool:
    if shutil.which("bwrap") is None:
        return False
    try:
        with open_sandbox(SandboxConfig(python=PYTHON)):
            return True
    except Exception:
        return False
