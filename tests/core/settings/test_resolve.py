"""defaults < config file < environment < flags, for every command, through one resolver."""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.core.errors import InputError
from passbench.core.settings import COMMANDS, paths_from, read_config, resolve


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "passbench.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_defaults_config_environment_flags(tmp_path: Path) -> None:
    path = write(tmp_path, "workers = 1\n[evaluate]\nworkers = 2\nsplit = 'instruct'\n")
    environ = {"PASSBENCH_WORKERS": "3"}
    assert resolve("evaluate", environ={}, config_path=None)["workers"] == 0  # default
    assert resolve("evaluate", environ={}, config_path=path)["workers"] == 2  # table > top
    assert resolve("evaluate", environ=environ, config_path=path)["workers"] == 3
    flagged = resolve("evaluate", flags={"workers": 4}, environ=environ, config_path=path)
    assert flagged["workers"] == 4 and flagged["split"] == "instruct"
    # a flag left at None counts as not given
    assert (
        resolve("evaluate", flags={"workers": None}, environ={}, config_path=path)["workers"] == 2
    )


def test_top_level_keys_reach_every_command_that_has_them(tmp_path: Path) -> None:
    path = write(tmp_path, 'benchmark = "humaneval"\ndata_dir = "data"\n[tasks]\nsubset = "full"\n')
    for command in ("evaluate", "generate", "sanitize", "syncheck", "tasks"):
        resolved = resolve(command, environ={}, config_path=path)
        assert resolved["benchmark"] == "humaneval"
        assert resolved.paths.data_dir == tmp_path / "data"  # relative to the file's folder
    assert "benchmark" not in resolve("inspect", environ={}, config_path=path).values


def test_the_config_file_in_the_working_folder_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "[inspect]\nbootstrap = 7\n")
    monkeypatch.chdir(tmp_path)
    assert resolve("inspect", environ={})["bootstrap"] == 7


def test_values_are_converted_whatever_their_source(tmp_path: Path) -> None:
    path = write(tmp_path, '[evaluate]\npass-k = "10,1"\nallow_network = true\n')
    resolved = resolve("evaluate", environ={"PASSBENCH_OFFLINE": "yes"}, config_path=path)
    assert resolved["pass_k"] == (1, 10) and resolved["allow_network"] is True
    assert resolved.paths.offline is True
    assert resolve("evaluate", flags={"pass_k": "5"}, environ={})["pass_k"] == (5,)
    path = write(tmp_path, "[evaluate]\npass_k = [1, 5]\n")
    assert resolve("evaluate", environ={}, config_path=path)["pass_k"] == (1, 5)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("PASSBENCH_WORKERS", "abc", "environment variable PASSBENCH_WORKERS: expected an integer"),
        ("PASSBENCH_WORKERS", "-1", "environment variable PASSBENCH_WORKERS: must be at least 0"),
        ("PASSBENCH_OFFLINE", "maybe", "environment variable PASSBENCH_OFFLINE: expected 1/true"),
    ],
)
def test_a_malformed_environment_value_names_the_variable(
    variable: str, value: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        resolve("evaluate", environ={variable: value})
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert caught.value.exit_code == 2


def test_only_the_command_s_variables_are_read() -> None:
    # tasks has no workers setting: a broken PASSBENCH_WORKERS does not concern it
    assert "workers" not in resolve("tasks", environ={"PASSBENCH_WORKERS": "abc"}).values
    with pytest.raises(InputError, match="PASSBENCH_OFFLINE"):
        resolve("tasks", environ={"PASSBENCH_OFFLINE": "maybe"})


def test_empty_variables_count_as_unset() -> None:
    resolved = resolve("evaluate", environ={"PASSBENCH_WORKERS": "", "PASSBENCH_DATA_DIR": " "})
    assert resolved["workers"] == 0 and resolved.paths.data_dir is None


def test_a_bad_flag_value_names_the_flag() -> None:
    with pytest.raises(InputError) as caught:
        resolve("inspect", flags={"pass_k": "1,x"}, environ={})
    assert caught.value.field == "--pass-k"
    with pytest.raises(InputError) as caught:
        resolve("compare", flags={"confidence": 1.5}, environ={})
    assert caught.value.field == "--confidence" and "less than 1" in str(caught.value)


def test_paths_from_environment(tmp_path: Path) -> None:
    paths = paths_from(
        {
            "PASSBENCH_DATA_DIR": str(tmp_path),
            "PASSBENCH_CACHE_DIR": "/c",
            "PASSBENCH_OFFLINE": "1",
            "PASSBENCH_DOWNLOAD_MIRROR": "http://m",
        }
    )
    assert paths.data_dir == tmp_path and paths.cache_dir == Path("/c")
    assert paths.offline is True and paths.mirror == "http://m"
    assert paths_from({}, data_dir="/d").data_dir == Path("/d")
    with pytest.raises(InputError, match="PASSBENCH_OFFLINE"):
        paths_from({"PASSBENCH_OFFLINE": "perhaps"})


def test_run_has_the_settings_of_generate_and_evaluate() -> None:
    keys = {setting.key for setting in COMMANDS["run"]}
    shared = {s.key for s in COMMANDS["generate"]} | {s.key for s in COMMANDS["evaluate"]}
    assert shared <= keys
    assert keys - shared == {"tries", "feedback_lines"}  # its own: multi-turn runs


def test_a_resolved_config_is_returned_for_the_model_tables(tmp_path: Path) -> None:
    path = write(tmp_path, '[models.m]\nprovider = "openai"\n')
    resolved = resolve("generate", environ={}, config_path=path)
    assert resolved.config == read_config(path)
