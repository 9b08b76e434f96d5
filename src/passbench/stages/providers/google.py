"""Google Gemini through the official `google-genai` SDK (generateContent).

Several samples per call through `candidate_count`; `thinking_budget` is sent as the thinking
config, and thought parts are not part of the completion text: they are kept as the
choice's reasoning. The SDK is given an httpx client
of ours, so it never picks aiohttp just because that happens to be installed, and its own
retries are switched off (one attempt): the runner retries.

Options: api_version (default the SDK's), vertexai / project / location (Vertex AI).
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

NAME = "google"


def _translate(genai: ModuleType, error: Exception, sent: list[str]) -> ProviderCallError:
    errors = genai.errors
    if isinstance(error, errors.APIError):
        response = getattr(error, "response", None)
        headers = dict(response.headers) if response is not None else {}
        # a 400 names fields the way the wire does (camelCase); match either spelling
        wire_names = sent + [_camel(name) for name in sent]
        failure = http_failure(
            int(error.code),
            str(error.message or error),
            headers=headers,
            body=error.details,
            sent=wire_names,
        )
        if failure.rejected_param in wire_names[len(sent) :]:
            failure.rejected_param = sent[wire_names.index(failure.rejected_param) - len(sent)]
        return failure
    transport = transport_failure(error)
    if transport is not None:
        return transport
    if isinstance(error, ValueError):  # UnknownApiResponseError, JSON and validation errors
        return ProviderCallError(f"unreadable response: {error!r}", kind="malformed")
    raise error


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _parts(candidate: Any) -> list[Any]:
    content = candidate.content
    return list(content.parts) if content and content.parts else []


class GoogleProvider:
    name = NAME

    def __init__(self, genai: ModuleType, client: Any, http: Any, config: ModelConfig) -> None:
        self._genai = genai
        self._client = client
        self._http = http
        self.model = config.model
        self._capabilities = Capabilities(
            chat=True,
            completion=False,
            prefill=False,
            max_n=8,
            seed=True,
            reasoning=True,
            default_concurrency=16,
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def _config(self, request: ProviderRequest, system: str) -> dict[str, Any]:
        p = request.params
        values: dict[str, Any] = {
            "temperature": p.temperature,
            "top_p": p.top_p,
            "max_output_tokens": p.max_new_tokens,
            "stop_sequences": list(p.stop) or None,
            "seed": p.seed,
            "candidate_count": request.n if request.n > 1 else None,
        }
        if p.thinking_budget is not None:
            values["thinking_config"] = {"thinking_budget": p.thinking_budget}
        if system:
            values["system_instruction"] = system
        return {
            key: value
            for key, value in values.items()
            if value is not None and key not in request.disabled
        }

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        messages = request.chat_messages()
        system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
        contents = [
            {
                "role": "model" if m["role"] == "assistant" else "user",
                "parts": [{"text": m["content"]}],
            }
            for m in messages
            if m.get("role") != "system"
        ]
        config = self._config(request, system)
        typed = dict(config)
        if "thinking_config" in typed:
            typed["thinking_config"] = self._genai.types.ThinkingConfig(**typed["thinking_config"])
        try:
            raw = await self._client.aio.models.generate_content(
                model=self.model,
                contents=contents,
                config=self._genai.types.GenerateContentConfig(**typed),
            )
        except Exception as error:
            sent = [key for key in config if key != "system_instruction"]
            raise _translate(self._genai, error, sent) from error
        with reading_response(NAME):
            candidates = sorted(raw.candidates or [], key=lambda c: c.index or 0)
            if not candidates:
                raise ProviderCallError("response has no candidates", kind="malformed")
            choices = tuple(
                Choice(
                    text="".join(part.text or "" for part in _parts(c) if not part.thought),
                    reasoning="".join(part.text or "" for part in _parts(c) if part.thought),
                    finish_reason=str(
                        c.finish_reason.value
                        if hasattr(c.finish_reason, "value")
                        else c.finish_reason
                    )
                    if c.finish_reason is not None
                    else None,
                )
                for c in candidates
            )
            usage = raw.usage_metadata
            return ProviderResponse(
                choices=choices,
                input_tokens=int(usage.prompt_token_count or 0) if usage else 0,
                output_tokens=int(
                    (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
                )
                if usage
                else 0,
                model=raw.model_version or None,
                sent={k: v for k, v in config.items() if k != "system_instruction"},
            )

    async def aclose(self) -> None:
        await self._http.aclose()


def create(config: ModelConfig, environ: Mapping[str, str]) -> GoogleProvider:
    require_sdk("google.genai", NAME)
    genai = importlib.import_module("google.genai")
    try:
        httpx = importlib.import_module("httpx2")
    except ImportError:  # google-genai releases before httpx2 use httpx
        httpx = importlib.import_module("httpx")
    options = dict(config.options)
    timeout = config.timeout_s if config.timeout_s is not None else 300.0
    http = httpx.AsyncClient(timeout=timeout)
    http_options = genai.types.HttpOptions(
        base_url=config.base_url,
        api_version=options.get("api_version"),
        timeout=int(timeout * 1000),  # milliseconds
        retry_options=genai.types.HttpRetryOptions(attempts=1),
        httpx_async_client=http,
    )
    if options.get("vertexai"):
        client = genai.Client(
            vertexai=True,
            project=options.get("project"),
            location=options.get("location"),
            http_options=http_options,
        )
    else:
        key = config.api_key_from(environ, "GEMINI_API_KEY") or environ.get("GOOGLE_API_KEY")
        if key is None:
            raise InputError(
                "no API key: set GEMINI_API_KEY (or api_key_env in the model's config)",
                field="api_key",
            )
        client = genai.Client(api_key=key, http_options=http_options)
    return GoogleProvider(genai, client, http, config)
