"""Token buckets with a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from passbench.stages.providers.ratelimit import RateLimiter, TokenBucket


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_bucket_holds_one_second_and_refills_at_the_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(600, clock=clock)  # 10 a second
    assert bucket.capacity == 10
    bucket.adjust(10)
    assert bucket.wait_time(1) == pytest.approx(0.1)
    clock.now = 0.5
    assert bucket.wait_time(5) == 0.0
    assert bucket.wait_time(6) == pytest.approx(0.1)


def test_oversized_request_waits_for_a_full_bucket_then_goes_into_debt() -> None:
    clock = Clock()
    bucket = TokenBucket(60, clock=clock)  # 1 a second, capacity 1
    assert bucket.wait_time(50) == 0.0
    bucket.adjust(50)
    assert bucket.wait_time(1) == pytest.approx(50.0)


def test_limiter_paces_requests() -> None:
    clock = Clock()
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    async def go() -> None:
        limiter = RateLimiter(
            requests_per_minute=1200, clock=clock, sleep=fake_sleep
        )  # 20 a second, burst 20
        for _ in range(30):
            await limiter.acquire(0)

    asyncio.run(go())
    # 20 at once, then 10 more at 20 a second
    assert sum(slept) == pytest.approx(0.5)
    assert len(slept) == 10


def test_pause_holds_everyone() -> None:
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    limiter.pause(3.0)
    limiter.pause(1.0)  # a shorter pause does not shorten the longer one
    assert limiter._paused_until == 3.0
