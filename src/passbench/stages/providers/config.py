"""Per-model settings: which provider, which endpoint, which parameters, which limits.

They come from the `[models.NAME]` tables of the config file (read and checked by
passbench.core.settings, like every other setting) and from command-line flags, flags winning:

    [models.gpt4o]                  # the name given to --model
    provider = "openai"
    model = "gpt-4o-2024-08-06"     # id sent to the API (default: the table's name)
    temperature = 0.8
    max_new_tokens = 1280
    requests_per_minute = 500
    drop_params = ["temperature"]   # wire parameters never to send to this model

    [models.gpt4o.capabilities]     # override what the provider declares
    prefill = false

    [models.gpt4o.options]          # provider-specific: api_version, dtype, device...
    api_version = "2024-10-21"

    [prices."gpt-4o-2024-08-06"]    # USD per million tokens, by model id
    input = 2.5
    output = 10.0

Values are validated here (the I/O edge), with errors naming the file and field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from passbench.core.errors import InputError
from passbench.core.settings import ConfigFile, read_config
from passbench.core.settings.configfile import parse_toml_value
from passbench.stages.providers.base import Capabilities, GenerationParams


@dataclass(frozen=True)
class Prices:
    """USD per million tokens."""

    input: float = 0.0
    output: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class ModelConfig:
    """Everything needed to talk to one model."""

    provider: str
    model: str
    params: GenerationParams = field(default_factory=GenerationParams)
    base_url: str | None = None
    api_key: str | None = None  # prefer api_key_env; a key in a config file is easy to leak
    api_key_env: str | None = None  # environment variable holding the key (provider default)
    capabilities: Mapping[str, Any] = field(default_factory=dict)  # Capabilities overrides
    drop_params: tuple[str, ...] = ()
    concurrency: int | None = None  # None: the provider's default
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout_s: float | None = None  # per request; None: the provider's default
    max_retries: int = 8
    samples_per_request: int | None = None  # cap on n per request (None: the provider's max)
    prices: Prices | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def apply_capabilities(self, declared: Capabilities) -> Capabilities:
        """The provider's declared capabilities with this model's overrides on top."""
        return replace(declared, **dict(self.capabilities))

    def api_key_from(self, environ: Mapping[str, str], default_env: str) -> str | None:
        """The API key: the literal one, else the configured or the provider's variable."""
        if self.api_key:
            return self.api_key
        return environ.get(self.api_key_env or default_env)


_PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "temperature": (int, float),
    "top_p": (int, float),
    "max_new_tokens": (int,),
    "seed": (int,),
    "reasoning_effort": (str,),
    "thinking_budget": (int,),
}
_SCALAR_TYPES: dict[str, tuple[type, ...]] = {
    "provider": (str,),
    "model": (str,),
    "base_url": (str,),
    "api_key": (str,),
    "api_key_env": (str,),
    "concurrency": (int,),
    "requests_per_minute": (int, float),
    "tokens_per_minute": (int, float),
    "timeout_s": (int, float),
    "max_retries": (int,),
    "samples_per_request": (int,),
}
_CAPABILITY_FIELDS = {f.name: f.type for f in fields(Capabilities)}


def _check(value: Any, types: tuple[type, ...], *, path: str | None, name: str) -> Any:
    # bool is an int subclass; a `true` where a number belongs is a mistake worth reporting.
    if isinstance(value, bool) or not isinstance(value, types):
        wanted = " or ".join(t.__name__ for t in types)
        raise InputError(f"expected {wanted}, got {value!r}", path=path, field=name)
    return value


def model_config_from_mapping(
    data: Mapping[str, Any],
    *,
    name: str,
    path: str | Path | None = None,
    prices: Mapping[str, Any] | None = None,
) -> ModelConfig:
    """Build a ModelConfig from one `[models.NAME]` table (or flags shaped like one)."""
    where = str(path) if path is not None else None
    prefix = f"models.{name}."
    values: dict[str, Any] = {}
    param_values: dict[str, Any] = {}
    for key, value in data.items():
        key = key.replace("-", "_")
        if value is None:
            continue
        if key in _PARAM_TYPES:
            param_values[key] = _check(value, _PARAM_TYPES[key], path=where, name=prefix + key)
        elif key == "stop":
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, (list, tuple)) or not all(isinstance(s, str) for s in items):
                raise InputError("expected a list of strings", path=where, field=prefix + key)
            param_values["stop"] = tuple(items)
        elif key in _SCALAR_TYPES:
            values[key] = _check(value, _SCALAR_TYPES[key], path=where, name=prefix + key)
        elif key == "drop_params":
            if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
                raise InputError("expected a list of strings", path=where, field=prefix + key)
            values[key] = tuple(value)
        elif key == "capabilities":
            values[key] = _capabilities(value, path=where, name=prefix + key)
        elif key == "options":
            if not isinstance(value, Mapping):
                raise InputError("expected a table", path=where, field=prefix + key)
            values[key] = dict(value)
        elif key == "prices":
            values[key] = _prices(value, path=where, name=prefix + key)
        else:
            raise InputError("unknown setting", path=where, field=prefix + key)
    if "provider" not in values:
        raise InputError(
            'no provider given (set provider = "openai" or similar, or pass --provider)',
            path=where,
            field=prefix + "provider",
        )
    values.setdefault("model", name)
    for key in ("concurrency", "max_retries", "samples_per_request"):
        if key in values and values[key] < (0 if key == "max_retries" else 1):
            raise InputError("must be positive", path=where, field=prefix + key)
    if "prices" not in values and prices and values["model"] in prices:
        values["prices"] = _prices(
            prices[values["model"]], path=where, name=f"prices.{values['model']}"
        )
    return ModelConfig(params=GenerationParams(**param_values), **values)


def _capabilities(value: Any, *, path: str | None, name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError("expected a table", path=path, field=name)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key not in _CAPABILITY_FIELDS:
            known = ", ".join(sorted(_CAPABILITY_FIELDS))
            raise InputError(
                f"unknown capability (known: {known})", path=path, field=f"{name}.{key}"
            )
        wanted: tuple[type, ...] = (bool,)
        if key in ("max_n", "default_concurrency"):
            wanted = (int,)
        elif key == "default_timeout_s":
            wanted = (int, float)
        if wanted == (bool,):
            if not isinstance(item, bool):
                raise InputError(
                    f"expected true or false, got {item!r}", path=path, field=f"{name}.{key}"
                )
        else:
            _check(item, wanted, path=path, name=f"{name}.{key}")
        out[key] = item
    return out


def _prices(value: Any, *, path: str | None, name: str) -> Prices:
    if not isinstance(value, Mapping) or not set(value) <= {"input", "output"}:
        raise InputError(
            "expected a table with 'input' and 'output' (USD per million tokens)",
            path=path,
            field=name,
        )
    return Prices(
        input=float(_check(value.get("input", 0.0), (int, float), path=path, name=f"{name}.input")),
        output=float(
            _check(value.get("output", 0.0), (int, float), path=path, name=f"{name}.output")
        ),
    )


def parse_provider_options(items: Sequence[str]) -> dict[str, Any]:
    """--option KEY=VALUE pairs; VALUE is a TOML value (4096, true, "x", [1, 2]) or else text."""
    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"expected KEY=VALUE, got {item!r}", field="option")
        try:
            parsed[key] = parse_toml_value(text)
        except ValueError:
            parsed[key] = text
    return parsed


def load_model_config(
    name: str,
    *,
    path: str | Path | None = None,
    config: ConfigFile | None = None,
    flags: Mapping[str, Any] | None = None,
) -> ModelConfig:
    """The settings for model `name`: its `[models.NAME]` table in the config file (`config`,
    or the file at `path`; none: no table), then flags.

    A name without a table is the model id itself; `flags` must then name the provider.
    Flags set to None count as not given. Errors name the file, the line and the key.
    """
    if config is None and path is not None:
        config = read_config(path)
    table: dict[str, Any] = {}
    prices: Mapping[str, Any] = {}
    if config is not None:
        models = config.data.get("models", {})
        prices = config.data.get("prices", {})
        if not isinstance(models, Mapping):
            raise config.error("expected a table", "models")
        if not isinstance(prices, Mapping):
            raise config.error("expected a table", "prices")
        entry = models.get(name)
        if entry is not None:
            if not isinstance(entry, Mapping):
                raise config.error("expected a table", f"models.{name}")
            table = dict(entry)
    for key, value in (flags or {}).items():
        if value is None or value == ():
            continue
        if key in ("capabilities", "options") and isinstance(value, Mapping):
            table[key] = {**table.get(key, {}), **value}
        else:
            table[key] = value
    where = config.path if config is not None else None
    try:
        return model_config_from_mapping(table, name=name, path=where, prices=prices)
    except InputError as error:
        if config is None or error.line is not None or error.field is None:
            raise
        raise config.error(error.bare_message, error.field) from None


#: The official default `--reasoning_effort`, part of some sample-file names.
OFFICIAL_REASONING_EFFORT = "medium"


def reasoning_named_model(model: str) -> bool:
    """Models whose sample-file names carry the reasoning effort on every backend, as the
    official tool names them (o3-*, *-reasoner). Naming only: no behaviour depends on it."""
    return model.startswith("o3-") or model.endswith("-reasoner")
