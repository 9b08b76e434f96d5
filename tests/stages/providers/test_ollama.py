"""The ollama provider through the real `ollama` SDK against a fake Ollama server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.core.errors import PermanentProviderError, ProviderError

from .conftest import FAST_RETRY
from .helpers import chat_prompt, config, run, text_prompt
from .servers.ollama_fake import MISSING_MODEL, OllamaFake


@pytest.fixture
def server() -> Iterator[OllamaFake]:
    fake = OllamaFake()
    yield fake
    fake.close()


def test_chat_with_options_and_think(server: OllamaFake) -> None:
    cfg = config(
        "qwen-test",
        provider="ollama",
        base_url=server.url,
        temperature=0.2,
        max_new_tokens=64,
        seed=9,
        stop=["```\n"],
        reasoning_effort="low",
    )
    completions, runner = run(cfg, [chat_prompt("T/0", "write add")], n_samples=2)

    bodies = server.bodies("/api/chat")
    assert len(bodies) == 2  # one sample per call
    # the two calls run concurrently, so they may arrive in either order; sample i gets seed + i
    assert sorted(body["options"].pop("seed") for body in bodies) == [9, 10]
    assert bodies[0]["options"] == {"temperature": 0.2, "num_predict": 64, "stop": ["```\n"]}
    assert bodies[0]["think"] == "low"
    assert "hmm" not in completions[0].text and "write add" in completions[0].text
    assert runner.usage.input_tokens == 6 and runner.usage.output_tokens == 12
    assert completions[0].finish_reason == "stop"


def test_text_prompt_is_a_raw_generate(server: OllamaFake) -> None:
    cfg = config("base-test", provider="ollama", base_url=server.url)
    completions, _ = run(cfg, [text_prompt("T/0", "def add(a, b):\n")])
    (body,) = server.bodies("/api/generate")
    assert body["raw"] is True and body["prompt"] == "def add(a, b):\n"
    assert "def add" in completions[0].text


def test_prefill_when_declared(server: OllamaFake) -> None:
    cfg = config(
        "qwen-test", provider="ollama", base_url=server.url, capabilities={"prefill": True}
    )
    completions, _ = run(cfg, [chat_prompt("T/0", "a", prefix="```python\n")])
    assert server.bodies()[0]["messages"][-1] == {"role": "assistant", "content": "```python\n"}
    assert completions[0].text.startswith("```python\n")


def test_unknown_model_is_permanent(server: OllamaFake) -> None:
    cfg = config(MISSING_MODEL, provider="ollama", base_url=server.url)
    with pytest.raises(PermanentProviderError, match="not found"):
        run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)


def test_transient_failures_are_retried(server: OllamaFake) -> None:
    server.fail(503)
    server.fail(429)
    server.malformed(body=b"{]")
    cfg = config("qwen-test", provider="ollama", base_url=server.url)
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)
    assert len(completions) == 1 and runner.usage.retries == 3


def test_no_server_is_a_connection_failure() -> None:
    closed = OllamaFake()
    url = closed.url
    closed.close()
    cfg = config("qwen-test", provider="ollama", base_url=url)
    with pytest.raises(ProviderError, match="giving up") as caught:
        run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)
    assert not isinstance(caught.value, PermanentProviderError)


def test_thinking_is_kept_as_reasoning_and_length_is_truncation(server: OllamaFake) -> None:
    cfg = config("qwen-test", provider="ollama", base_url=server.url, reasoning_effort="low")
    whole, cut = run(cfg, [chat_prompt("T/0", "a"), chat_prompt("T/1", "[cut] b")])[0]
    assert whole.reasoning == "hmm" and "hmm" not in whole.text and whole.truncated == ""
    assert cut.finish_reason == "length"
    assert cut.truncated == "token limit (finish reason 'length')"
