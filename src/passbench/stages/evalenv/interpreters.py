"""Finding an interpreter of a given Python version on this machine: the official evaluator's
version is preferred for a new evaluation environment when one is installed anywhere usual.

Looked for, in order: the interpreter running passbench, `pythonX.Y` on PATH, pyenv's
versions (`$PYENV_ROOT`, default `~/.pyenv`, newest patch first), and `uv python find X.Y`
(uv's managed or discovered interpreters). Each candidate is run once to confirm its version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from passbench.stages.evalenv.specs import minor_version


@dataclass(frozen=True)
class FoundPython:
    path: Path
    version: str  # "3.10.13"
    source: str  # "PATH", "pyenv", "uv", "this Python": for the message that says so


def find_interpreter(minor: str) -> FoundPython | None:
    """An interpreter of Python `minor` ("3.10") that runs, or None."""
    for path, source in _candidates(minor):
        version = _version_of(path)
        if version is not None and minor_version(version) == minor:
            return FoundPython(path, version, source)
    return None


def _candidates(minor: str) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    if f"{sys.version_info.major}.{sys.version_info.minor}" == minor:
        found.append((Path(sys.executable), "this Python"))
    on_path = shutil.which(f"python{minor}")
    if on_path is not None:
        found.append((Path(on_path), "PATH"))
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    versions = sorted((pyenv_root / "versions").glob(f"{minor}.*"), key=_patch_key, reverse=True)
    found += [
        (folder / "bin" / f"python{minor}", "pyenv")
        for folder in versions
        if (folder / "bin" / f"python{minor}").is_file()
    ]
    uv = shutil.which("uv")
    if uv is not None:
        try:
            answer = subprocess.run(
                [uv, "python", "find", "--no-project", minor],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                env={"PATH": os.environ.get("PATH", ""), "HOME": str(Path.home())},
            )
        except (OSError, subprocess.TimeoutExpired):
            answer = None
        if answer is not None and answer.returncode == 0 and answer.stdout.strip():
            found.append((Path(answer.stdout.strip().splitlines()[-1]), "uv"))
    return found


def _patch_key(folder: Path) -> tuple[int, ...]:
    parts = folder.name.split(".")
    return tuple(int(part) if part.isdigit() else -1 for part in parts)


def _version_of(python: Path) -> str | None:
    """The interpreter's full version, run with nothing from the host's environment."""
    try:
        answer = subprocess.run(
            [str(python), "-I", "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return answer.stdout.strip() if answer.returncode == 0 else None
