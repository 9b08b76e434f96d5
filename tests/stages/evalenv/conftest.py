"""Fixtures for the evaluation-environment tests: real virtual environments in tmp, a tiny
wheel for offline installs, and the shared benchmark data folder."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

#: Where the user's (or CI's) real environments are, before the autouse fixture hides them.
USER_ENV_DIR = os.environ.get("PASSBENCH_ENV_DIR")


# data_dir: tests/conftest.py's, a session fixture, so it reads PASSBENCH_DATA_DIR before the
# autouse fixture below hides it (a function-scoped copy here read it after, and missed it).


@pytest.fixture(autouse=True)
def isolated_locations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may touch the user's real environments or data folder by accident."""
    monkeypatch.setenv("PASSBENCH_ENV_DIR", str(tmp_path / "default-env"))
    monkeypatch.delenv("PASSBENCH_DATA_DIR", raising=False)


def make_venv(root: Path, *, with_pip: bool = False) -> Path:
    """A real, empty virtual environment of the running interpreter; returns its python."""
    args = [sys.executable, "-m", "venv", str(root)]
    if not with_pip:
        args.insert(3, "--without-pip")
    subprocess.run(args, check=True, capture_output=True)
    return root / "bin" / "python"


def make_wheel(folder: Path, name: str, version: str, module_source: str) -> Path:
    """Write a minimal pure-Python wheel (one module) that pip installs without a network."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": module_source.encode(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record_lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record_lines.append(f"{path},sha256={digest},{len(data)}")
    record_lines.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record_lines) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def make_nltk_tree(root: Path, packages: dict[str, str]) -> Path:
    """An NLTK data folder: package -> category; zips for corpora, folders for the rest."""
    for package, category in packages.items():
        folder = root / category
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{package}.xml").write_text(f'<package id="{package}"/>\n')
        if category == "corpora":
            with zipfile.ZipFile(folder / f"{package}.zip", "w") as archive:
                archive.writestr(f"{package}/README", "test data\n")
        else:
            (folder / package).mkdir()
            (folder / package / "README").write_text("test data\n")
    return root
