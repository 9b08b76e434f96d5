"""The shared machinery in ModelRunner: cache, concurrency, stop-at-once, usage, cost, progress."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from passbench.core.errors import PermanentProviderError
from passbench.stages.providers import ModelRunner, create_provider
from passbench.stages.providers.cache import ResponseCache

from .conftest import FAST_RETRY
from .helpers import chat_prompt, config, run
from .servers.openai_fake import BAD_KEY, OpenAIFake


def test_rerun_is_served_from_the_cache(
    openai_server: OpenAIFake, tmp_path: Path, progress
) -> None:
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1", temperature=0.8)
    prompts = [chat_prompt(f"T/{i}", f"task {i}") for i in range(3)]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    first, _ = run(cfg, prompts, n_samples=2, cache=cache)
    assert len(openai_server.requests) == 3

    again, runner = run(
        cfg, prompts, n_samples=2, cache=ResponseCache(tmp_path / "cache.sqlite"), progress=progress
    )
    assert len(openai_server.requests) == 3  # nothing new asked
    assert [(c.task_id, c.sample_index, c.text) for c in again] == [
        (c.task_id, c.sample_index, c.text) for c in first
    ]
    assert runner.usage.cached_samples == 6 and runner.usage.requests == 0
    assert progress.advanced == 6


def test_more_samples_asks_only_for_the_new_ones(openai_server: OpenAIFake, tmp_path: Path) -> None:
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1")
    cache = ResponseCache(tmp_path / "c.sqlite")
    run(cfg, [chat_prompt("T/0", "a")], n_samples=2, cache=cache)
    completions, _ = run(cfg, [chat_prompt("T/0", "a")], n_samples=5, cache=cache)
    bodies = openai_server.bodies()
    assert [b.get("n", 1) for b in bodies] == [2, 3]
    assert [c.sample_index for c in completions] == [0, 1, 2, 3, 4]


def test_samples_numbered_from_a_first_index_keep_its_seed_and_cache_key(
    openai_server: OpenAIFake, tmp_path: Path
) -> None:
    """A follow-up continues one sample's conversation: it is that sample, by index."""
    cfg = config("gpt-test", provider="openai", base_url=f"{openai_server.url}/v1", seed=10)
    cache = ResponseCache(tmp_path / "c.sqlite")

    async def go(first_index: int) -> list[int]:
        provider = create_provider(cfg, {})
        runner = ModelRunner(provider, cfg, cache=cache)
        try:
            prompts = [chat_prompt("T/0", "a")]
            return [
                completion.sample_index
                async for completion in runner.iter_completions(prompts, 1, first_index=first_index)
            ]
        finally:
            await provider.aclose()

    assert asyncio.run(go(3)) == [3]
    assert [body.get("seed") for body in openai_server.bodies()] == [13]
    assert asyncio.run(go(3)) == [3] and len(openai_server.requests) == 1  # cached as sample 3
    run(cfg, [chat_prompt("T/0", "a")], n_samples=4, cache=cache)
    assert [body.get("n", 1) for body in openai_server.bodies()] == [1, 3]  # 0-2 were missing


def test_changed_parameters_miss_the_cache(openai_server: OpenAIFake, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    for temperature in (0.2, 0.8):
        cfg = config(
            "gpt-test",
            provider="openai",
            base_url=f"{openai_server.url}/v1",
            temperature=temperature,
        )
        run(cfg, [chat_prompt("T/0", "a")], cache=cache)
    assert len(openai_server.requests) == 2


def test_concurrency_reaches_its_bound_and_never_passes_it() -> None:
    """The first three requests are answered only once all three are open together (a
    rendezvous in the server), so a serial runner fails here as surely as an unbounded one."""
    server = OpenAIFake(latency_s=0.05, rendezvous=3)
    try:
        cfg = config("gpt-test", provider="openai", base_url=f"{server.url}/v1", concurrency=3)
        completions, _ = run(cfg, [chat_prompt(f"T/{i}", "a") for i in range(12)])
        assert len(completions) == 12
        assert server.rendezvous_met
        assert server.max_in_flight == 3
    finally:
        server.close()


def test_permanent_error_stops_everything_at_once() -> None:
    server = OpenAIFake(latency_s=0.05)
    try:
        cfg = config("gpt-test", provider="openai", base_url=f"{server.url}/v1", concurrency=4)
        with pytest.raises(PermanentProviderError):
            run(
                cfg,
                [chat_prompt(f"T/{i}", "a") for i in range(50)],
                environ={"OPENAI_API_KEY": BAD_KEY},
                retry=FAST_RETRY,
            )
        assert len(server.requests) <= 4  # those already in flight, nothing after
    finally:
        server.close()


def test_cost_and_progress(openai_server: OpenAIFake, progress) -> None:
    cfg = config(
        "gpt-test",
        provider="openai",
        base_url=f"{openai_server.url}/v1",
        prices={"input": 1.0, "output": 2.0},
    )
    completions, runner = run(
        cfg, [chat_prompt("T/0", "a b c"), chat_prompt("T/1", "d")], n_samples=2, progress=progress
    )
    expected = (runner.usage.input_tokens * 1.0 + runner.usage.output_tokens * 2.0) / 1e6
    assert runner.usage.cost_usd == pytest.approx(expected)
    assert sum(c.usage.cost_usd or 0 for c in completions) == pytest.approx(expected)
    assert progress.started == [(4, "openai:gpt-test")]
    assert progress.advanced == 4 and progress.finished == 1
    assert "$" in progress.infos[-1] and "tok" in progress.infos[-1]


def test_fewer_choices_than_asked_are_asked_again(tmp_path: Path) -> None:
    class Stingy(OpenAIFake):
        def answer(self, request):  # type: ignore[no-untyped-def]
            reply = super().answer(request)
            reply.body["choices"] = reply.body["choices"][:1]
            return reply

    server = Stingy()
    try:
        cfg = config("gpt-test", provider="openai", base_url=f"{server.url}/v1")
        completions, _ = run(cfg, [chat_prompt("T/0", "a")], n_samples=3)
        assert [c.sample_index for c in completions] == [0, 1, 2]
        assert [b.get("n", 1) for b in server.bodies()] == [3, 2, 1]
    finally:
        server.close()
