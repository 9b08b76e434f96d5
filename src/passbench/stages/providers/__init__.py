"""Model providers: one Protocol, a registry of lazily imported backends, and the shared
machinery (concurrency, rate limits, retries, cache, usage) in `ModelRunner`.

    config = load_model_config("gpt-4o", path="passbench.toml", flags={"provider": "openai"})
    provider = create_provider(config)
    runner = ModelRunner(provider, config, cache=ResponseCache(cache_path), progress=progress)
    completions = await runner.generate(prompts, n_samples=5)
    await provider.aclose()
"""

from __future__ import annotations

from passbench.stages.providers.base import (
    Capabilities,
    Choice,
    GenerationParams,
    Provider,
    ProviderCallError,
    ProviderRequest,
    ProviderResponse,
)
from passbench.stages.providers.cache import ResponseCache
from passbench.stages.providers.config import ModelConfig, Prices, load_model_config
from passbench.stages.providers.registry import create_provider, provider_names
from passbench.stages.providers.runner import ModelRunner, UsageTotals, generate_completions

__all__ = [
    "Capabilities",
    "Choice",
    "GenerationParams",
    "ModelConfig",
    "ModelRunner",
    "Prices",
    "Provider",
    "ProviderCallError",
    "ProviderRequest",
    "ProviderResponse",
    "ResponseCache",
    "UsageTotals",
    "create_provider",
    "generate_completions",
    "load_model_config",
    "provider_names",
]
