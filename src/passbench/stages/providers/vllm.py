"""vLLM's offline engine (`vllm.LLM`), driven from this process and fed in large batches.

Concurrent calls from the runner are gathered by a MicroBatcher into one `LLM.generate` call
with one SamplingParams per prompt (so per-sample seeds survive batching); vLLM schedules the
batch itself. Prompts are rendered like the hf provider's (chat template when the tokenizer has
one, prefill by cutting a rendered answer at a marker; direct completion otherwise).

vLLM drops a whole batch when it refuses one of its prompts. A prompt longer than the engine's
context (`max_model_len`) is caught before batching and stops the run with a message naming the
task and both lengths; for any other refusal the batch is halved until the refused prompt stands
alone, and only its own call fails.

Sample k of a prompt is seeded `seed + k` however the samples are split across calls (vLLM
seeds the i-th of n samples `seed + i`; the runner offsets `seed` by the first sample's index).

For a vLLM *server*, use the openai provider with base_url instead.

Options: the engine arguments below go to `vllm.LLM` as named; any other engine argument goes
in the `engine_args` table (`[models.NAME.options.engine_args]`). `direct_completion`,
`skip_special_tokens` (default false, as the official vLLM backend decodes) and `batch_size`
(default 1024) are passbench's.
"""

from __future__ import annotations

import importlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from passbench.core.errors import InputError
from passbench.stages.providers.base import (
    Capabilities,
    Choice,
    ProviderCallError,
    ProviderRequest,
    ProviderResponse,
)
from passbench.stages.providers.batching import MicroBatcher
from passbench.stages.providers.config import ModelConfig
from passbench.stages.providers.hf import render_prompt
from passbench.stages.providers.registry import require_sdk

NAME = "vllm"
#: The default top_p when sampling: what the official tool uses here
#: (bigcodebench/provider/vllm.py).
OFFICIAL_SAMPLING_TOP_P = 0.95
_ENGINE_OPTIONS = (
    "tokenizer",
    "dtype",
    "tensor_parallel_size",
    "max_model_len",
    "gpu_memory_utilization",
    "revision",
    "trust_remote_code",
    "enforce_eager",
    "quantization",
    "max_num_seqs",
    "enable_prefix_caching",
    "download_dir",
    "kv_cache_memory_bytes",
    "seed",
)


@dataclass(frozen=True)
class _Item:
    prompt: str
    sampling: Any  # vllm.SamplingParams


class VLLMProvider:
    name = NAME

    def __init__(self, vllm: ModuleType, engine: Any, config: ModelConfig) -> None:
        self._vllm = vllm
        self._engine = engine
        self._tokenizer = engine.get_tokenizer()
        self._max_model_len = _max_model_len(engine)
        self._refusals = _refusal_types(vllm)
        self.model = config.model
        self._direct = bool(config.options.get("direct_completion", False))
        # False as in the official vLLM backend: the answer is decoded with every token it has.
        self._skip_special_tokens = bool(config.options.get("skip_special_tokens", False))
        has_template = getattr(self._tokenizer, "chat_template", None) is not None
        self._capabilities = Capabilities(
            chat=has_template and not self._direct,
            completion=True,
            prefill=has_template and not self._direct,
            chat_template=has_template and not self._direct,
            max_n=256,
            seed=True,
            reasoning=False,
            default_concurrency=4096,  # everything in flight: vLLM schedules the batch
            default_timeout_s=None,
        )
        self._batcher: MicroBatcher[_Item, Any] = MicroBatcher(
            self._run_batch, max_batch=int(config.options.get("batch_size", 1024)), wait_s=0.05
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def _run_batch(self, key: Hashable, items: Sequence[_Item]) -> list[Any]:
        """One `LLM.generate` for the batch. vLLM validates each request as it adds it and drops
        the whole batch when it refuses one; then the batch is halved until the refused prompts
        stand alone, each answered with its own error, and the others are generated."""
        try:
            outputs = self._engine.generate(
                [item.prompt for item in items],
                [item.sampling for item in items],
                use_tqdm=False,
            )
            return list(outputs)
        except self._refusals as error:
            if len(items) == 1:
                return [ProviderCallError(f"vLLM refused the prompt: {error}", kind="invalid")]
        middle = len(items) // 2
        return self._run_batch(key, items[:middle]) + self._run_batch(key, items[middle:])

    def _sampling(self, request: ProviderRequest) -> Any:
        p = request.params
        values: dict[str, Any] = {
            "n": request.n,
            "temperature": p.temperature if p.temperature is not None else 0.0,
            "top_p": p.top_p,
            "max_tokens": p.max_new_tokens,
            "stop": list(p.stop) or None,
            "seed": p.seed,
            "skip_special_tokens": self._skip_special_tokens,
        }
        return self._vllm.SamplingParams(**{k: v for k, v in values.items() if v is not None})

    def _check_length(self, prompt: str) -> None:
        if self._max_model_len is None:
            return
        length = len(self._tokenizer.encode(prompt))
        if length >= self._max_model_len:
            raise ProviderCallError(
                f"the prompt has {length} tokens; the engine's context (max_model_len) is "
                f"{self._max_model_len}, which leaves no room for an answer: raise "
                "options.max_model_len, if the model allows it",
                kind="invalid",
            )

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        prompt = render_prompt(self._tokenizer, request, direct_completion=self._direct)
        self._check_length(prompt)
        output = await self._batcher.submit("all", _Item(prompt, self._sampling(request)))
        return ProviderResponse(
            choices=tuple(
                Choice(text=o.text, finish_reason=o.finish_reason) for o in output.outputs
            ),
            input_tokens=len(output.prompt_token_ids or ()),
            output_tokens=sum(len(o.token_ids or ()) for o in output.outputs),
            sent={"prompt_chars": len(prompt), **request.params.as_dict(), "n": request.n},
        )

    async def aclose(self) -> None:
        engine, self._engine = self._engine, None
        # Stop vLLM's engine process now rather than whenever the engine is collected.
        core = getattr(getattr(engine, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()


def _refusal_types(vllm: ModuleType) -> tuple[type[BaseException], ...]:
    """What vLLM raises for a request it will not take: ValueError in older releases,
    vllm.exceptions.VLLMClientError (validation errors) in newer ones."""
    try:
        client_error = importlib.import_module("vllm.exceptions").VLLMClientError
    except (ImportError, AttributeError):
        return (ValueError,)
    return (ValueError, client_error)


def _max_model_len(engine: Any) -> int | None:
    try:
        return int(engine.llm_engine.model_config.max_model_len)
    except (AttributeError, TypeError, ValueError):  # an engine that does not say
        return None


def engine_arguments(config: ModelConfig) -> dict[str, Any]:
    """The keyword arguments for `vllm.LLM`, from the model's options."""
    options = dict(config.options)
    arguments = {key: options[key] for key in _ENGINE_OPTIONS if key in options}
    extra = options.get("engine_args", {})
    if not isinstance(extra, Mapping):
        raise InputError(
            f"vllm model {config.model}: options.engine_args must be a table of vllm.LLM "
            f"arguments, not {type(extra).__name__}"
        )
    arguments.update(extra)
    arguments.pop("model", None)  # the model is --model
    return arguments


def create(config: ModelConfig, environ: Mapping[str, str]) -> VLLMProvider:
    vllm = require_sdk("vllm", NAME)
    engine = vllm.LLM(model=config.model, **engine_arguments(config))
    return VLLMProvider(vllm, engine, config)
