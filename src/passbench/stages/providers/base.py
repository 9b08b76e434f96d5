"""The Provider protocol and the value objects that cross it.

A provider only translates: a `ProviderRequest` becomes one call to a vendor API (or one slot in
a local engine's batch), and the answer becomes a `ProviderResponse`. Everything around that
call -- concurrency, rate limits, retries, timeouts, caching, usage and cost, progress -- lives
once in `passbench.stages.providers.runner`, so a new provider is one module and one registry line.

Failures cross the boundary as `ProviderCallError`: the provider says what happened on the wire
(HTTP status, headers, which parameter the server rejected); the runner decides what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from passbench.core.errors import ProviderError

#: Why a call failed, as far as the wire tells (see `classify` in
#: `passbench.stages.providers.errors`).
# "invalid": a local engine refused the request itself (a prompt longer than the model's
# context); asking again cannot help.
FailureKind = Literal["http", "timeout", "connection", "malformed", "invalid"]


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters in passbench's own vocabulary; providers map them to wire names.

    `None` means "do not send; let the server use its default".
    """

    temperature: float | None = None
    top_p: float | None = None
    max_new_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    reasoning_effort: str | None = None  # "low" / "medium" / "high" (OpenAI-style models)
    thinking_budget: int | None = None  # token budget for thinking (Anthropic, Gemini)

    def as_dict(self) -> dict[str, Any]:
        """The parameters that are set, JSON-ready (for records and cache keys)."""
        out: dict[str, Any] = {}
        for name in (
            "temperature",
            "top_p",
            "max_new_tokens",
            "seed",
            "reasoning_effort",
            "thinking_budget",
        ):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.stop:
            out["stop"] = list(self.stop)
        return out


@dataclass(frozen=True)
class Capabilities:
    """What a provider (for the configured model) can do. The runner adapts requests to it.

    Declared by the provider, overridable per model in the config file (`[models.X]`), and
    never guessed from a model's name.
    """

    chat: bool = True  # accepts chat messages
    completion: bool = False  # accepts raw text for direct completion (base models)
    prefill: bool = False  # continues a partial assistant message (Prompt.response_prefix)
    chat_template: bool = False  # renders the model's chat template itself (hf, vllm): prompts
    # for such backends use the official local-backend wording (prompts.build_prompt's flag)
    max_n: int = 1  # most samples one request can return (1: no `n` parameter)
    temperature: bool = True
    top_p: bool = True
    max_tokens: bool = True
    stop: bool = True
    seed: bool = False
    reasoning: bool = False  # reasoning effort / thinking budget
    default_concurrency: int = 16  # requests in flight when the config does not say
    default_timeout_s: float | None = 300.0  # per request; None for local engines that queue

    def unsupported(self, params: GenerationParams) -> tuple[str, ...]:
        """Names of the set parameters in `params` this provider cannot take."""
        checks = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_new_tokens": self.max_tokens,
            "stop": self.stop,
            "seed": self.seed,
            "reasoning_effort": self.reasoning,
            "thinking_budget": self.reasoning,
        }
        set_params = params.as_dict()
        return tuple(name for name, ok in checks.items() if not ok and name in set_params)


@dataclass(frozen=True)
class ProviderRequest:
    """One call: one prompt, `n` samples of it.

    A provider uses `messages` when it is talking to a chat model and `text` for direct
    completion; `response_prefix` is the assistant prefill (empty when none or unsupported).
    `disabled` holds wire parameter names the server has rejected for this model; the provider
    leaves them out (or uses its alternative, e.g. `max_completion_tokens` for `max_tokens`).
    """

    text: str
    messages: tuple[Mapping[str, str], ...] = ()
    response_prefix: str = ""
    n: int = 1
    params: GenerationParams = field(default_factory=GenerationParams)
    disabled: frozenset[str] = frozenset()
    timeout_s: float | None = None

    def chat_messages(self) -> tuple[Mapping[str, str], ...]:
        """The chat messages, or the text as one user message for a chat-only backend."""
        return self.messages or ({"role": "user", "content": self.text},)


@dataclass(frozen=True)
class Choice:
    """One sample of a response."""

    text: str
    finish_reason: str | None = None
    # thinking the API returned apart from the answer (reasoning_content, thinking blocks,
    # thought parts); never part of `text`
    reasoning: str = ""


@dataclass(frozen=True)
class ProviderResponse:
    """What one call produced. `input_tokens` / `output_tokens` cover the whole call."""

    choices: tuple[Choice, ...]
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None  # the model id the server reports, when it reports one
    sent: Mapping[str, Any] = field(default_factory=dict)  # wire parameters actually sent


class ProviderCallError(ProviderError):
    """A call failed. Providers raise it; the runner classifies it and retries or stops.

    `rejected_param` is the wire name of a parameter the server said it does not support
    (a 400 such as "Unsupported parameter: 'max_tokens'"); the runner retries once without it.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind = "http",
        status: int | None = None,
        retry_after_s: float | None = None,
        rejected_param: str | None = None,
    ) -> None:
        self.kind = kind
        self.status = status
        self.retry_after_s = retry_after_s
        self.rejected_param = rejected_param
        self.bare_message = message
        prefix = f"HTTP {status}: " if status is not None else f"{kind}: "
        super().__init__(prefix + message)


@runtime_checkable
class Provider(Protocol):
    """A model backend: translate one request, report what it can do, release resources."""

    name: str  # registry name, recorded in Completion.provider
    model: str  # model id as sent to the backend, recorded in Completion.model

    @property
    def capabilities(self) -> Capabilities: ...

    async def generate(self, request: ProviderRequest) -> ProviderResponse: ...

    async def aclose(self) -> None: ...
