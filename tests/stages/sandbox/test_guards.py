"""The official reliability guards, kept in one module (inside/_guards.py): each does what its
evaluator's does to the process, and an unknown name is refused. Each runs in a fresh
interpreter, since a guard changes the process it runs in for good."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from passbench.stages.sandbox.inside import _guards

INSIDE = Path(_guards.__file__).parent

PROBE = """
import builtins, os, shutil, subprocess, sys
sys.path.insert(0, {inside!r})
import _guards
_guards.apply({guard!r})
print(builtins.exit is None, builtins.open is None, os.unlink is None,
      subprocess.Popen is None, os.environ.get("TZ"), sys.modules.get("psutil", 0) is None)
"""


def _probe(guard: str) -> str:
    # -I: the guard module is loaded from its folder, as the runner loads it in the sandbox
    code = PROBE.format(inside=str(INSIDE), guard=guard)
    env = {name: value for name, value in os.environ.items() if name != "TZ"}
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("guard", "seen"),
    [
        # exit gone, open kept, os/subprocess kept, UTC, psutil importable
        ("bigcodebench", "True False False False UTC False"),
        ("script", "True False False False UTC False"),
        # EvalPlus: exit and open gone, os and subprocess functions gone, psutil blocked
        ("evalplus", "True True True True None True"),
        # LiveCodeBench: EvalPlus's, but exit and open stay
        ("lcb", "False False True True None True"),
    ],
)
def test_each_guard_does_what_its_evaluator_does(guard: str, seen: str) -> None:
    assert _probe(guard) == seen


def test_an_unknown_guard_is_refused() -> None:
    with pytest.raises(ValueError, match="no reliability guard 'strict'"):
        _guards.apply("strict")
