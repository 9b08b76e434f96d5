"""What a generation would ask and cost, worked out before anything is sent (`run --dry-run`).

Tokens are counted with tiktoken when it is installed and its encoding loads (o200k_base, the
encoding of OpenAI's current models: exact for them, an approximation for other vendors'
tokenizers), and otherwise estimated as one token per four characters, rounded up (OpenAI's
rule of thumb for English text; code usually has somewhat more tokens per character). Output
tokens cannot be known in advance: the estimate is their ceiling, `max_new_tokens` per sample,
so the cost printed is an upper bound on the output side.

Prices are USD per million tokens. They come from, in order: a price file the user names
(`--prices FILE`, TOML or JSON), the model's `[prices."MODEL"]` table in the config file, and
the built-in table below: a few public list prices, with the date they were read. Vendors
change prices; the built-in table is a convenience, not a quote.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passbench.core.errors import InputError
from passbench.core.records import Prompt
from passbench.stages.providers.base import Capabilities
from passbench.stages.providers.config import ModelConfig, Prices

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: When the built-in prices were read from the vendors' pricing pages.
BUILTIN_PRICES_DATE = "2025-06"
#: USD per million tokens (input, output), standard (not batch, not cached) list prices.
BUILTIN_PRICES: Mapping[str, Prices] = {
    "gpt-4o": Prices(2.50, 10.00),
    "gpt-4o-mini": Prices(0.15, 0.60),
    "gpt-4.1": Prices(2.00, 8.00),
    "gpt-4.1-mini": Prices(0.40, 1.60),
    "o3-mini": Prices(1.10, 4.40),
    "o4-mini": Prices(1.10, 4.40),
    "claude-sonnet-4": Prices(3.00, 15.00),
    "claude-3-5-haiku": Prices(0.80, 4.00),
    "claude-opus-4": Prices(15.00, 75.00),
    "gemini-2.5-pro": Prices(1.25, 10.00),  # prompts up to 200k tokens
    "gemini-2.0-flash": Prices(0.10, 0.40),
    "deepseek-chat": Prices(0.27, 1.10),
    "deepseek-reasoner": Prices(0.55, 2.19),
    "mistral-large": Prices(2.00, 6.00),
}

#: Most samples of one prompt a provider asks for in one request (its Capabilities.max_n),
#: so requests can be counted without building the provider (which for hf and vllm loads the
#: model). Local engines (hf, vllm) cost no money; their "requests" are engine calls.
_SAMPLES_PER_REQUEST = {"openai": 128, "google": 8, "mistral": 8, "hf": 64, "vllm": 256}
_LOCAL = frozenset({"hf", "vllm"})
CHARS_PER_TOKEN = 4
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)")


def declared_capabilities(config: ModelConfig) -> Capabilities:
    """The capabilities the run would plan its prompts with, without building the provider:
    chat for every provider, the chat template rendered locally by hf and vllm (a model
    without one completes directly: the dry run cannot know, and assumes a template), and the
    model's config overrides on top."""
    return config.apply_capabilities(
        Capabilities(
            chat=True,
            completion=True,
            prefill=True,
            chat_template=config.provider in _LOCAL,
            max_n=_SAMPLES_PER_REQUEST.get(config.provider, 1),
        )
    )


def token_counter() -> tuple[Callable[[str], int], str]:
    """(count, method): tiktoken's o200k_base when available, else characters / 4."""
    try:
        tiktoken = importlib.import_module("tiktoken")
        encoding = tiktoken.get_encoding("o200k_base")  # may need a download: can fail offline
    except Exception:
        return (lambda text: math.ceil(len(text) / CHARS_PER_TOKEN)), "estimated as characters / 4"
    return (lambda text: len(encoding.encode(text, disallowed_special=()))), "tiktoken o200k_base"


@dataclass(frozen=True)
class PlannedRequest:
    task_id: str
    samples: tuple[int, ...]  # the sample indices one request asks for
    input_tokens: int
    max_output_tokens: int


@dataclass(frozen=True)
class Estimate:
    requests: tuple[PlannedRequest, ...]
    token_method: str
    prices: Prices | None
    price_source: str  # where the prices came from, or why there are none

    @property
    def input_tokens(self) -> int:
        return sum(r.input_tokens for r in self.requests)

    @property
    def max_output_tokens(self) -> int:
        return sum(r.max_output_tokens for r in self.requests)

    @property
    def input_cost(self) -> float | None:
        return self.prices.cost(self.input_tokens, 0) if self.prices else None

    @property
    def max_output_cost(self) -> float | None:
        return self.prices.cost(0, self.max_output_tokens) if self.prices else None


def prompt_text(prompt: Prompt, chat: bool) -> str:
    """What is tokenized for a prompt: its messages' contents (and prefill) or its text."""
    if chat and prompt.messages:
        return "\n".join(m["content"] for m in prompt.messages) + prompt.response_prefix
    return prompt.text + prompt.response_prefix


def plan_requests(
    prompts: Sequence[Prompt],
    n_samples: int,
    config: ModelConfig,
    capabilities: Capabilities,
    *,
    chat: bool,
    count: Callable[[str], int],
) -> list[PlannedRequest]:
    """The requests the runner would send, split as it splits them (samples per request)."""
    size = max(1, capabilities.max_n)
    if config.samples_per_request is not None:
        size = min(size, config.samples_per_request)
    limit = config.params.max_new_tokens or 0
    planned = []
    for prompt in prompts:
        tokens = count(prompt_text(prompt, chat))
        for start in range(0, n_samples, size):
            indices = tuple(range(start, min(n_samples, start + size)))
            planned.append(PlannedRequest(prompt.task_id, indices, tokens, limit * len(indices)))
    return planned


def resolve_prices(config: ModelConfig, price_file: Path | None) -> tuple[Prices | None, str]:
    """The model's prices and where they came from (see the module's docstring)."""
    if config.provider in _LOCAL:
        return Prices(0.0, 0.0), f"a local engine ({config.provider}): no charge"
    if price_file is not None:
        table = read_price_file(price_file)
        found = _lookup(table, config.model)
        if found is not None:
            return found[1], f"{price_file} ({found[0]})"
    if config.prices is not None:
        return config.prices, "the config file"
    found = _lookup(BUILTIN_PRICES, config.model)
    if found is not None:
        return found[1], (
            f"built-in list price of {found[0]!r}, read {BUILTIN_PRICES_DATE}; "
            "override with --prices FILE"
        )
    return None, f"no price known for {config.model!r}: give one with --prices FILE"


def _lookup(table: Mapping[str, Prices], model: str) -> tuple[str, Prices] | None:
    """The exact model id, else a name the id adds only a date or "-latest" to
    ("gpt-4o-2024-08-06" -> "gpt-4o", "claude-sonnet-4-20250514" -> "claude-sonnet-4"); a
    newer model of the family ("claude-opus-4-5") is a different price, so it is not matched."""
    if model in table:
        return model, table[model]
    for name, prices in table.items():
        if model.startswith(name) and _SNAPSHOT.fullmatch(model[len(name) :]):
            return name, prices
    return None


def read_price_file(path: Path) -> dict[str, Prices]:
    """A price file: a table per model id with `input` and `output` in USD per million tokens,
    as TOML (`["gpt-4o"]` / `input = 2.5` / `output = 10.0`) or JSON (`{"gpt-4o": {...}}`);
    a TOML file may put them under `[prices."MODEL"]` as the config file does."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read the price file: {error.strerror}", path=path) from None
    try:
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise InputError(f"not valid {kind}: {error}", path=path) from None
    if isinstance(data, dict) and isinstance(data.get("prices"), dict):
        data = data["prices"]
    if not isinstance(data, dict):
        raise InputError("expected a table of models", path=path)
    table = {}
    for model, entry in data.items():
        if not isinstance(entry, dict):
            raise InputError("expected a table with input and output", path=path, field=model)
        values = {}
        for key in ("input", "output"):
            value = entry.get(key)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                raise InputError(
                    "must be a non-negative number (USD per million tokens)",
                    path=path,
                    field=f"{model}.{key}",
                )
            values[key] = float(value)
        table[str(model)] = Prices(values["input"], values["output"])
    return table
