"""A test run that skipped the sandbox tests is a failed run, unless the machine opts out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ALLOW_SKIPS_VARIABLE = "PASSBENCH_TESTS_ALLOW_ESSENTIAL_SKIPS"  # tests/conftest.py


def _pytest_without_bwrap(tmp_path: Path, allow: bool) -> subprocess.CompletedProcess[str]:
    """The isolation tests, on a PATH where bubblewrap cannot be found (as on a machine
    without it): every one of them skips."""
    env = {k: v for k, v in os.environ.items() if k != ALLOW_SKIPS_VARIABLE}
    env["PATH"] = str(tmp_path)  # no bwrap here
    if allow:
        env[ALLOW_SKIPS_VARIABLE] = "1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/stages/sandbox/test_isolation.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_skipped_isolation_tests_fail_the_run(tmp_path: Path) -> None:
    run = _pytest_without_bwrap(tmp_path, allow=False)
    assert run.returncode == 1, run.stdout
    assert "isolation or real-environment tests were skipped" in run.stdout
    assert "SKIPPED ESSENTIAL tests/stages/sandbox/test_isolation.py::" in run.stdout


def test_a_machine_that_cannot_run_them_can_opt_out(tmp_path: Path) -> None:
    run = _pytest_without_bwrap(tmp_path, allow=True)
    assert run.returncode == 0, run.stdout
    assert " skipped" in run.stdout and "SKIPPED ESSENTIAL" not in run.stdout
