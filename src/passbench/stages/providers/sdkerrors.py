"""Turning exceptions of the generated vendor SDKs into `ProviderCallError`.

The OpenAI and Anthropic SDKs share one exception layout (APIStatusError with `status_code`,
`response` and `body`; APITimeoutError under APIConnectionError; APIResponseValidationError),
so one function serves both; the other providers translate their own in their modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import ModuleType

from passbench.stages.providers.base import ProviderCallError
from passbench.stages.providers.failures import http_failure


def translate_sdk_error(
    sdk: ModuleType, error: Exception, sent: Iterable[str]
) -> ProviderCallError:
    """The ProviderCallError for an exception raised by an OpenAI-style SDK call."""
    if isinstance(error, ProviderCallError):
        return error
    if isinstance(error, sdk.APIResponseValidationError):
        return ProviderCallError(f"unreadable response: {error}", kind="malformed")
    if isinstance(error, sdk.APIStatusError):
        message = getattr(error, "message", None) or str(error)
        return http_failure(
            error.status_code,
            message,
            headers=dict(error.response.headers),
            body=error.body,
            sent=sent,
        )
    if isinstance(error, sdk.APITimeoutError):
        return ProviderCallError(f"request timed out: {error}", kind="timeout")
    if isinstance(error, sdk.APIConnectionError):
        cause = error.__cause__ or error
        return ProviderCallError(f"cannot reach the server: {cause!r}", kind="connection")
    if isinstance(error, ValueError):  # JSONDecodeError and pydantic's ValidationError
        return ProviderCallError(f"unreadable response: {error!r}", kind="malformed")
    raise error


@contextmanager
def reading_response(provider: str) -> Iterator[None]:
    """Around the code that reads a response: a missing or mistyped field is a malformed body
    (a transient failure to retry), not a crash."""
    try:
        yield
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as error:
        raise ProviderCallError(
            f"unreadable {provider} response: {error!r}", kind="malformed"
        ) from error


def _httpx_modules() -> list[ModuleType]:
    """The httpx packages the installed SDKs may use (some moved to `httpx2`)."""
    modules = []
    for name in ("httpx2", "httpx"):
        try:
            modules.append(importlib.import_module(name))
        except ImportError:
            continue
    return modules


def transport_failure(error: BaseException) -> ProviderCallError | None:
    """A timeout or connection failure raised by httpx / httpx2, as a ProviderCallError."""
    for module in _httpx_modules():
        if isinstance(error, module.TimeoutException):
            return ProviderCallError(f"request timed out: {error!r}", kind="timeout")
        if isinstance(error, module.TransportError):
            return ProviderCallError(f"cannot reach the server: {error!r}", kind="connection")
    if isinstance(error, TimeoutError):
        return ProviderCallError(f"request timed out: {error!r}", kind="timeout")
    if isinstance(error, ConnectionError):
        return ProviderCallError(f"cannot reach the server: {error!r}", kind="connection")
    return None
