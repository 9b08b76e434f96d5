"""Small builders shared by the provider tests."""

from __future__ import annotations

import asyncio
from typing import Any

from passbench.core.records import Completion, Prompt
from passbench.stages.providers import ModelConfig, ModelRunner, create_provider, load_model_config
from passbench.stages.providers.cache import ResponseCache
from passbench.stages.providers.retry import RetryPolicy


def chat_prompt(task_id: str, text: str, prefix: str = "") -> Prompt:
    return Prompt(
        task_id=task_id,
        split="instruct",
        text=text,
        messages=({"role": "user", "content": text},),
        response_prefix=prefix,
    )


def text_prompt(task_id: str, text: str) -> Prompt:
    return Prompt(task_id=task_id, split="complete", text=text)


def config(name: str, **flags: Any) -> ModelConfig:
    return load_model_config(name, flags=flags)


def run(
    cfg: ModelConfig,
    prompts: list[Prompt],
    n_samples: int = 1,
    *,
    environ: dict[str, str] | None = None,
    cache: ResponseCache | None = None,
    progress: Any = None,
    retry: RetryPolicy | None = None,
) -> tuple[list[Completion], ModelRunner]:
    """Create the provider, run the prompts, close it; returns completions and the runner."""

    async def go() -> tuple[list[Completion], ModelRunner]:
        provider = create_provider(cfg, environ if environ is not None else {})
        runner = ModelRunner(provider, cfg, cache=cache, progress=progress, retry=retry)
        try:
            return await runner.generate(prompts, n_samples), runner
        finally:
            await provider.aclose()

    return asyncio.run(go())
