"""The openai provider through the real `openai` SDK against a fake OpenAI server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from passbench.core.errors import InputError, PermanentProviderError, ProviderError
from passbench.stages.providers import create_provider
from passbench.stages.providers.cache import ResponseCache

from .conftest import FAST_RETRY
from .helpers import chat_prompt, config, run, text_prompt
from .servers.base import Recorded, Reply, last_user_text
from .servers.openai_fake import BAD_KEY, MISSING_MODEL, OpenAIFake


def test_chat_samples_come_from_one_request_with_n(openai_server: OpenAIFake) -> None:
    cfg = config(
        "gpt-test",
        provider="openai",
        base_url=f"{openai_server.url}/v1",
        temperature=0.8,
        max_new_tokens=64,
        top_p=0.95,
    )
    completions, runner = run(cfg, [chat_prompt("T/0", "write add")], n_samples=3)

    bodies = openai_server.bodies("/chat/completions")
    assert len(bodies) == 1
    assert bodies[0]["n"] == 3
    assert bodies[0]["max_tokens"] == 64 and bodies[0]["temperature"] == 0.8
    assert bodies[0]["top_p"] == 0.95
    assert [c.sample_index for c in completions] == [0, 1, 2]
    # the server lists choices in reverse; each sample must still be its own index's choice
    assert [c.text.rstrip().endswith(f", {i}") for i, c in enumerate(completions)] == [True] * 3
    assert {c.provider for c in completions} == {"openai"}
    assert {c.model for c in completions} == {"gpt-test"}
    assert sum(c.usage.input_tokens for c in completions) == runner.usage.input_tokens == 3
    assert sum(c.usage.output_tokens for c in completions) == runner.usage.output_tokens == 21
    assert completions[0].finish_reason == "stop"
    assert completions[0].params["sent"]["max_tokens"] == 64


def test_text_prompt_uses_the_completions_endpoint(openai_server: OpenAIFake) -> None:
    cfg = config(
        "base-model",
        provider="openai",
        base_url=f"{openai_server.url}/v1",
        stop=["\ndef "],
        max_new_tokens=32,
    )
    completions, _ = run(cfg, [text_prompt("T/1", "def add(a, b):\n")])

    (body,) = openai_server.bodies("/v1/completions")
    assert body["prompt"] == "def add(a, b):\n"
    assert body["stop"] == ["\ndef "]
    assert "def add" in completions[0].text
    assert completions[0].finish_reason == "length"


def test_prefill_is_sent_as_a_final_assistant_message_when_declared(
    openai_server: OpenAIFake,
) -> None:
    cfg = config(
        "vllm-served",
        provider="openai",
        base_url=f"{openai_server.url}/v1",
        capabilities={"prefill": True},
    )
    completions, _ = run(cfg, [chat_prompt("T/2", "write add", prefix="```python\n")])

    (body,) = openai_server.bodies("/chat/completions")
    assert body["messages"][-1] == {"role": "assistant", "content": "```python\n"}
    assert body["continue_final_message"] is True
    assert body["add_generation_prompt"] is False
    assert completions[0].text.startswith("[continues '```python\\n']")
    assert completions[0].params["response_prefix"] == "```python\n"


def test_prefill_is_dropped_with_a_warning_when_unsupported(
    openai_server: OpenAIFake, progress
) -> None:
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1")
    run(
        cfg,
        [
            chat_prompt("T/2", "a", prefix="```python\n"),
            chat_prompt("T/3", "b", prefix="```python\n"),
        ],
        progress=progress,
    )

    assert all(len(body["messages"]) == 1 for body in openai_server.bodies("/chat/completions"))
    assert sum("prefix" in w for w in progress.warnings) == 1


def test_reasoning_model_rejections_are_learned_once(openai_server: OpenAIFake, progress) -> None:
    cfg = config(
        "o-reasoner",
        provider="openai",
        base_url=f"{openai_server.url}/v1",
        temperature=0.7,
        max_new_tokens=100,
        reasoning_effort="low",
        concurrency=1,
    )
    completions, runner = run(
        cfg, [chat_prompt("T/0", "a"), chat_prompt("T/1", "b")], progress=progress
    )

    bodies = openai_server.bodies("/chat/completions")
    # first prompt: 400 on max_tokens, 400 on temperature, then success; second: one call
    assert len(bodies) == 4
    assert "max_tokens" in bodies[0]
    assert "max_completion_tokens" in bodies[1] and "max_tokens" not in bodies[1]
    assert "temperature" not in bodies[2] and bodies[2]["max_completion_tokens"] == 100
    assert bodies[3]["reasoning_effort"] == "low" and "temperature" not in bodies[3]
    assert runner.usage.dropped_params == {"max_tokens", "temperature"}
    assert completions[1].params["rejected_by_server"] == ["max_tokens", "temperature"]
    assert sum("rejects" in w for w in progress.warnings) == 2


def test_drop_params_skips_the_failed_first_call(openai_server: OpenAIFake) -> None:
    cfg = config(
        "o-reasoner",
        provider="openai",
        base_url=f"{openai_server.url}/v1",
        temperature=0.7,
        max_new_tokens=100,
        drop_params=["max_tokens", "temperature"],
    )
    run(cfg, [chat_prompt("T/0", "a")])

    (body,) = openai_server.bodies("/chat/completions")
    assert body["max_completion_tokens"] == 100 and "temperature" not in body


@pytest.mark.parametrize(
    ("flags", "environ", "needle"),
    [
        ({}, {"OPENAI_API_KEY": BAD_KEY}, "401"),
        ({"model": MISSING_MODEL}, {}, "does not exist"),
    ],
)
def test_auth_and_unknown_model_stop_the_run(
    openai_server: OpenAIFake, flags, environ, needle
) -> None:
    cfg = config(
        "gpt-test", provider="openai", base_url=f"{openai_server.url}/v1", concurrency=1, **flags
    )
    prompts = [chat_prompt(f"T/{i}", "a") for i in range(10)]
    with pytest.raises(PermanentProviderError, match=needle):
        run(cfg, prompts, environ=environ, retry=FAST_RETRY)
    assert len(openai_server.requests) == 1


def test_bad_request_not_about_a_parameter_is_permanent(openai_server: OpenAIFake) -> None:
    openai_server.fail(
        400, body={"error": {"message": "messages: too long", "type": "invalid_request_error"}}
    )
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1", temperature=0.5)
    with pytest.raises(PermanentProviderError, match="too long"):
        run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)


def test_rate_limit_honours_retry_after(openai_server: OpenAIFake, progress) -> None:
    openai_server.fail(429, headers={"Retry-After": "1"})
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1")
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], progress=progress, retry=FAST_RETRY)

    assert len(completions) == 1 and len(openai_server.requests) == 2
    assert runner.usage.rate_limited == 1
    # the wait is the server's second plus at most 10% of base_s as jitter
    (warning,) = progress.warnings
    assert "HTTP 429" in warning and "in 1.0s" in warning


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried(openai_server: OpenAIFake, status: int) -> None:
    openai_server.fail(status, times=2)
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1")
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)
    assert len(completions) == 1
    assert runner.usage.retries == 2 and runner.usage.requests == 1


def test_malformed_body_is_retried(openai_server: OpenAIFake) -> None:
    openai_server.malformed()
    openai_server.malformed(body=b'{"id": "x", "object": "chat.completion", "choices": []}')
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1")
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)
    assert len(completions) == 1 and runner.usage.retries == 2


def test_timeout_is_retried(openai_server: OpenAIFake, progress) -> None:
    openai_server.hang(3.0)
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1", timeout_s=0.5)
    completions, runner = run(cfg, [chat_prompt("T/0", "a")], progress=progress, retry=FAST_RETRY)
    assert len(completions) == 1 and runner.usage.retries == 1
    assert "timed out" in progress.warnings[0] or "timeout" in progress.warnings[0]


def test_retries_give_up_with_a_provider_error(openai_server: OpenAIFake) -> None:
    openai_server.fail(503, times=10)
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1")
    with pytest.raises(ProviderError, match="giving up after 4 tries") as caught:
        run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)
    assert not isinstance(caught.value, PermanentProviderError)
    assert len(openai_server.requests) == 4


def test_connection_refused_is_transient() -> None:
    closed = OpenAIFake()
    url = closed.url
    closed.close()
    cfg = config("gpt-test", provider="openai", base_url=f"{url}/v1")
    with pytest.raises(ProviderError, match="cannot reach the server") as caught:
        run(cfg, [chat_prompt("T/0", "a")], retry=FAST_RETRY)
    assert not isinstance(caught.value, PermanentProviderError)


def test_seed_differs_per_sample_and_is_reproducible(openai_server: OpenAIFake) -> None:
    cfg = config(
        "gpt-test",
        provider="openai",
        base_url=f"{openai_server.url}/v1",
        seed=10,
        samples_per_request=1,
        concurrency=1,
    )
    run(cfg, [chat_prompt("T/0", "a")], n_samples=3)
    assert sorted(body["seed"] for body in openai_server.bodies()) == [10, 11, 12]
    assert all("n" not in body for body in openai_server.bodies())


def test_azure_openai_paths_and_key_header(openai_server: OpenAIFake) -> None:
    cfg = config(
        "my-deployment",
        provider="openai",
        base_url=openai_server.url,
        options={"api_version": "2024-10-21"},
    )
    completions, _ = run(cfg, [chat_prompt("T/0", "a")], environ={"AZURE_OPENAI_API_KEY": "k"})
    (request,) = openai_server.requests
    assert request.path.startswith("/openai/deployments/my-deployment/chat/completions")
    assert "api-version=2024-10-21" in request.path
    assert request.headers["api-key"] == "k"
    assert len(completions) == 1


def test_missing_key_for_the_real_service_is_an_input_error() -> None:
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        create_provider(config("gpt-test", provider="openai"), {})


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_sent_beside_the_answer_is_kept_apart(field: str) -> None:
    # DeepSeek, SGLang and vLLM < 0.10 send reasoning_content; vLLM since sends reasoning
    server = OpenAIFake(reasoning_field=field)
    try:
        cfg = config("r1", provider="openai", base_url=f"{server.url}/v1", temperature=0.6)
        completions, _ = run(cfg, [chat_prompt("T/0", "write add")], n_samples=2)
    finally:
        server.close()
    for index, completion in enumerate(completions):
        assert completion.text.startswith("def answer():") and "draft" not in completion.text
        assert completion.reasoning.startswith("Let me draft it.")
        assert f"'draft', {index}" in completion.reasoning
        assert completion.truncated == ""


def test_inline_thinking_is_taken_out_of_the_answer(openai_server: OpenAIFake) -> None:
    class InlineThinking(OpenAIFake):
        def answer(self, request: Recorded) -> Reply:
            reply = super().answer(request)
            for choice in reply.body["choices"]:
                answer = choice["message"]["content"]
                prompt = last_user_text(request.body["messages"])
                if "unclosed" in prompt:  # still thinking when the tokens ran out
                    choice["message"]["content"] = "<think>\nfirst: def answer(): pass"
                    choice["finish_reason"] = "stop"  # a stop sequence cut it, not the limit
                else:
                    choice["message"]["content"] = f"<think>\nA draft.\n</think>\n\n{answer}"
            return reply

    server = InlineThinking()
    try:
        cfg = config("qwq", provider="openai", base_url=f"{server.url}/v1")
        done, unclosed = run(
            cfg, [chat_prompt("T/0", "write add"), chat_prompt("T/1", "unclosed")]
        )[0]
    finally:
        server.close()
    assert done.text.startswith("def answer():") and "<think>" not in done.text
    assert done.reasoning == "A draft." and done.truncated == ""
    assert unclosed.text == "" and unclosed.reasoning == "first: def answer(): pass"
    assert unclosed.truncated == "thinking section never closed"


def test_an_answer_cut_by_the_token_limit_is_marked_truncated(openai_server: OpenAIFake) -> None:
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1")
    whole, cut = run(cfg, [chat_prompt("T/0", "write add"), chat_prompt("T/1", "[cut] add")])[0]
    assert whole.truncated == "" and whole.finish_reason == "stop"
    assert cut.finish_reason == "length"
    assert cut.truncated == "token limit (finish reason 'length')"


def test_a_response_cached_with_its_thinking_inline_is_separated_when_read(
    openai_server: OpenAIFake, tmp_path: Path
) -> None:
    cache_path = tmp_path / "cache.sqlite"
    cfg = config("qwq", provider="openai", base_url=f"{openai_server.url}/v1")
    prompts = [chat_prompt("T/0", "write add")]
    (first,), _ = run(cfg, prompts, cache=ResponseCache(cache_path))
    # as a passbench that kept the thinking inline cached it: no reasoning, no truncated
    db = sqlite3.connect(cache_path)
    (key, value), *_ = db.execute("SELECT key, value FROM samples").fetchall()
    row = json.loads(value)
    row = {k: v for k, v in row.items() if k not in ("reasoning", "truncated")}
    row["text"] = "<think>\nhmm\n</think>\n\n" + first.text
    with db:
        db.execute("UPDATE samples SET value = ? WHERE key = ?", (json.dumps(row), key))
    db.close()
    openai_server.close()  # anything not answered from the cache would now fail
    (again,), _ = run(cfg, prompts, cache=ResponseCache(cache_path))
    assert again.text == first.text and again.reasoning == "hmm" and again.truncated == ""
