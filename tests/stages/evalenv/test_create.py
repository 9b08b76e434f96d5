"""Building, finding and re-using environments, on a tiny spec that installs offline."""

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
from passbench.stages.evalenv.create import create_env, find_python
from passbench.stages.evalenv.locate import locate_env
from passbench.stages.evalenv.lock import read_lock
from passbench.stages.evalenv.manifest import verify_manifest
from passbench.stages.evalenv.metadata import EnvMetadata, read_metadata, write_metadata
from passbench.stages.evalenv.specs import EnvSpec

MINOR = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> EnvSpec:
    """A registered spec whose lock pins one local wheel."""
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "pbtiny", "1.0", "ANSWER = 42\n")
    lock = tmp_path / "tiny.txt"
    lock.write_text("# tiny\npbtiny==1.0\n")
    spec = EnvSpec(
        name="tiny",
        python=MINOR,
        lock_file=str(lock),
        modules=("pbtiny", "json"),
        nltk_packages=("stopwords", "punkt"),
    )
    monkeypatch.setitem(specs._SPECS, "tiny", spec)
    return spec


def _record(spec: EnvSpec, sha256: str) -> EnvMetadata:
    return EnvMetadata(
        name=spec.name,
        lock_file=spec.lock_file,
        lock_sha256=sha256,
        python_version=f"{MINOR}.0",
        created_at="2026-11-22T16:00:00+00:00",
    )


@pytest.mark.slow
def test_create_check_reuse_and_rebuild(tiny: EnvSpec, tmp_path: Path) -> None:
    root = tmp_path / "env"
    nltk = make_nltk_tree(tmp_path / "nltk_src", {"stopwords": "corpora"})
    pip_args = ("--no-index", "--find-links", str(tmp_path / "wheels"))

    first = create_env("tiny", path=root, nltk_source=nltk, download_nltk=False, pip_args=pip_args)
    assert first.status == "created"
    assert first.nltk.missing == ["punkt"]
    answer = subprocess.run(
        [str(first.info.python), "-c", "import pbtiny; print(pbtiny.ANSWER)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert answer.stdout.strip() == "42"
    lock = read_lock(Path(tiny.lock_file))
    metadata = read_metadata(root)
    assert metadata is not None
    assert metadata.lock_sha256 == lock.sha256 == first.info.lock_sha256
    assert metadata.python_version.startswith(MINOR + ".")
    assert metadata.nltk_packages == {"stopwords": f"copied from {nltk}", "punkt": "missing"}
    report = check_env("tiny", root)
    assert [(item.kind, item.name) for item in report.problems] == [("nltk", "punkt")]
    built = verify_manifest(root, full=True)  # create recorded every file it installed
    assert built.intact and not built.recorded and built.files > 10

    # Same lock: nothing is rebuilt (a marker file survives), and it is quick.
    (root / "marker").write_text("kept")
    second = create_env("tiny", path=root, download_nltk=False, pip_args=pip_args)
    assert second.status == "up-to-date"
    assert (root / "marker").exists()
    assert verify_manifest(root).change == "marker was added"

    # Punkt appears in a local folder later: an up-to-date env picks it up without a rebuild.
    make_nltk_tree(nltk, {"punkt": "tokenizers"})
    third = create_env("tiny", path=root, nltk_source=nltk, download_nltk=False)
    assert third.status == "up-to-date"
    assert third.nltk.missing == []
    assert third.info.metadata.nltk_packages["punkt"] == f"copied from {nltk}"
    assert check_env("tiny", root).ok
    assert verify_manifest(root).intact  # the top-up recorded what it changed

    # A new lock makes the env stale: locate refuses it, create rebuilds it from scratch.
    Path(tiny.lock_file).write_text("# tiny, revised\npbtiny==1.0\n")
    with pytest.raises(EnvironmentError_, match="built from another lock"):
        locate_env("tiny", root)
    assert locate_env("tiny", root, allow_stale=True).root == root
    rebuilt = create_env(
        "tiny", path=root, nltk_source=nltk, download_nltk=False, pip_args=pip_args
    )
    assert rebuilt.status == "created"
    assert not (root / "marker").exists()
    assert locate_env("tiny", root).lock_sha256 == read_lock(Path(tiny.lock_file)).sha256


def test_up_to_date_env_is_not_touched(tiny: EnvSpec, tmp_path: Path) -> None:
    """With a matching record, create returns at once: this venv has no pip to install with."""
    root = tmp_path / "env"
    make_venv(root)
    write_metadata(root, _record(tiny, read_lock(Path(tiny.lock_file)).sha256))
    result = create_env("tiny", path=root, download_nltk=False)
    assert result.status == "up-to-date"
    assert result.info.python == root / "bin" / "python"


def test_refuses_to_replace_a_folder_that_is_not_a_venv(tiny: EnvSpec, tmp_path: Path) -> None:
    root = tmp_path / "precious"
    root.mkdir()
    (root / "thesis.tex").write_text("years of work")
    with pytest.raises(InputError, match="refusing to replace it"):
        create_env("tiny", path=root, download_nltk=False)
    assert (root / "thesis.tex").read_text() == "years of work"


def test_locate_explains_how_to_fix_each_problem(tiny: EnvSpec, tmp_path: Path) -> None:
    root = tmp_path / "env"
    with pytest.raises(EnvironmentError_, match="run `passbench env create tiny --path "):
        locate_env("tiny", root)
    make_venv(root)
    with pytest.raises(EnvironmentError_, match="incomplete"):
        locate_env("tiny", root)
    write_metadata(root, _record(tiny, "0" * 64))
    with pytest.raises(EnvironmentError_, match="built from another lock"):
        locate_env("tiny", root)
    write_metadata(root, _record(tiny, read_lock(Path(tiny.lock_file)).sha256))
    info = locate_env("tiny", root)
    assert info.nltk_data == root / "nltk_data"
    environment = info.sample_environment()
    assert environment["NLTK_DATA"] == str(root / "nltk_data")
    assert environment["PATH"].startswith(f"{root / 'bin'}:")


def test_default_location_follows_the_environment_variable(
    tiny: EnvSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASSBENCH_ENV_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(EnvironmentError_, match="run `passbench env create tiny`"):
        locate_env("tiny")
    root = tmp_path / "elsewhere"
    make_venv(root)
    write_metadata(root, _record(tiny, read_lock(Path(tiny.lock_file)).sha256))
    assert locate_env("tiny").root == root


def test_find_python_rejects_another_minor_version(tiny: EnvSpec) -> None:
    candidates = [shutil.which(f"python3.{minor}") for minor in range(8, 15)]
    candidates += [str(path) for path in Path.home().glob(".pyenv/versions/3.*/bin/python3")]
    others = [
        found
        for found in candidates
        if found is not None
        # pyenv shims exist for versions that are not selected and then refuse to run
        and subprocess.run([found, "-c", "pass"], capture_output=True).returncode == 0
        and not subprocess.run(
            [found, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
        ).stdout.startswith(MINOR + ".")
    ]
    if not others:
        pytest.skip("no second Python version on PATH")
    with pytest.raises(InputError, match=f"has locks only for Python {MINOR}$"):
        find_python(tiny, others[0])


def test_find_python_prefers_the_running_interpreter_of_the_right_version(
    tiny: EnvSpec,
) -> None:
    assert find_python(tiny) == Path(sys.executable)
