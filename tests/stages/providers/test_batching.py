"""MicroBatcher gathers concurrent calls and groups them by key."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Sequence

import pytest

from passbench.stages.providers.batching import MicroBatcher


def test_concurrent_calls_share_batches_by_key() -> None:
    seen: list[tuple[Hashable, list[int]]] = []

    def run(key: Hashable, items: Sequence[int]) -> list[int]:
        seen.append((key, list(items)))
        return [item * 10 for item in items]

    async def go() -> list[int]:
        batcher: MicroBatcher[int, int] = MicroBatcher(run, max_batch=4)
        calls = [batcher.submit("even" if i % 2 == 0 else "odd", i) for i in range(10)]
        return list(await asyncio.gather(*calls))

    assert asyncio.run(go()) == [i * 10 for i in range(10)]
    assert all(len(items) <= 4 for _, items in seen)
    assert all(all(i % 2 == (0 if key == "even" else 1) for i in items) for key, items in seen)
    assert len(seen) < 10


def test_an_error_reaches_every_caller_of_its_batch() -> None:
    def run(key: Hashable, items: Sequence[int]) -> list[int]:
        raise RuntimeError("engine died")

    async def go() -> None:
        batcher: MicroBatcher[int, int] = MicroBatcher(run)
        await asyncio.gather(*(batcher.submit("k", i) for i in range(3)))

    with pytest.raises(RuntimeError, match="engine died"):
        asyncio.run(go())


def test_an_error_for_one_item_reaches_only_its_caller() -> None:
    def run(key: Hashable, items: Sequence[int]) -> list[int | BaseException]:
        return [ValueError(f"item {i} too long") if i == 2 else i * 10 for i in items]

    async def go() -> list[int | BaseException]:
        batcher: MicroBatcher[int, int] = MicroBatcher(run)
        calls = [batcher.submit("k", i) for i in range(4)]
        return list(await asyncio.gather(*calls, return_exceptions=True))

    results = asyncio.run(go())
    assert results[:2] == [0, 10] and results[3] == 30
    assert isinstance(results[2], ValueError) and "item 2" in str(results[2])


def test_one_batcher_serves_one_event_loop_after_another() -> None:
    # A provider (and its batcher) reused by two asyncio.run calls must answer both.
    batcher: MicroBatcher[int, int] = MicroBatcher(lambda key, items: [i + 1 for i in items])

    async def go(start: int) -> list[int]:
        return list(await asyncio.gather(*(batcher.submit("k", start + i) for i in range(3))))

    assert asyncio.run(asyncio.wait_for(go(0), 5)) == [1, 2, 3]
    assert asyncio.run(asyncio.wait_for(go(10), 5)) == [11, 12, 13]
