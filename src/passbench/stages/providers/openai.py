"""OpenAI chat and text completions, through the official `openai` SDK.

Covers OpenAI itself, Azure OpenAI (set `options.api_version`; `base_url` is the Azure
endpoint) and every server that speaks the OpenAI protocol through `base_url`: vLLM serve,
SGLang, TGI, LM Studio, llama.cpp's server, Together, DeepSeek, OpenRouter.

Chat prompts go to /chat/completions; a prompt without messages (direct completion for a base
model) goes to /completions. Reasoning models that refuse `max_tokens` or `temperature` say so
in a 400; the runner then disables that field and this module sends `max_completion_tokens`
instead of `max_tokens`, or nothing instead of `temperature`. List such fields up front in
`drop_params` to skip the failed first call.

Options (`[models.X.options]`): api_version (Azure), organization, project, extra_body (a table
merged into every request), default_headers, endpoint ("chat" or "completions" to force one).
"""

from __future__ import annotations

from collections.abc import Mapping
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
from passbench.stages.providers.config import (
    OFFICIAL_REASONING_EFFORT,
    ModelConfig,
    reasoning_named_model,
)
from passbench.stages.providers.registry import require_sdk
from passbench.stages.providers.sdkerrors import reading_response, translate_sdk_error

NAME = "openai"
#: The default top_p when sampling: what the official tool uses here
#: (bigcodebench/gen/util/openai_request.py).
OFFICIAL_SAMPLING_TOP_P = 0.95
# vLLM and SGLang: continue the last assistant message instead of starting a new one.
_PREFILL_BODY = {"continue_final_message": True, "add_generation_prompt": False}


def _reasoning(message: Any) -> str:
    """The thinking a compatible server sends beside the answer: `reasoning_content` (DeepSeek,
    SGLang, vLLM before 0.10) or `reasoning` (vLLM since, OpenRouter). The SDK keeps fields it
    does not declare as attributes of the message."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


class OpenAIProvider:
    name = NAME

    def __init__(self, sdk: ModuleType, client: Any, config: ModelConfig) -> None:
        self._sdk = sdk
        self._client = client
        self.model = config.model
        self._options = dict(config.options)
        self._extra_body: dict[str, Any] = dict(self._options.get("extra_body") or {})
        endpoint = self._options.get("endpoint")
        if endpoint not in (None, "chat", "completions"):
            raise InputError(
                f"endpoint must be 'chat' or 'completions', got {endpoint!r}",
                field=f"models.{config.model}.options.endpoint",
            )
        self._endpoint: str | None = endpoint
        self._capabilities = Capabilities(
            chat=True,
            completion=True,
            prefill=False,  # OpenAI itself cannot; vLLM / SGLang can: set capabilities.prefill
            max_n=128,
            seed=True,
            reasoning=True,
            default_concurrency=32,
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def _sampling(self, request: ProviderRequest) -> dict[str, Any]:
        """Wire parameters, leaving out what the server has rejected."""
        p = request.params
        off = request.disabled
        wire: dict[str, Any] = {}
        if request.n > 1:
            wire["n"] = request.n
        if p.temperature is not None:
            wire["temperature"] = p.temperature
        if p.top_p is not None:
            wire["top_p"] = p.top_p
        if p.max_new_tokens is not None:
            # max_tokens is what every compatible server knows; reasoning models want the other
            field = "max_tokens" if "max_tokens" not in off else "max_completion_tokens"
            wire[field] = p.max_new_tokens
        if p.stop:
            wire["stop"] = list(p.stop)
        if p.seed is not None:
            wire["seed"] = p.seed
        if p.reasoning_effort is not None:
            wire["reasoning_effort"] = p.reasoning_effort
        return {key: value for key, value in wire.items() if key not in off}

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        wire = self._sampling(request)
        use_chat = self._endpoint == "chat" or (self._endpoint is None and bool(request.messages))
        extra_body = dict(self._extra_body)
        if use_chat:
            messages = [dict(m) for m in request.chat_messages()]
            if request.response_prefix:
                messages.append({"role": "assistant", "content": request.response_prefix})
                extra_body.update(_PREFILL_BODY)
            create = self._client.chat.completions.create
            call: dict[str, Any] = {"model": self.model, "messages": messages, **wire}
        else:
            create = self._client.completions.create
            call = {"model": self.model, "prompt": request.text + request.response_prefix, **wire}
        if extra_body:
            call["extra_body"] = extra_body
        try:
            raw = await create(**call, timeout=request.timeout_s)
        except Exception as error:
            raise translate_sdk_error(self._sdk, error, sent=[*wire, *extra_body]) from error
        with reading_response(NAME):
            if not raw.choices:
                raise ProviderCallError("response has no choices", kind="malformed")
            choices = tuple(
                Choice(
                    text=(c.message.content or "") if use_chat else (c.text or ""),
                    finish_reason=c.finish_reason,
                    reasoning=_reasoning(c.message) if use_chat else "",
                )
                for c in sorted(raw.choices, key=lambda c: c.index or 0)
            )
            usage = raw.usage
            return ProviderResponse(
                choices=choices,
                input_tokens=int(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=int(usage.completion_tokens or 0) if usage else 0,
                model=raw.model or None,
                sent={**wire, **extra_body},
            )

    async def aclose(self) -> None:
        await self._client.close()


def create(config: ModelConfig, environ: Mapping[str, str]) -> OpenAIProvider:
    sdk = require_sdk("openai", NAME)
    options = dict(config.options)
    common: dict[str, Any] = {
        "max_retries": 0,  # the runner retries, counts and backs off; the SDK must not
        "timeout": config.timeout_s if config.timeout_s is not None else 300.0,
        "default_headers": options.get("default_headers"),
    }
    if options.get("api_version"):
        key = config.api_key_from(environ, "AZURE_OPENAI_API_KEY")
        client = sdk.AsyncAzureOpenAI(
            azure_endpoint=config.base_url or environ.get("AZURE_OPENAI_ENDPOINT"),
            api_version=options["api_version"],
            api_key=key,
            **common,
        )
    else:
        key = config.api_key_from(environ, "OPENAI_API_KEY")
        if key is None and config.base_url:
            key = "EMPTY"  # local OpenAI-compatible servers need no key, but the SDK wants one
        if key is None:
            raise InputError(
                "no API key: set OPENAI_API_KEY (or api_key_env in the model's config)",
                field="api_key",
            )
        client = sdk.AsyncOpenAI(
            api_key=key,
            base_url=config.base_url,
            organization=options.get("organization"),
            project=options.get("project"),
            **common,
        )
    return OpenAIProvider(sdk, client, config)


def official_name_suffix(config: ModelConfig) -> str:
    """The official tool adds the reasoning effort to the file name of OpenAI o1 models
    (bigcodebench/generate.py); o3-* and *-reasoner models get it on every backend, which
    pipeline.sample_identifier handles."""
    if config.model.startswith("o1-") and not reasoning_named_model(config.model):
        return f"--{config.params.reasoning_effort or OFFICIAL_REASONING_EFFORT}"
    return ""
