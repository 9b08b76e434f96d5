"""Anthropic's Messages API, through the official `anthropic` SDK.

One sample per call (the API has no `n`). An assistant prefill is sent as the final assistant
turn, without trailing whitespace, which the API refuses. `thinking_budget` turns on extended
thinking; `reasoning_effort` is sent as `output_config.effort`; thinking blocks are not part of
the completion text: they are kept as the
choice's reasoning. Sampling parameters the installed SDK does not name are sent in the body;
a model that refuses one says so in a 400 and the runner stops sending it.

Options: default_headers, extra_body (a table merged into every request).
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
from passbench.stages.providers.config import ModelConfig
from passbench.stages.providers.registry import require_sdk
from passbench.stages.providers.sdkerrors import reading_response, translate_sdk_error

NAME = "anthropic"
DEFAULT_MAX_TOKENS = 4096  # the API requires max_tokens; used when the config sets none


def _thinking(block: Any) -> str:
    """A content block's thinking: a thinking block's text; a redacted one (encrypted, so
    unreadable) is marked, so the record shows the model did think."""
    if block.type == "thinking":
        return str(getattr(block, "thinking", "") or "")
    if block.type == "redacted_thinking":
        return "[redacted thinking]"
    return ""


class AnthropicProvider:
    name = NAME

    def __init__(self, sdk: ModuleType, client: Any, config: ModelConfig) -> None:
        self._sdk = sdk
        self._client = client
        self.model = config.model
        self._extra_body: dict[str, Any] = dict(config.options.get("extra_body") or {})
        self._capabilities = Capabilities(
            chat=True,
            completion=False,
            prefill=True,
            max_n=1,
            seed=False,
            reasoning=True,
            default_concurrency=16,
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def _body(self, request: ProviderRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        """(named SDK arguments, extra body fields), without what the server rejected."""
        p = request.params
        named: dict[str, Any] = {"max_tokens": p.max_new_tokens or DEFAULT_MAX_TOKENS}
        extra: dict[str, Any] = dict(self._extra_body)
        if p.stop:
            named["stop_sequences"] = list(p.stop)
        if p.thinking_budget is not None:
            named["thinking"] = {"type": "enabled", "budget_tokens": p.thinking_budget}
        if p.reasoning_effort is not None:
            named["output_config"] = {"effort": p.reasoning_effort}
        if p.temperature is not None:
            extra["temperature"] = p.temperature
        if p.top_p is not None:
            extra["top_p"] = p.top_p
        off = request.disabled
        return (
            {k: v for k, v in named.items() if k not in off or k == "max_tokens"},
            {k: v for k, v in extra.items() if k not in off},
        )

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        named, extra = self._body(request)
        system = "\n\n".join(
            m["content"] for m in request.chat_messages() if m.get("role") == "system"
        )
        messages = [
            {"role": m["role"], "content": m["content"]}
            for m in request.chat_messages()
            if m.get("role") != "system"
        ]
        if request.response_prefix.rstrip():
            messages.append({"role": "assistant", "content": request.response_prefix.rstrip()})
        call: dict[str, Any] = {"model": self.model, "messages": messages, **named}
        if system:
            call["system"] = system
        if extra:
            call["extra_body"] = extra
        try:
            raw = await self._client.messages.create(**call, timeout=request.timeout_s)
        except Exception as error:
            sent = [name for name in (*named, *extra) if name != "max_tokens"]
            raise translate_sdk_error(self._sdk, error, sent=sent) from error
        with reading_response(NAME):
            text = "".join(block.text for block in raw.content if block.type == "text")
            thinking = "\n\n".join(_thinking(block) for block in raw.content)
            if not raw.content:
                raise ProviderCallError("response has no content", kind="malformed")
            return ProviderResponse(
                choices=(
                    Choice(
                        text=text,
                        finish_reason=raw.stop_reason,
                        reasoning=thinking.strip("\n"),
                    ),
                ),
                input_tokens=int(raw.usage.input_tokens or 0),
                output_tokens=int(raw.usage.output_tokens or 0),
                model=raw.model or None,
                sent={**named, **extra},
            )

    async def aclose(self) -> None:
        await self._client.close()


def create(config: ModelConfig, environ: Mapping[str, str]) -> AnthropicProvider:
    sdk = require_sdk("anthropic", NAME)
    key = config.api_key_from(environ, "ANTHROPIC_API_KEY")
    if key is None:
        raise InputError(
            "no API key: set ANTHROPIC_API_KEY (or api_key_env in the model's config)",
            field="api_key",
        )
    client = sdk.AsyncAnthropic(
        api_key=key,
        base_url=config.base_url,
        max_retries=0,  # the runner retries, counts and backs off; the SDK must not
        timeout=config.timeout_s if config.timeout_s is not None else 300.0,
        default_headers=config.options.get("default_headers"),
    )
    return AnthropicProvider(sdk, client, config)


#: The official default `--reasoning_beta`, part of Anthropic thinking file names.
OFFICIAL_REASONING_BETA = "output-128k-2025-02-19"


def official_name_suffix(config: ModelConfig) -> str:
    """The official tool adds the thinking budget and beta to Anthropic file names."""
    budget = config.params.thinking_budget
    return f"--{budget}-{OFFICIAL_REASONING_BETA}" if budget else ""
