"""The google provider through the real `google-genai` SDK against a fake generateContent API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.core.errors import InputError, PermanentProviderError
from passbench.stages.providers import create_provider
from passbench.stages.providers.retry import RetryPolicy

from .conftest import FAST_RETRY
from .helpers import chat_prompt, config, run
from .servers.google_fake import BAD_KEY, MISSING_MODEL, GoogleFake

ENV = {"GEMINI_API_KEY": "test-key"}


@pytest.fixture
def server() -> Iterator[GoogleFake]:
    fake = GoogleFake(rejects={"gemini-no-seed": {"seed"}})
    yield fake
    fake.close()


def test_candidates_system_and_thinking(server: GoogleFake) -> None:
    cfg = config(
        "gemini-test",
        provider="google",
        base_url=server.url,
        temperature=0.2,
        max_new_tokens=50,
        seed=1,
        thinking_budget=128,
    )
    prompt = type(chat_prompt("T/0", "a"))(
        task_id="T/0",
        split="instruct",
        text="write add",
        messages=(
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "write add"},
        ),
    )
    completions, runner = run(cfg, [prompt], n_samples=3, environ=ENV)

    (request,) = server.requests
    assert request.headers["x-goog-api-key"] == "test-key"
    gen = request.body["generationConfig"]
    assert gen["candidateCount"] == 3 and gen["maxOutputTokens"] == 50 and gen["seed"] == 1
    # protobuf JSON accepts either spelling; SDK releases differ in which they send
    assert list(gen["thinkingConfig"].values()) == [128]
    assert request.body["systemInstruction"]["parts"][0]["text"] == "be brief"
    assert [c.text.rstrip().endswith(f", {c.sample_index}") for c in completions] == [True] * 3
    assert all("thinking..." not in c.text for c in completions)
    assert completions[0].finish_reason == "STOP"
    assert runner.usage.output_tokens == 15


def test_rejected_field_is_dropped(server: GoogleFake) -> None:
    cfg = config("gemini-no-seed", provider="google", base_url=server.url, seed=3)
    _, runner = run(cfg, [chat_prompt("T/0", "a")], environ=ENV)
    assert ["seed" in r.body["generationConfig"] for r in server.requests] == [True, False]
    assert runner.usage.dropped_params == {"seed"}


@pytest.mark.parametrize(
    ("model", "key", "needle"),
    [
        ("gemini-test", BAD_KEY, "API key not valid"),
        (MISSING_MODEL, "k", "not found"),
    ],
)
def test_permanent_errors(server: GoogleFake, model: str, key: str, needle: str) -> None:
    cfg = config(model, provider="google", base_url=server.url)
    with pytest.raises(PermanentProviderError, match=needle):
        run(cfg, [chat_prompt("T/0", "a")], environ={"GEMINI_API_KEY": key}, retry=FAST_RETRY)
    assert len(server.requests) == 1


def test_transient_failures_are_retried(server: GoogleFake) -> None:
    server.fail(429, headers={"Retry-After": "0"})
    server.fail(503)
    server.malformed(body=b"{not json")
    server.hang(3.0)
    cfg = config("gemini-test", provider="google", base_url=server.url, timeout_s=0.5)
    retry = RetryPolicy(max_retries=4, base_s=0.01, max_s=0.05)
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], environ=ENV, retry=retry)
    assert len(completions) == 1
    assert runner.usage.retries == 4 and runner.usage.rate_limited == 1


def test_missing_key_is_an_input_error() -> None:
    with pytest.raises(InputError, match="GEMINI_API_KEY"):
        create_provider(config("gemini-test", provider="google"), {})


def test_thought_parts_are_kept_as_reasoning_and_max_tokens_is_truncation(
    server: GoogleFake,
) -> None:
    cfg = config("gemini-test", provider="google", base_url=server.url, thinking_budget=128)
    whole, cut = run(cfg, [chat_prompt("T/0", "a"), chat_prompt("T/1", "[cut] b")], environ=ENV)[0]
    assert whole.reasoning == "thinking..." and "thinking" not in whole.text
    assert whole.truncated == ""
    assert cut.finish_reason == "MAX_TOKENS"
    assert cut.truncated == "token limit (finish reason 'MAX_TOKENS')"
