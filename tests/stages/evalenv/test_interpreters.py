"""A new BigCodeBench environment is built with the official evaluator's Python (3.10) when
one is on the machine, and says so; otherwise with 3.11, saying what that costs."""

from __future__ import annotations

import glob
import shutil
import sys
from pathlib import Path

import pytest

from passbench.stages.evalenv.create import _default_python
from passbench.stages.evalenv.interpreters import find_interpreter
from passbench.stages.evalenv.metadata import EnvMetadata, write_metadata
from passbench.stages.evalenv.specs import get_spec

# a real binary (pyenv's shims on PATH are scripts that need pyenv's own set-up)
REAL_310 = next(
    iter(sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.10.*/bin/python3.10")))),
    shutil.which("python3.10", path="/usr/bin:/usr/local/bin"),
)
needs_310 = pytest.mark.skipif(REAL_310 is None, reason="no Python 3.10 on this machine")


@pytest.fixture
def bare_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH and pyenv with no interpreter in them (uv not on PATH); returns the PATH folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    return bin_dir


@needs_310
def test_found_on_path(bare_machine: Path) -> None:
    (bare_machine / "python3.10").symlink_to(str(REAL_310))
    found = find_interpreter("3.10")
    assert found is not None and found.source == "PATH"
    assert found.version.startswith("3.10.") and found.path == bare_machine / "python3.10"


@needs_310
def test_found_in_pyenv_newest_patch_first(bare_machine: Path, tmp_path: Path) -> None:
    for patch in ("3.10.2", "3.10.13"):
        folder = tmp_path / "pyenv" / "versions" / patch / "bin"
        folder.mkdir(parents=True)
        (folder / "python3.10").symlink_to(str(REAL_310))
    found = find_interpreter("3.10")
    assert found is not None and found.source == "pyenv"
    assert "/versions/3.10.13/" in str(found.path)


def test_a_binary_of_another_version_is_not_taken(bare_machine: Path) -> None:
    (bare_machine / "python3.10").symlink_to(sys.executable)  # named 3.10, is not
    if sys.version_info[:2] == (3, 10):
        pytest.skip("not applicable: passbench itself runs on 3.10")
    assert find_interpreter("3.10") is None


@needs_310
def test_a_new_environment_gets_the_official_python(bare_machine: Path, tmp_path: Path) -> None:
    (bare_machine / "python3.10").symlink_to(str(REAL_310))
    minor, interpreter, why = _default_python(get_spec("bigcodebench"), tmp_path / "env")
    assert (minor, interpreter) == ("3.10", bare_machine / "python3.10")
    assert "the official evaluator's version, with its pins (bigcodebench-py310.txt)" in why


def test_without_it_the_311_lock_and_a_message_saying_so(
    bare_machine: Path, tmp_path: Path
) -> None:
    minor, interpreter, why = _default_python(get_spec("bigcodebench"), tmp_path / "env")
    assert (minor, interpreter) == ("3.11", None)
    assert "Python 3.10, the official evaluator's, is not on this machine" in why
    assert "passbench env create bigcodebench --force" in why


@needs_310
def test_an_existing_environment_keeps_its_version(bare_machine: Path, tmp_path: Path) -> None:
    (bare_machine / "python3.10").symlink_to(str(REAL_310))
    root = tmp_path / "env"
    root.mkdir()
    write_metadata(
        root,
        EnvMetadata(
            name="bigcodebench",
            lock_file="bigcodebench-py311.txt",
            lock_sha256="0" * 64,
            python_version="3.11.7",
            created_at="2026-11-24T00:00:00+00:00",
        ),
    )
    minor, interpreter, why = _default_python(get_spec("bigcodebench"), root)
    assert (minor, interpreter) == ("3.11", None)
    assert why.startswith("keeping Python 3.11") and "--python python3.10 --force" in why
