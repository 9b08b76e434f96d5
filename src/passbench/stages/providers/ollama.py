"""Ollama's native API (/api/chat, /api/generate) through the official `ollama` SDK.

Chat prompts go to /api/chat; a prompt without messages goes to /api/generate with `raw`
set, so Ollama applies no template (direct completion for base models). One sample per call.
`reasoning_effort` is sent as `think` (a level), `thinking_budget` turns thinking on; the
thinking text is not part of the completion. `base_url` is the Ollama host (default
http://127.0.0.1:11434).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

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

NAME = "ollama"


class OllamaProvider:
    name = NAME

    def __init__(self, sdk: ModuleType, client: Any, config: ModelConfig) -> None:
        self._sdk = sdk
        self._client = client
        self.model = config.model
        self._capabilities = Capabilities(
            chat=True,
            completion=True,
            prefill=False,  # recent Ollama continues a final assistant message: opt in per model
            max_n=1,
            seed=True,
            reasoning=True,
            default_concurrency=4,  # one local server: more in flight only queues there
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def _options(self, request: ProviderRequest) -> dict[str, Any]:
        p = request.params
        options: dict[str, Any] = {
            "temperature": p.temperature,
            "top_p": p.top_p,
            "num_predict": p.max_new_tokens,
            "stop": list(p.stop) or None,
            "seed": p.seed,
        }
        return {k: v for k, v in options.items() if v is not None and k not in request.disabled}

    def _think(self, request: ProviderRequest) -> bool | str | None:
        if "think" in request.disabled:
            return None
        if request.params.reasoning_effort is not None:
            return request.params.reasoning_effort
        if request.params.thinking_budget is not None:
            return request.params.thinking_budget > 0
        return None

    def _translate(self, error: Exception, sent: list[str]) -> ProviderCallError:
        if isinstance(error, self._sdk.ResponseError):
            status = error.status_code if error.status_code and error.status_code > 0 else 500
            return http_failure(status, str(error.error), body={"error": error.error}, sent=sent)
        transport = transport_failure(error)
        if transport is not None:
            return transport
        if isinstance(error, ValueError):
            return ProviderCallError(f"unreadable response: {error!r}", kind="malformed")
        raise error

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        options = self._options(request)
        think = self._think(request)
        extra: dict[str, Any] = {"think": think} if think is not None else {}
        try:
            if request.messages:
                messages = [dict(m) for m in request.messages]
                if request.response_prefix:
                    messages.append({"role": "assistant", "content": request.response_prefix})
                raw = await self._client.chat(
                    model=self.model, messages=messages, options=options, **extra
                )
            else:
                raw = await self._client.generate(
                    model=self.model,
                    prompt=request.text + request.response_prefix,
                    raw=True,
                    options=options,
                    **extra,
                )
        except Exception as error:
            raise self._translate(error, [*options, *extra]) from error
        with reading_response(NAME):
            text = raw.message.content if request.messages else raw.response
            if text is None:
                raise ProviderCallError("response has no content", kind="malformed")
            return ProviderResponse(
                choices=(
                    Choice(
                        text=text,
                        finish_reason=raw.done_reason,
                        # with `think`, the thinking comes beside the answer, never inside it
                        reasoning=str(
                            (raw.message.thinking if request.messages else raw.thinking) or ""
                        ),
                    ),
                ),
                input_tokens=int(raw.prompt_eval_count or 0),
                output_tokens=int(raw.eval_count or 0),
                model=raw.model or None,
                sent={**options, **extra},
            )

    async def aclose(self) -> None:
        inner = getattr(self._client, "_client", None)  # the SDK's httpx client
        if inner is not None:
            await inner.aclose()


def create(config: ModelConfig, environ: Mapping[str, str]) -> OllamaProvider:
    sdk = require_sdk("ollama", NAME)
    timeout = config.timeout_s if config.timeout_s is not None else 600.0
    client = sdk.AsyncClient(host=config.base_url or environ.get("OLLAMA_HOST"), timeout=timeout)
    return OllamaProvider(sdk, client, config)
