"""How long to wait before trying a failed call again."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with "equal jitter" (half fixed, half random), bounded in tries and
    in each wait.

    A server's Retry-After wins over the computed backoff (plus a little jitter, so that the
    requests it held back do not all return in the same instant).
    """

    max_retries: int = 8  # retries after the first try, for rate limits and transient failures
    base_s: float = 1.0
    max_s: float = 60.0
    max_retry_after_s: float = 600.0  # a longer Retry-After is capped: better a 429 than a hang

    def delay(
        self, attempt: int, *, retry_after_s: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number `attempt` (1 for the first retry)."""
        uniform = rng.uniform if rng is not None else random.uniform
        if retry_after_s is not None:
            return min(retry_after_s, self.max_retry_after_s) + uniform(0, 0.1 * self.base_s)
        ceiling = min(self.max_s, self.base_s * (2 ** (attempt - 1)))
        return float(ceiling / 2 + uniform(0, ceiling / 2))
