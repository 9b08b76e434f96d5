"""Mistral's chat API through the official `mistralai` SDK.

Several samples per call through `n`; an assistant prefill is sent as a final assistant message
with `prefix: true`, which Mistral continues. The SDK's retries stay off (retry_config None).
"""

from __future__ import annotations

import importlib
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
from passbench.stages.providers.failures import http_failure
from passbench.stages.providers.registry import require_sdk
from passbench.stages.providers.sdkerrors import reading_response, transport_failure

NAME = "mistral"


def _sdk() -> tuple[Any, ModuleType]:
    """(the Mistral client class, the errors module); the SDK moved both in its 2.0 release."""
    require_sdk("mistralai", NAME)
    try:
        client_module = importlib.import_module("mistralai.client")
        errors = importlib.import_module("mistralai.client.errors")
        return client_module.Mistral, errors
    except (ImportError, AttributeError):
        module = importlib.import_module("mistralai")
        return module.Mistral, importlib.import_module("mistralai.models")


def _thinking(content: Any) -> str:
    """The text of a message's thinking chunks (Magistral): each holds a list of text chunks."""
    if content is None or isinstance(content, str):
        return ""
    parts: list[str] = []
    for chunk in content:
        if getattr(chunk, "type", None) == "thinking":
            parts.extend(getattr(inner, "text", "") or "" for inner in chunk.thinking or [])
    return "".join(parts)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    # a list of chunks; thinking chunks carry no `text` and are not part of the answer
    return "".join(getattr(chunk, "text", "") or "" for chunk in content)


class MistralProvider:
    name = NAME

    def __init__(self, client: Any, errors: ModuleType, config: ModelConfig) -> None:
        self._client = client
        self._errors = errors
        self.model = config.model
        self._capabilities = Capabilities(
            chat=True,
            completion=False,
            prefill=True,
            max_n=8,
            seed=True,
            reasoning=True,
            default_concurrency=8,
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def _sampling(self, request: ProviderRequest) -> dict[str, Any]:
        p = request.params
        wire: dict[str, Any] = {
            "temperature": p.temperature,
            "top_p": p.top_p,
            "max_tokens": p.max_new_tokens,
            "stop": list(p.stop) or None,
            "random_seed": p.seed,
            "reasoning_effort": p.reasoning_effort,
            "n": request.n if request.n > 1 else None,
        }
        return {k: v for k, v in wire.items() if v is not None and k not in request.disabled}

    def _translate(self, error: Exception, sent: list[str]) -> ProviderCallError:
        base = getattr(self._errors, "MistralError", None) or self._errors.SDKError
        if isinstance(error, base) and hasattr(error, "status_code"):
            if isinstance(error, getattr(self._errors, "ResponseValidationError", ())):
                return ProviderCallError(f"unreadable response: {error}", kind="malformed")
            return http_failure(
                int(error.status_code),
                str(getattr(error, "body", "") or error),
                headers=dict(error.headers) if getattr(error, "headers", None) else None,
                body=getattr(error, "body", None),
                sent=sent,
            )
        transport = transport_failure(error)
        if transport is not None:
            return transport
        if isinstance(error, getattr(self._errors, "NoResponseError", ())):
            return ProviderCallError(str(error), kind="connection")
        if isinstance(error, ValueError):
            return ProviderCallError(f"unreadable response: {error!r}", kind="malformed")
        raise error

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        wire = self._sampling(request)
        messages: list[dict[str, Any]] = [dict(m) for m in request.chat_messages()]
        if request.response_prefix:
            messages.append(
                {"role": "assistant", "content": request.response_prefix, "prefix": True}
            )
        timeout_ms = int(request.timeout_s * 1000) if request.timeout_s is not None else None
        try:
            raw = await self._client.chat.complete_async(
                model=self.model, messages=messages, timeout_ms=timeout_ms, **wire
            )
        except Exception as error:
            raise self._translate(error, list(wire)) from error
        with reading_response(NAME):
            if raw is None or not raw.choices:
                raise ProviderCallError("response has no choices", kind="malformed")
            choices = tuple(
                Choice(
                    text=_text(c.message.content),
                    finish_reason=str(c.finish_reason),
                    reasoning=_thinking(c.message.content),
                )
                for c in sorted(raw.choices, key=lambda c: c.index or 0)
            )
            usage = raw.usage
            return ProviderResponse(
                choices=choices,
                input_tokens=int(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=int(usage.completion_tokens or 0) if usage else 0,
                model=raw.model or None,
                sent=wire,
            )

    async def aclose(self) -> None:
        close = getattr(self._client, "__aexit__", None)
        if close is not None:
            await close(None, None, None)


def create(config: ModelConfig, environ: Mapping[str, str]) -> MistralProvider:
    mistral_class, errors = _sdk()
    key = config.api_key_from(environ, "MISTRAL_API_KEY")
    if key is None:
        raise InputError(
            "no API key: set MISTRAL_API_KEY (or api_key_env in the model's config)",
            field="api_key",
        )
    timeout = config.timeout_s if config.timeout_s is not None else 300.0
    client = mistral_class(
        api_key=key,
        server_url=config.base_url,
        retry_config=None,  # the runner retries, counts and backs off; the SDK must not
        timeout_ms=int(timeout * 1000),
    )
    return MistralProvider(client, errors, config)
