"""Reading Retry-After and rejected parameters, and classifying failures."""

from __future__ import annotations

import email.utils

import pytest

from passbench.stages.providers.base import ProviderCallError
from passbench.stages.providers.failures import (
    classify,
    http_failure,
    parse_retry_after,
    rejected_param,
)
from passbench.stages.providers.retry import RetryPolicy


def test_retry_after_seconds_date_and_millis() -> None:
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("message", "body", "expected"),
    [
        (
            "Unsupported parameter: 'max_tokens' is not supported with this model.",
            {"param": "max_tokens", "code": "unsupported_parameter"},
            "max_tokens",
        ),
        (
            "Unsupported value: 'temperature' does not support 0.2 with this model. "
            "Only the default (1) value is supported.",
            {"param": "temperature", "code": "unsupported_value"},
            "temperature",
        ),
        ("temperature: Extra inputs are not permitted", None, "temperature"),
        (
            "Invalid JSON payload received. Unknown name \"seed\" at 'generation_config': "
            "Cannot find field.",
            None,
            "seed",
        ),
        (
            "",
            {
                "detail": [
                    {"type": "extra_forbidden", "loc": ["body", "top_p"], "msg": "Extra inputs"}
                ]
            },
            "top_p",
        ),
        ("messages: too long", None, None),
        ("max_tokens must be at least 1", None, None),  # the value, not the parameter
    ],
)
def test_rejected_param(message: str, body: object, expected: str | None) -> None:
    sent = ["max_tokens", "temperature", "seed", "top_p"]
    assert rejected_param(message, body, sent) == expected


@pytest.mark.parametrize(
    ("status", "message", "verdict"),
    [
        (429, "slow down", "rate_limit"),
        (500, "oops", "transient"),
        (503, "busy", "transient"),
        (529, "overloaded", "transient"),
        (400, "Unsupported parameter: 'seed'", "rejected"),
        (400, "bad prompt", "permanent"),
        (401, "bad key", "permanent"),
        (403, "forbidden", "permanent"),
        (404, "no such model", "permanent"),
    ],
)
def test_classify_http(status: int, message: str, verdict: str) -> None:
    assert classify(http_failure(status, message, sent=["seed"])) == verdict


def test_classify_non_http() -> None:
    for kind in ("timeout", "connection", "malformed"):
        assert classify(ProviderCallError("x", kind=kind)) == "transient"  # type: ignore[arg-type]


def test_backoff_grows_is_capped_and_honours_retry_after() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=8.0)
    delays = [policy.delay(attempt) for attempt in range(1, 8)]
    assert all(
        0.5 * min(8, 2 ** (a - 1)) <= d <= min(8, 2 ** (a - 1))
        for a, d in zip(range(1, 8), delays, strict=True)
    )
    assert 5.0 <= policy.delay(1, retry_after_s=5.0) <= 5.1
    assert policy.delay(1, retry_after_s=10_000) <= policy.max_retry_after_s + 0.1
