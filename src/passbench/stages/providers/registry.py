"""Provider registry: name -> where its factory lives, imported only when chosen.

Adding a provider is one module exposing `create(config, environ) -> Provider` and one line here.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import cast

from passbench.core.errors import ProviderError, UnknownNameError
from passbench.stages.providers.base import Provider
from passbench.stages.providers.config import ModelConfig


@dataclass(frozen=True)
class ProviderEntry:
    module: str  # module with a `create(config, environ)` function
    extra: str  # the pip extra that installs its SDK: pip install 'passbench[extra]'
    summary: str


_PROVIDERS: dict[str, ProviderEntry] = {
    "openai": ProviderEntry(
        "passbench.stages.providers.openai",
        "openai",
        "OpenAI, Azure OpenAI and OpenAI-compatible servers (vLLM serve, SGLang, TGI, ...)",
    ),
    "anthropic": ProviderEntry(
        "passbench.stages.providers.anthropic", "anthropic", "Anthropic Messages API"
    ),
    "google": ProviderEntry(
        "passbench.stages.providers.google", "google", "Google Gemini (google-genai)"
    ),
    "mistral": ProviderEntry("passbench.stages.providers.mistral", "mistral", "Mistral chat API"),
    "ollama": ProviderEntry("passbench.stages.providers.ollama", "ollama", "Ollama's native API"),
    "vllm": ProviderEntry(
        "passbench.stages.providers.vllm", "vllm", "vLLM offline engine, batched"
    ),
    "hf": ProviderEntry("passbench.stages.providers.hf", "hf", "Hugging Face transformers, local"),
}

Factory = Callable[[ModelConfig, Mapping[str, str]], Provider]


def provider_names() -> list[str]:
    return sorted(_PROVIDERS)


def provider_entry(name: str) -> ProviderEntry:
    try:
        return _PROVIDERS[name]
    except KeyError:
        known = ", ".join(provider_names())
        raise UnknownNameError(
            f"unknown provider '{name}' (known: {known})", field="provider"
        ) from None


def require_sdk(module: str, provider: str) -> ModuleType:
    """Import a provider's SDK, or say which pip extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        extra = _PROVIDERS[provider].extra if provider in _PROVIDERS else provider
        raise ProviderError(
            f"provider '{provider}' needs the '{module}' package ({error}); "
            f"install it with: pip install 'passbench[{extra}]'"
        ) from None


def _provider_module(name: str) -> ModuleType:
    """The provider's own module (its SDK is imported only by its `create`)."""
    return importlib.import_module(provider_entry(name).module)


def official_name_suffix(config: ModelConfig) -> str:
    """What the provider adds to the model in official sample-file names (its module's optional
    `official_name_suffix(config) -> str`; the official tool names some backends' files so).
    Importing the module does not import its SDK."""
    module = _provider_module(config.provider)
    suffix: Callable[[ModelConfig], str] | None = getattr(module, "official_name_suffix", None)
    return suffix(config) if suffix is not None else ""


def official_sampling_top_p(config: ModelConfig) -> float | None:
    """The top_p the official tool samples with on this provider's backend (its module's optional
    `OFFICIAL_SAMPLING_TOP_P`): 0.95 for OpenAI, vLLM and transformers; none elsewhere."""
    module = _provider_module(config.provider)
    value: float | None = getattr(module, "OFFICIAL_SAMPLING_TOP_P", None)
    return value


def create_provider(config: ModelConfig, environ: Mapping[str, str] | None = None) -> Provider:
    """Build the provider named by `config.provider` (its SDK is imported now, not before)."""
    module = _provider_module(config.provider)
    factory = cast(Factory, module.create)
    return factory(config, os.environ if environ is None else environ)
