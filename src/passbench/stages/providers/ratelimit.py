"""Requests-per-minute and tokens-per-minute limits: token buckets shared by all requests.

A bucket holds at most one second's worth of its rate, so a limit of 600 requests/min lets 10
requests start each second rather than 600 at once (servers count over windows shorter than a
minute, and a burst of a whole minute's quota is what gets a client 429s).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

Sleep = Callable[[float], Awaitable[None]]


class TokenBucket:
    """Refills at `per_minute / 60` units a second up to `capacity`; waiters are served in order."""

    def __init__(
        self,
        per_minute: float,
        *,
        capacity: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if per_minute <= 0:
            raise ValueError("a rate limit must be positive")
        self.rate = per_minute / 60.0
        self.capacity = capacity if capacity is not None else max(1.0, self.rate)
        self._clock = clock
        self._sleep = sleep
        self._level = self.capacity
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def wait_time(self, amount: float) -> float:
        """Seconds until `amount` can be taken (a request larger than the bucket waits for full)."""
        self._refill()
        need = min(amount, self.capacity)
        if self._level >= need - 1e-9:  # float rounding must not leave a wait of 1e-18 s
            return 0.0
        return (need - self._level) / self.rate

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait for `amount` units, then take them (the level may go below zero for big ones)."""
        async with self._lock:
            delay = self.wait_time(amount)
            while delay > 0:
                await self._sleep(delay)
                delay = self.wait_time(amount)
            self._level -= amount

    def adjust(self, amount: float) -> None:
        """Take (positive) or give back (negative) units after the fact, e.g. actual tokens used."""
        self._refill()
        self._level = min(self.capacity, self._level - amount)


class RateLimiter:
    """Both limits plus a shared pause, so one 429 with Retry-After holds back every request."""

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self.requests = (
            TokenBucket(requests_per_minute, clock=clock, sleep=sleep)
            if requests_per_minute
            else None
        )
        self.tokens = (
            TokenBucket(tokens_per_minute, clock=clock, sleep=sleep) if tokens_per_minute else None
        )
        self._paused_until = 0.0

    def pause(self, seconds: float) -> None:
        """Hold every request back for `seconds` (a server said so)."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)

    async def acquire(self, estimated_tokens: int) -> None:
        """Wait until one more request, with about `estimated_tokens` tokens, may start."""
        while (remaining := self._paused_until - self._clock()) > 0:
            await self._sleep(remaining)
        if self.requests is not None:
            await self.requests.acquire(1)
        if self.tokens is not None:
            await self.tokens.acquire(estimated_tokens)

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        """Correct the token bucket once a response says how many tokens the call really took."""
        if self.tokens is not None:
            self.tokens.adjust(actual_tokens - estimated_tokens)
