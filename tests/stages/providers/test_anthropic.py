"""The anthropic provider through the real `anthropic` SDK against a fake Messages API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.core.errors import InputError, PermanentProviderError
from passbench.stages.providers import create_provider

from .conftest import FAST_RETRY
from .helpers import chat_prompt, config, run
from .servers.anthropic_fake import BAD_KEY, MISSING_MODEL, AnthropicFake

ENV = {"ANTHROPIC_API_KEY": "test-key"}


@pytest.fixture
def server() -> Iterator[AnthropicFake]:
    fake = AnthropicFake(rejects={"claude-no-temp": {"temperature"}})
    yield fake
    fake.close()


def test_one_call_per_sample_with_system_and_prefill(server: AnthropicFake) -> None:
    cfg = config(
        "claude-test",
        provider="anthropic",
        base_url=server.url,
        temperature=0.5,
        max_new_tokens=100,
        stop=["\n```"],
    )
    prompt = chat_prompt("T/0", "write add", prefix="```python\n")
    prompt = type(prompt)(
        task_id="T/0",
        split="instruct",
        text="write add",
        response_prefix="```python\n",
        messages=(
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "write add"},
        ),
    )
    completions, runner = run(cfg, [prompt], n_samples=2, environ=ENV)

    bodies = server.bodies("/v1/messages")
    assert len(bodies) == 2
    body = bodies[0]
    assert body["system"] == "be brief"
    assert body["messages"] == [
        {"role": "user", "content": "write add"},
        {"role": "assistant", "content": "```python"},
    ]
    assert body["max_tokens"] == 100 and body["temperature"] == 0.5
    assert body["stop_sequences"] == ["\n```"]
    headers = server.requests[0].headers
    assert "test-key" in (
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
    )
    assert [c.sample_index for c in completions] == [0, 1]
    assert completions[0].finish_reason == "end_turn"
    assert runner.usage.output_tokens == 18 and runner.usage.requests == 2


def test_thinking_budget_and_thinking_blocks_are_left_out(server: AnthropicFake) -> None:
    cfg = config("claude-test", provider="anthropic", base_url=server.url, thinking_budget=2048)
    completions, _ = run(cfg, [chat_prompt("T/0", "a")], environ=ENV)
    (body,) = server.bodies("/v1/messages")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 4096
    assert "let me think" not in completions[0].text and "def answer" in completions[0].text


def test_rejected_temperature_is_dropped(server: AnthropicFake) -> None:
    cfg = config("claude-no-temp", provider="anthropic", base_url=server.url, temperature=1.0)
    _, runner = run(cfg, [chat_prompt("T/0", "a")], environ=ENV)
    assert [("temperature" in b) for b in server.bodies()] == [True, False]
    assert runner.usage.dropped_params == {"temperature"}


@pytest.mark.parametrize(
    ("model", "key", "needle"),
    [
        ("claude-test", BAD_KEY, "invalid x-api-key"),
        (MISSING_MODEL, "k", "not_found_error|missing-model"),
    ],
)
def test_permanent_errors(server: AnthropicFake, model: str, key: str, needle: str) -> None:
    cfg = config(model, provider="anthropic", base_url=server.url)
    with pytest.raises(PermanentProviderError, match=needle):
        run(cfg, [chat_prompt("T/0", "a")], environ={"ANTHROPIC_API_KEY": key}, retry=FAST_RETRY)


def test_overloaded_and_rate_limited_are_retried(server: AnthropicFake) -> None:
    server.fail(529)
    server.fail(429, headers={"retry-after-ms": "20"})
    server.malformed(body=b'{"type": "message", "content": ')
    cfg = config("claude-test", provider="anthropic", base_url=server.url)
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], environ=ENV, retry=FAST_RETRY)
    assert len(completions) == 1
    assert runner.usage.retries == 3 and runner.usage.rate_limited == 1


def test_missing_key_is_an_input_error() -> None:
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY"):
        create_provider(config("claude-test", provider="anthropic"), {})


def test_thinking_blocks_are_kept_as_reasoning_and_max_tokens_is_truncation(
    server: AnthropicFake,
) -> None:
    cfg = config("claude-test", provider="anthropic", base_url=server.url, thinking_budget=2048)
    whole, cut = run(cfg, [chat_prompt("T/0", "a"), chat_prompt("T/1", "[cut] b")], environ=ENV)[0]
    assert whole.reasoning == "let me think" and whole.truncated == ""
    assert cut.finish_reason == "max_tokens"
    assert cut.truncated == "token limit (finish reason 'max_tokens')"
