"""Reading failures off the wire, and deciding what each one means.

Providers call `http_failure` with what their SDK exposes (status, headers, body); the runner
calls `classify`. Nothing here knows a vendor: the same rules hold for every HTTP API.

    rate_limit   429                               wait (Retry-After when given), retry
    transient    408 409 425 5xx 529, timeouts,     back off with jitter, retry
                 connection errors, malformed bodies
    rejected     400/422 naming a parameter the     retry once without that parameter
                 server does not support
    permanent    other 4xx (400, 401, 403, 404...)  stop the run: PermanentProviderError
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from passbench.stages.providers.base import ProviderCallError

Verdict = Literal["rate_limit", "transient", "rejected", "permanent"]

_TRANSIENT_STATUSES = frozenset({408, 409, 425, 500, 502, 503, 504, 520, 522, 524, 529})
# Words servers use when a parameter is the problem rather than its value's range.
_UNSUPPORTED_MARKERS = re.compile(
    r"unsupported|not supported|does not support|not permitted|extra inputs|extra_forbidden"
    r"|unknown (?:parameter|field|argument|name)|cannot find field|unrecognized|not allowed"
    r"|unexpected keyword"
    r"|cannot both be specified|only the default",
    re.IGNORECASE,
)
_UNSUPPORTED_CODES = frozenset(
    {"unsupported_parameter", "unsupported_value", "extra_forbidden", "unknown_parameter"}
)


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait from `Retry-After` (seconds or an HTTP date) or `retry-after-ms`."""
    if not headers:
        return None
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _error_object(body: Any) -> Mapping[str, Any]:
    """The `{"error": {...}}` object most JSON APIs return, or the body itself."""
    if isinstance(body, (str, bytes)):
        try:
            body = json.loads(body)
        except ValueError:
            return {}
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if not isinstance(body, Mapping):
        return {}
    inner = body.get("error")
    if isinstance(inner, Mapping):
        return inner
    return body


def rejected_param(message: str, body: Any, sent: Iterable[str]) -> str | None:
    """The wire parameter a 400/422 says is unsupported, if it names one we sent."""
    sent_names = [name for name in sent if name]
    if not sent_names:
        return None
    error = _error_object(body)
    param = error.get("param")
    code = str(error.get("code") or error.get("type") or "")
    if isinstance(param, str) and param in sent_names and code in _UNSUPPORTED_CODES:
        return param
    # pydantic-style validation details (vLLM, SGLang, Mistral): {"loc": ["body", "seed"]}
    details = error.get("detail")
    if isinstance(details, list):
        for item in details:
            if isinstance(item, Mapping) and str(item.get("type", "")) in _UNSUPPORTED_CODES:
                for loc in reversed(list(item.get("loc") or [])):
                    if loc in sent_names:
                        return str(loc)
    text = " ".join(
        part for part in (message, str(error.get("message") or "")) if part and part != "None"
    )
    if not _UNSUPPORTED_MARKERS.search(text):
        return None
    positions = []
    for name in sent_names:
        match = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text)
        if match:
            positions.append((match.start(), name))
    if not positions:
        return None
    if isinstance(param, str) and param in sent_names:
        return param
    return min(positions)[1]


def http_failure(
    status: int,
    message: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: Any = None,
    sent: Iterable[str] = (),
) -> ProviderCallError:
    """A `ProviderCallError` for an HTTP error answer, with Retry-After and rejected param read."""
    rejected = rejected_param(message, body, sent) if status in (400, 422) else None
    return ProviderCallError(
        message.strip() or f"HTTP {status}",
        kind="http",
        status=status,
        retry_after_s=parse_retry_after(headers),
        rejected_param=rejected,
    )


def classify(error: ProviderCallError) -> Verdict:
    """What the runner should do about a failed call."""
    if error.kind == "invalid":
        return "permanent"
    if error.kind != "http" or error.status is None:
        return "transient"  # timeouts, refused / reset connections, bodies we could not read
    if error.status == 429:
        return "rate_limit"
    if error.status in _TRANSIENT_STATUSES or error.status >= 500:
        return "transient"
    if error.rejected_param is not None:
        return "rejected"
    return "permanent"
