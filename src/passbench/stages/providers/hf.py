"""Hugging Face transformers, running a local or Hub model in this process.

Chat or direct completion is decided by the tokenizer: with a chat template (and messages in
the prompt, and `options.direct_completion` not set) the messages are rendered through it, an
assistant prefill included the way the official BigCodeBench harness does (render a response
holding a marker, cut at the marker); without one the prompt text is completed as it is.
Concurrent calls are gathered into padded batches (`options.batch_size`, default 8) and
`n` samples of a prompt come from `num_return_sequences`.

Options: tokenizer (name or path, default the model's), dtype ("auto", "float32", "bfloat16",
...), device ("cpu", "cuda", ...; default cuda when available), revision, trust_remote_code,
direct_completion, batch_size.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

from passbench.stages.providers.base import Capabilities, Choice, ProviderRequest, ProviderResponse
from passbench.stages.providers.batching import MicroBatcher
from passbench.stages.providers.config import ModelConfig
from passbench.stages.providers.registry import require_sdk

NAME = "hf"
#: The default top_p when sampling: what the official tool uses here
#: (bigcodebench/provider/hf.py).
OFFICIAL_SAMPLING_TOP_P = 0.95
# Marker used to cut a rendered chat at the start of the assistant's prefilled answer.
_SPLITTER = "-[[]]-this-is-really-our-highest-priority-[[]]-"


def render_prompt(tokenizer: Any, request: ProviderRequest, *, direct_completion: bool) -> str:
    """The exact text the model continues (shared with the vLLM provider)."""
    if (
        direct_completion
        or not request.messages
        or getattr(tokenizer, "chat_template", None) is None
    ):
        return request.text + request.response_prefix
    messages = [dict(m) for m in request.messages]
    if request.response_prefix:
        # the official harness's assistant turn: prefix, marker, closing fence
        content = f"{request.response_prefix}{_SPLITTER}\n```\n"
        messages.append({"role": "assistant", "content": content})
        rendered = tokenizer.apply_chat_template(messages, tokenize=False)
        return str(rendered).split(_SPLITTER)[0]
    rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return str(rendered).split(_SPLITTER)[0]


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """`text` up to the first stop sequence, and whether one was found."""
    cut = min((text.index(s) for s in stop if s and s in text), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def _stop_criteria(
    transformers: ModuleType, torch: ModuleType, tokenizer: Any, stop: Sequence[str], start: int
) -> Any:
    """Stop a row once its generated text holds a stop sequence.

    transformers' own `stop_strings` needs a tokenizer whose vocabulary it can map back to
    strings, which not every tokenizer allows; decoding the tail of each row works with all.
    """

    class StopOnStrings(transformers.StoppingCriteria):  # type: ignore[misc, name-defined]
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            tail = max(start, input_ids.shape[1] - 64)  # a stop sequence spans few tokens
            done = [
                any(s in tokenizer.decode(row[tail:], skip_special_tokens=True) for s in stop)
                for row in input_ids
            ]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return StopOnStrings()


@dataclass(frozen=True)
class _Item:
    prompt: str
    n: int


class HFProvider:
    name = NAME

    def __init__(
        self,
        torch: ModuleType,
        transformers: ModuleType,
        tokenizer: Any,
        model: Any,
        config: ModelConfig,
    ) -> None:
        self._torch = torch
        self._transformers = transformers
        self._tokenizer = tokenizer
        self._model = model
        self.model = config.model
        self._direct = bool(config.options.get("direct_completion", False))
        self._device = model.device
        has_template = getattr(tokenizer, "chat_template", None) is not None
        self._capabilities = Capabilities(
            chat=has_template and not self._direct,
            completion=True,
            prefill=has_template and not self._direct,
            chat_template=has_template and not self._direct,
            max_n=64,
            seed=True,
            reasoning=False,
            default_concurrency=256,  # calls wait in the batcher; more in flight, fuller batches
            default_timeout_s=None,
        )
        self._batcher: MicroBatcher[_Item, list[tuple[str, str, int, int]]] = MicroBatcher(
            self._run_batch, max_batch=int(config.options.get("batch_size", 8))
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def _run_batch(
        self, key: Hashable, items: Sequence[_Item]
    ) -> list[list[tuple[str, str, int, int]]]:
        """Generate for one batch (runs in a worker thread). key = (n, params as a tuple)."""
        n, params = cast(tuple[int, tuple[tuple[str, Any], ...]], key)
        settings = dict(params)
        torch = self._torch
        tokenizer = self._tokenizer
        encoded = tokenizer([item.prompt for item in items], return_tensors="pt", padding=True)
        encoded = {name: tensor.to(self._device) for name, tensor in encoded.items()}
        temperature = settings.get("temperature")
        sample = temperature is not None and temperature > 0
        kwargs: dict[str, Any] = {
            "max_new_tokens": settings.get("max_new_tokens") or 512,
            "do_sample": sample,
            "num_return_sequences": n,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if sample:
            kwargs["temperature"] = temperature
            if settings.get("top_p") is not None:
                kwargs["top_p"] = settings["top_p"]
        stop = tuple(settings.get("stop") or ())
        prompt_length = encoded["input_ids"].shape[1]
        if stop:
            kwargs["stopping_criteria"] = self._transformers.StoppingCriteriaList(
                [_stop_criteria(self._transformers, torch, tokenizer, stop, prompt_length)]
            )
        if settings.get("seed") is not None:
            torch.manual_seed(int(settings["seed"]))
        with torch.inference_mode():
            output = self._model.generate(**encoded, **kwargs)
        input_counts = encoded["attention_mask"].sum(dim=1).tolist()
        results: list[list[tuple[str, str, int, int]]] = []
        for index in range(len(items)):
            rows = output[index * n : (index + 1) * n, prompt_length:]
            samples = []
            for row in rows:
                tokens = [t for t in row.tolist() if t != tokenizer.pad_token_id]
                raw = tokenizer.decode(tokens, skip_special_tokens=True)
                text, stopped = cut_at_stop(raw, stop)
                ended = stopped or tokenizer.eos_token_id in tokens
                reason = "stop" if ended else "length"
                samples.append((text, reason, int(input_counts[index]), len(tokens)))
            results.append(samples)
        return results

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        prompt = render_prompt(self._tokenizer, request, direct_completion=self._direct)
        params = request.params.as_dict()
        key = (
            request.n,
            tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())),
        )
        samples = await self._batcher.submit(key, _Item(prompt, request.n))
        return ProviderResponse(
            choices=tuple(
                Choice(text=text, finish_reason=reason) for text, reason, _, _ in samples
            ),
            input_tokens=samples[0][2] if samples else 0,
            output_tokens=sum(count for _, _, _, count in samples),
            sent={"prompt_chars": len(prompt), **params},
        )

    async def aclose(self) -> None:
        self._model = None


def create(config: ModelConfig, environ: Mapping[str, str]) -> HFProvider:
    torch = require_sdk("torch", NAME)
    transformers = require_sdk("transformers", NAME)
    options = dict(config.options)
    common: dict[str, Any] = {
        "revision": options.get("revision"),
        "trust_remote_code": bool(options.get("trust_remote_code", False)),
    }
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        options.get("tokenizer") or config.model, **common
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"  # decoder-only: generated tokens follow the prompt directly
    dtype_name = options.get("dtype", "auto")
    dtype = dtype_name if dtype_name == "auto" else getattr(torch, dtype_name)
    device = options.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
    # transformers 4.56 renamed torch_dtype to dtype
    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    dtype_arg = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
    model = transformers.AutoModelForCausalLM.from_pretrained(
        config.model, **{dtype_arg: dtype}, **common
    )
    model.to(device)
    model.eval()
    return HFProvider(torch, transformers, tokenizer, model, config)
