"""`passbench env create` / `info` on an environment that is already up to date."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from tests.stages.evalenv.conftest import make_venv

from passbench.apps.cli import cli
from passbench.stages.evalenv.lock import packaged_lock_path, read_lock
from passbench.stages.evalenv.metadata import EnvMetadata, write_metadata


def _fake_complete_env(root: Path) -> str:
    """A real venv whose record matches the shipped lock (nothing installed in it)."""
    make_venv(root)
    sha256 = read_lock(packaged_lock_path("bigcodebench-py311.txt")).sha256
    write_metadata(
        root,
        EnvMetadata(
            name="bigcodebench",
            lock_file="bigcodebench-py311.txt",
            lock_sha256=sha256,
            python_version="3.11.7",
            created_at="2026-11-22T16:00:00+00:00",
        ),
    )
    return sha256


def test_create_on_an_up_to_date_env_does_nothing(tmp_path: Path) -> None:
    root = tmp_path / "env"
    sha256 = _fake_complete_env(root)
    result = CliRunner().invoke(
        cli, ["env", "create", "bigcodebench", "--path", str(root), "--no-download"]
    )
    assert result.exit_code == 0, result.output
    assert "up to date" in result.output
    assert sha256[:12] in result.output
    assert result.output.strip().splitlines()[-1] == str(root / "bin" / "python")


def test_info_prints_the_record(tmp_path: Path) -> None:
    root = tmp_path / "env"
    sha256 = _fake_complete_env(root)
    result = CliRunner().invoke(cli, ["env", "info", "--path", str(root)])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["python"] == str(root / "bin" / "python")
    assert record["metadata"]["lock_sha256"] == sha256


def test_info_on_a_missing_env_says_what_to_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["env", "info", "--path", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert "passbench env create bigcodebench" in str(result.exception)


def test_offline_create_stops_before_building_when_nltk_data_is_missing(tmp_path: Path) -> None:
    root = tmp_path / "env"
    result = CliRunner().invoke(
        cli,
        ["env", "create", "bigcodebench", "--path", str(root)],
        env={"PASSBENCH_OFFLINE": "1", "PASSBENCH_DATA_DIR": str(tmp_path / "nodata")},
    )
    assert result.exit_code == 1
    message = str(result.exception)
    assert message.startswith("NLTK data for bigcodebench not found: ")
    assert f"(looked in {root}/nltk_data)" in message and "PASSBENCH_OFFLINE" in message
    assert not root.exists()


def test_offline_create_copies_nltk_data_from_the_data_folder(tmp_path: Path) -> None:
    """Offline, an up-to-date environment takes NLTK data from DATA_DIR/nltk_data; nothing
    is downloaded and no error is raised."""
    from passbench.stages.evalenv.specs import get_spec

    root = tmp_path / "env"
    _fake_complete_env(root)
    source = tmp_path / "data" / "nltk_data"
    for package in get_spec("bigcodebench").nltk_packages:
        (source / "corpora" / package).mkdir(parents=True)
    result = CliRunner().invoke(
        cli,
        ["env", "create", "bigcodebench", "--path", str(root)],
        env={"PASSBENCH_OFFLINE": "1", "PASSBENCH_DATA_DIR": str(tmp_path / "data")},
    )
    assert result.exit_code == 0, result.output
    assert "NLTK data missing" not in result.output
    for package in get_spec("bigcodebench").nltk_packages:
        assert (root / "nltk_data" / "corpora" / package).is_dir()
