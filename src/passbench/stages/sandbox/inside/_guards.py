"""The official evaluators' `reliability_guard`s, in one place, applied in a sample's child just
before its code runs. This file runs INSIDE the sandbox: standard library only, no passbench
imports, Python 3.8+.

Each official guard also sets resource limits; here the worker sets those when it forks, so only
what the guard changes in the process stays. A candidate that calls what a guard disables
fails there, so it fails here:

    bigcodebench  bigcodebench/eval/utils.py (unittest programs): UTC, one OpenMP thread,
                  TensorFlow's logging quiet, faulthandler off, exit and quit gone, and
                  matplotlib.pyplot imported with every figure closed
    script        the same without pyplot (HumanEval's `check()` programs)
    evalplus      evalplus/eval/utils.py (io programs): exit, quit, help and open gone, the
                  os / shutil / subprocess functions that change the system set to None, and
                  ipdb, joblib, resource, psutil, tkinter made unimportable
    lcb           LiveCodeBench's (lcb_runner/evaluation/testing_util.py): EvalPlus's, except
                  that `exit` and `open` stay (its stdin harness patches `open`)
"""

from __future__ import annotations

import builtins
import faulthandler
import importlib
import os
import sys
import time
from collections.abc import Collection

GUARDS = ("bigcodebench", "script", "evalplus", "lcb")

# what EvalPlus's and LiveCodeBench's guards set to None in `os`
_OS_DISABLED = (
    "kill",
    "system",
    "putenv",
    "remove",
    "removedirs",
    "rmdir",
    "fchdir",
    "setuid",
    "fork",
    "forkpty",
    "killpg",
    "rename",
    "renames",
    "truncate",
    "replace",
    "unlink",
    "fchmod",
    "fchown",
    "chmod",
    "chown",
    "chroot",
    "lchflags",
    "lchmod",
    "lchown",
    "getcwd",
    "chdir",
)
_MODULES_DISABLED = ("ipdb", "joblib", "resource", "psutil", "tkinter")


def apply(guard: str, unimportable: Collection[str] = ()) -> None:
    """Apply the official guard named `guard` (one of GUARDS) to this process. `unimportable`:
    modules already known not to import here (pyplot is then not tried again)."""
    if guard in ("bigcodebench", "script"):
        _bigcodebench(import_pyplot=guard == "bigcodebench", unimportable=unimportable)
    elif guard in ("evalplus", "lcb"):
        _evalplus(keep_exit_and_open=guard == "lcb")
    else:
        raise ValueError(f"no reliability guard {guard!r} (known: {', '.join(GUARDS)})")


def _bigcodebench(import_pyplot: bool, unimportable: Collection[str]) -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    faulthandler.disable()
    builtins.exit = None  # type: ignore[assignment]
    builtins.quit = None  # type: ignore[assignment]
    if import_pyplot and "matplotlib.pyplot" not in unimportable:
        # The official evaluator always imports pyplot here; an environment without matplotlib
        # (a stdlib-only test interpreter) simply skips it.
        try:
            plt = importlib.import_module("matplotlib.pyplot")
        except ImportError:
            return
        plt.close("all")


def _evalplus(keep_exit_and_open: bool) -> None:
    faulthandler.disable()
    if not keep_exit_and_open:
        builtins.exit = None  # type: ignore[assignment]
    builtins.quit = None  # type: ignore[assignment]
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in _OS_DISABLED:
        setattr(os, name, None)
    if not keep_exit_and_open:
        builtins.open = None  # type: ignore[assignment]
    import shutil
    import subprocess

    shutil.rmtree = None  # type: ignore[assignment]
    shutil.move = None  # type: ignore[assignment]
    shutil.chown = None  # type: ignore[assignment]
    subprocess.Popen = None  # type: ignore[assignment,misc]
    builtins.help = None  # type: ignore[assignment]
    for module in _MODULES_DISABLED:
        sys.modules[module] = None  # type: ignore[assignment]
