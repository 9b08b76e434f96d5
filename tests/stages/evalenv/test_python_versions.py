"""One lock per Python minor version: the interpreter's version picks the lock, and an
environment is judged against the lock of its own version."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.stages.evalenv.conftest import make_nltk_tree, make_venv, make_wheel

from passbench.core.errors import EnvironmentError_, InputError
from passbench.stages.evalenv import specs
from passbench.stages.evalenv.check import check_env
from passbench.stages.evalenv.create import create_env
from passbench.stages.evalenv.locate import locate_env
from passbench.stages.evalenv.lock import packaged_lock_path, read_lock
from passbench.stages.evalenv.metadata import EnvMetadata, read_metadata, write_metadata
from passbench.stages.evalenv.specs import EnvSpec, get_spec, minor_version

MINOR = f"{sys.version_info.major}.{sys.version_info.minor}"


def _pythons() -> list[tuple[str, str]]:
    """(path, minor) of each working interpreter of a minor version other than ours."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(8, 15)]
    candidates += [str(path) for path in Path.home().glob(".pyenv/versions/3.*/bin/python3")]
    found: dict[str, str] = {}
    for candidate in candidates:
        if candidate is None:
            continue
        # pyenv shims exist for versions that are not selected and then refuse to run
        result = subprocess.run(
            [candidate, "-c", "import platform, venv; print(platform.python_version())"],
            capture_output=True,
            text=True,
        )
        minor = minor_version(result.stdout.strip())
        if result.returncode == 0 and minor != MINOR:
            found.setdefault(minor, candidate)
    return [(path, minor) for minor, path in found.items()]


def _record(name: str, lock_file: str, sha256: str, python_version: str) -> EnvMetadata:
    return EnvMetadata(
        name=name,
        lock_file=lock_file,
        lock_sha256=sha256,
        python_version=python_version,
        created_at="2026-11-22T18:00:00+00:00",
    )


def _packaged_sha(lock_file: str) -> str:
    return read_lock(packaged_lock_path(lock_file)).sha256


def test_bigcodebench_has_a_lock_per_supported_python() -> None:
    spec = get_spec("bigcodebench")
    assert spec.python == "3.11"  # the default, used without --python
    assert spec.lock_for("3.11") == "bigcodebench-py311.txt"
    assert spec.lock_for("3.10") == "bigcodebench-py310.txt"
    assert list(spec.locks) == ["3.11", "3.10"]
    assert spec.supported_pythons == "3.10, 3.11"


@pytest.mark.parametrize("minor", ["3.9", "3.12", "3.13"])
def test_an_unsupported_python_names_the_supported_ones(minor: str) -> None:
    with pytest.raises(InputError, match=rf"no lock for Python {minor} \(supported: 3.10, 3.11\)"):
        get_spec("bigcodebench").lock_for(minor)


def test_minor_version() -> None:
    assert minor_version("3.10.13") == "3.10"
    assert minor_version("3.11.7") == "3.11"


@pytest.mark.parametrize(
    ("python_version", "lock_file"),
    [("3.11.7", "bigcodebench-py311.txt"), ("3.10.13", "bigcodebench-py310.txt")],
)
def test_an_env_is_judged_against_the_lock_of_its_own_python(
    tmp_path: Path, python_version: str, lock_file: str
) -> None:
    root = tmp_path / "env"
    make_venv(root)
    write_metadata(
        root, _record("bigcodebench", lock_file, _packaged_sha(lock_file), python_version)
    )
    assert locate_env("bigcodebench", root).python_version == python_version
    items = {item.name: item for item in check_env("bigcodebench", root, modules=False).items}
    assert items["lock"].ok and lock_file in items["lock"].detail
    assert items["python"].ok


def test_a_310_env_with_the_311_lock_hash_is_stale(tmp_path: Path) -> None:
    root = tmp_path / "env"
    make_venv(root)
    wrong = _packaged_sha("bigcodebench-py311.txt")
    write_metadata(root, _record("bigcodebench", "bigcodebench-py311.txt", wrong, "3.10.13"))
    with pytest.raises(EnvironmentError_, match=r"bigcodebench-py310\.txt for Python 3\.10"):
        locate_env("bigcodebench", root)
    items = {item.name: item for item in check_env("bigcodebench", root, modules=False).items}
    assert not items["lock"].ok
    assert "bigcodebench-py310.txt" in items["lock"].detail


def test_an_env_of_an_unsupported_python_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "env"
    make_venv(root)
    sha = _packaged_sha("bigcodebench-py311.txt")
    write_metadata(root, _record("bigcodebench", "bigcodebench-py311.txt", sha, "3.12.1"))
    with pytest.raises(EnvironmentError_, match=r"Python 3.12.1.*locks for Python 3.10, 3.11"):
        locate_env("bigcodebench", root)
    assert locate_env("bigcodebench", root, allow_stale=True).python_version == "3.12.1"
    items = {item.name: item for item in check_env("bigcodebench", root, modules=False).items}
    assert not items["python"].ok
    assert "expected one of 3.10, 3.11" in items["python"].detail


def test_create_without_python_keeps_the_version_of_an_up_to_date_env(tmp_path: Path) -> None:
    """No interpreter is looked for: the record of a 3.10 env matches the 3.10 lock."""
    root = tmp_path / "env"
    make_venv(root)
    lock_file = "bigcodebench-py310.txt"
    write_metadata(root, _record("bigcodebench", lock_file, _packaged_sha(lock_file), "3.10.13"))
    result = create_env("bigcodebench", path=root, download_nltk=False)
    assert result.status == "up-to-date"
    assert result.info.metadata.lock_file == lock_file


def test_create_refuses_an_interpreter_without_a_lock(tmp_path: Path) -> None:
    supported = get_spec("bigcodebench").locks
    unsupported = [path for path, minor in _pythons() if minor not in supported]
    if not unsupported:
        pytest.skip("no Python of an unsupported version on this machine")
    with pytest.raises(InputError, match=r"has locks only for Python 3\.10, 3\.11"):
        create_env("bigcodebench", path=tmp_path / "env", python=unsupported[0])
    assert not (tmp_path / "env").exists()


@pytest.mark.slow
def test_the_interpreter_version_picks_the_lock(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A spec with a lock for our Python and one for another: --python of the other version
    builds from its lock, and only that lock can make the env stale."""
    others = _pythons()
    if not others:
        pytest.skip("no second Python version on this machine")
    other_path, other_minor = others[0]
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "pbtwo", "1.0", "ANSWER = 1\n")
    make_wheel(wheels, "pbtwo", "2.0", "ANSWER = 2\n")
    ours, theirs = tmp_path / "ours.txt", tmp_path / "theirs.txt"
    ours.write_text("pbtwo==1.0\n")
    theirs.write_text("pbtwo==2.0\n")
    spec = EnvSpec(
        name="two",
        python=MINOR,
        lock_file=str(ours),
        modules=("pbtwo",),
        other_locks=((other_minor, str(theirs)),),
    )
    monkeypatch.setitem(specs._SPECS, "two", spec)
    root = tmp_path / "env"
    nltk = make_nltk_tree(tmp_path / "nltk", {"stopwords": "corpora"})
    pip_args = ("--no-index", "--find-links", str(wheels))

    built = create_env(
        "two",
        path=root,
        python=other_path,
        nltk_source=nltk,
        download_nltk=False,
        pip_args=pip_args,
    )
    assert built.status == "created"
    metadata = read_metadata(root)
    assert metadata is not None
    assert metadata.lock_file == str(theirs)
    assert minor_version(metadata.python_version) == other_minor
    answer = subprocess.run(
        [str(built.info.python), "-c", "import pbtwo; print(pbtwo.ANSWER)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert answer.stdout.strip() == "2"
    assert check_env("two", root).ok

    # A new default lock does not concern an env of the other version...
    ours.write_text("# revised\npbtwo==1.0\n")
    assert locate_env("two", root).lock_sha256 == read_lock(theirs).sha256
    again = create_env("two", path=root, download_nltk=False, pip_args=pip_args)
    assert again.status == "up-to-date"
    # ...a new lock of its own version does.
    theirs.write_text("# revised\npbtwo==2.0\n")
    with pytest.raises(EnvironmentError_, match="built from another lock"):
        locate_env("two", root)
