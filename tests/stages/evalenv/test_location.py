"""Where environments live: --path > $PASSBENCH_ENV_DIR > the user data dir, read per call."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from passbench.stages.evalenv.location import default_nltk_source, env_path, envs_root


def test_explicit_path_wins(tmp_path: Path) -> None:
    assert env_path("bigcodebench", tmp_path / "x") == (tmp_path / "x").absolute()


def test_environment_variable_is_read_at_call_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PASSBENCH_ENV_DIR", str(tmp_path / "first"))
    assert env_path("bigcodebench") == tmp_path / "first"
    monkeypatch.setenv("PASSBENCH_ENV_DIR", str(tmp_path / "second"))
    assert env_path("bigcodebench") == tmp_path / "second"
    assert env_path("bigcodebench", tmp_path / "flag") == tmp_path / "flag"


def test_default_is_the_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSBENCH_ENV_DIR", raising=False)
    expected = Path(platformdirs.user_data_dir("passbench")) / "envs"
    assert envs_root() == expected
    assert env_path("bigcodebench") == (expected / "bigcodebench").absolute()
    assert env_path("bigcodebench", environ={"PASSBENCH_ENV_DIR": " "}) == env_path("bigcodebench")


def test_offline_nltk_source_comes_from_the_data_dir(tmp_path: Path) -> None:
    assert default_nltk_source({}) is None
    assert default_nltk_source({"PASSBENCH_DATA_DIR": str(tmp_path)}) is None  # no nltk_data/
    (tmp_path / "nltk_data").mkdir()
    assert default_nltk_source({"PASSBENCH_DATA_DIR": str(tmp_path)}) == tmp_path / "nltk_data"


def test_a_tool_environment_has_its_own_variable(tmp_path: Path) -> None:
    # PASSBENCH_ENV_DIR names the evaluation environment's folder: `env create security`
    # must never build over it (and delete it)
    environ = {"PASSBENCH_ENV_DIR": str(tmp_path / "bcb")}
    assert env_path("security", environ=environ) == (envs_root() / "security").absolute()
    environ["PASSBENCH_SECURITY_ENV_DIR"] = str(tmp_path / "tools")
    assert env_path("security", environ=environ) == tmp_path / "tools"
    assert env_path("bigcodebench", environ=environ) == tmp_path / "bcb"
