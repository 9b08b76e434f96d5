"""The config file is checked whole: unknown keys and bad values name the file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.core.errors import InputError
from passbench.core.settings import check_config, find_config, read_config


def load(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "passbench.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("[evaluate]\nworkers = 2\nwrokers = 3\n", 3, "evaluate.wrokers", "unknown setting for"),
        ("offline = true\ncolour = 'red'\n", 2, "colour", "unknown setting"),
        ("[evalute]\nworkers = 2\n", 1, "evalute", "unknown table"),
        ("evaluate = 3\n", 1, "evaluate", "must be a table"),
        ("[inspect]\nbootstrap = 'many'\n", 2, "inspect.bootstrap", "expected an integer"),
        ("[evaluate]\nworkers = -2\n", 2, "evaluate.workers", "must be at least 0"),
        ("[compare]\nrule = 'all'\n", 2, "compare.rule", "expected one of majority, any"),
        ("offline = 'yes'\n", 1, "offline", "expected true or false"),
        ("[tasks]\nworkers = 2\n", 2, "tasks.workers", "unknown setting for `passbench tasks`"),
        ("models = 1\n", 1, "models", "must be a table"),
        ("[evaluate]\nruns = 0\n", 2, "evaluate.runs", "must be at least 1"),
        ("epochs = 0\n", 1, "epochs", "must be at least 1"),
        ("[run]\nepochs = 'five'\n", 2, "run.epochs", "expected an integer"),
        ("[run]\ntries = 0\n", 2, "run.tries", "must be at least 1"),
        ("[generate]\nruns = 2\n", 2, "generate.runs", "unknown setting for `passbench generate`"),
    ],
)
def test_bad_keys_and_values_name_file_line_and_key(
    tmp_path: Path, text: str, line: int, field: str, message: str
) -> None:
    path = load(tmp_path, text)
    with pytest.raises(InputError) as caught:
        check_config(read_config(path))
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), line, field)
    assert message in str(error) and str(error).startswith(f"{path}:{line}: field '{field}': ")
    assert error.exit_code == 2


def test_a_whole_valid_file_passes(tmp_path: Path) -> None:
    path = load(
        tmp_path,
        """
data-dir = "d"
pass_k = "1,5"

[evaluate]
memory_mb = 2048
calibrated = false

[run]
n_samples = 2
workers = 3

[env]
env_dir = "/envs/bcb"

[models.gpt4o]
provider = "openai"

[prices."gpt-4o"]
input = 1.0
""",
    )
    config = read_config(path)
    check_config(config)
    assert config.line_of("run.workers") == 11
    assert config.line_of("prices.gpt-4o.input") == 20


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    path = load(tmp_path, "[evaluate]\nworkers = \n")
    with pytest.raises(InputError, match="invalid TOML") as caught:
        read_config(path)
    assert caught.value.line == 2 and caught.value.path == str(path)


def test_an_explicit_config_must_exist(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="config file not found"):
        find_config(tmp_path / "nope.toml")
    assert find_config(None, cwd=tmp_path) is None
    load(tmp_path, "offline = false\n")
    found = find_config(None, cwd=tmp_path)
    assert found is not None and found.data == {"offline": False}
