"""Model settings from TOML and flags; errors name the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.core.errors import InputError
from passbench.stages.providers import Capabilities, load_model_config
from passbench.stages.providers.config import parse_provider_options

TOML = """
[models.gpt4o]
provider = "openai"
model = "gpt-4o-2024-08-06"
temperature = 0.8
max_new_tokens = 1280
stop = ["\\nclass "]
requests_per_minute = 500
drop_params = ["temperature"]

[models.gpt4o.capabilities]
prefill = true

[models.gpt4o.options]
api_version = "2024-10-21"

[prices."gpt-4o-2024-08-06"]
input = 2.5
output = 10.0
"""


def test_toml_table_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "passbench.toml"
    path.write_text(TOML)
    cfg = load_model_config("gpt4o", path=path, flags={"temperature": 0.2, "seed": None})
    assert cfg.provider == "openai" and cfg.model == "gpt-4o-2024-08-06"
    assert cfg.params.temperature == 0.2  # the flag wins
    assert cfg.params.max_new_tokens == 1280 and cfg.params.stop == ("\nclass ",)
    assert cfg.params.seed is None
    assert cfg.requests_per_minute == 500 and cfg.drop_params == ("temperature",)
    assert cfg.options == {"api_version": "2024-10-21"}
    assert cfg.prices is not None and cfg.prices.cost(1_000_000, 1_000_000) == 12.5
    assert cfg.apply_capabilities(Capabilities()).prefill is True


def test_name_without_a_table_is_the_model_id() -> None:
    cfg = load_model_config("llama3", flags={"provider": "ollama"})
    assert cfg.model == "llama3" and cfg.provider == "ollama"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('[models.m]\nprovider = "openai"\ntemperature = "hot"\n', "models.m.temperature"),
        ('[models.m]\nprovider = "openai"\ncolour = 1\n', "models.m.colour"),
        (
            '[models.m]\nprovider = "openai"\n[models.m.capabilities]\nprefil = true\n',
            "models.m.capabilities.prefil",
        ),
        ('[models.m]\nprovider = "openai"\nconcurrency = 0\n', "models.m.concurrency"),
        ('[models.m]\nmodel = "x"\n', "models.m.provider"),
    ],
)
def test_bad_values_name_file_and_field(tmp_path: Path, body: str, field: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(InputError) as caught:
        load_model_config("m", path=path)
    assert caught.value.field == field and caught.value.path == str(path)
    assert str(path) in str(caught.value)


def test_invalid_toml(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("[models\n")
    with pytest.raises(InputError, match="invalid TOML"):
        load_model_config("m", path=path)


def test_provider_options_are_toml_values_or_text() -> None:
    assert parse_provider_options(
        [
            "max_model_len=4096",
            "enforce_eager=true",
            "dtype=bfloat16",
            'tokenizer="t/x"',
            "a=[1, 2]",
        ]
    ) == {
        "max_model_len": 4096,
        "enforce_eager": True,
        "dtype": "bfloat16",
        "tokenizer": "t/x",
        "a": [1, 2],
    }


def test_errors_in_a_model_table_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "passbench.toml"
    path.write_text('[evaluate]\nworkers = 2\n\n[models.m]\nprovider = "openai"\ncolour = 1\n')
    with pytest.raises(InputError) as caught:
        load_model_config("m", path=path)
    assert (caught.value.line, caught.value.field) == (6, "models.m.colour")
    assert str(caught.value).startswith(f"{path}:6: field 'models.m.colour': unknown setting")
