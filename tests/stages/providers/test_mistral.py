"""The mistral provider through the real `mistralai` SDK against a fake chat API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.core.errors import InputError, PermanentProviderError
from passbench.stages.providers import create_provider

from .conftest import FAST_RETRY
from .helpers import chat_prompt, config, run
from .servers.mistral_fake import BAD_KEY, MISSING_MODEL, MistralFake

ENV = {"MISTRAL_API_KEY": "test-key"}


@pytest.fixture
def server() -> Iterator[MistralFake]:
    fake = MistralFake(rejects={"mistral-no-seed": {"random_seed"}})
    yield fake
    fake.close()


def test_n_samples_prefix_and_parameters(server: MistralFake) -> None:
    cfg = config(
        "mistral-test",
        provider="mistral",
        base_url=server.url,
        temperature=0.3,
        max_new_tokens=40,
        seed=5,
        stop=["\n\n\n"],
    )
    completions, runner = run(
        cfg, [chat_prompt("T/0", "write add", prefix="```python\n")], n_samples=2, environ=ENV
    )

    (request,) = server.requests
    assert request.headers["authorization"] == "Bearer test-key"
    body = request.body
    assert body["n"] == 2 and body["random_seed"] == 5 and body["max_tokens"] == 40
    assert body["messages"][-1] == {"role": "assistant", "content": "```python\n", "prefix": True}
    assert [c.text.rstrip().endswith(f", {c.sample_index}") for c in completions] == [True, True]
    assert runner.usage.output_tokens == 8


def test_rejected_field_is_dropped(server: MistralFake) -> None:
    cfg = config("mistral-no-seed", provider="mistral", base_url=server.url, seed=3)
    _, runner = run(cfg, [chat_prompt("T/0", "a")], environ=ENV)
    assert ["random_seed" in r.body for r in server.requests] == [True, False]
    assert runner.usage.dropped_params == {"random_seed"}


@pytest.mark.parametrize(
    ("model", "key", "needle"),
    [
        ("mistral-test", BAD_KEY, "401"),
        (MISSING_MODEL, "k", "Invalid model"),
    ],
)
def test_permanent_errors(server: MistralFake, model: str, key: str, needle: str) -> None:
    cfg = config(model, provider="mistral", base_url=server.url)
    with pytest.raises(PermanentProviderError, match=needle):
        run(cfg, [chat_prompt("T/0", "a")], environ={"MISTRAL_API_KEY": key}, retry=FAST_RETRY)


def test_transient_failures_are_retried(server: MistralFake) -> None:
    server.fail(429, headers={"Retry-After": "0"})
    server.fail(502)
    server.malformed(body=b'{"id": 1')
    cfg = config("mistral-test", provider="mistral", base_url=server.url)
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], environ=ENV, retry=FAST_RETRY)
    assert len(completions) == 1 and runner.usage.retries == 3


def test_timeout_is_retried(server: MistralFake) -> None:
    server.hang(3.0)
    cfg = config("mistral-test", provider="mistral", base_url=server.url, timeout_s=0.5)
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], environ=ENV, retry=FAST_RETRY)
    assert len(completions) == 1 and runner.usage.retries == 1


def test_missing_key_is_an_input_error() -> None:
    with pytest.raises(InputError, match="MISTRAL_API_KEY"):
        create_provider(config("mistral-test", provider="mistral"), {})


def test_thinking_chunks_are_kept_as_reasoning_and_length_is_truncation(
    server: MistralFake,
) -> None:
    cfg = config("magistral", provider="mistral", base_url=server.url, reasoning_effort="high")
    whole, cut = run(cfg, [chat_prompt("T/0", "a"), chat_prompt("T/1", "[cut] b")], environ=ENV)[0]
    assert whole.reasoning == "weighing it" and "weighing" not in whole.text
    assert whole.text.startswith("def answer():") and whole.truncated == ""
    assert cut.truncated == "token limit (finish reason 'length')"
