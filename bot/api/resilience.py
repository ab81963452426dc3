"""Client-side rate limiting for the API client, and its numbers for the one retry policy.

The rate limiter runs on real (monotonic) time: asyncio's loop does not follow simulated
clocks, and rate limits are a property of the real server. Sleep and time functions are
injectable so tests stay fast and deterministic. Retry back-off and the `Retry-After`
parser are `bot.retry`'s; this module holds the API's configuration of them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Final

from bot.retry import Backoff, Jitter

__all__ = [
    "API_BACKOFF_BASE_SECONDS",
    "API_BACKOFF_CAP_SECONDS",
    "API_RETRY_AFTER_LIMIT_SECONDS",
    "TokenBucket",
    "api_backoff",
]

API_BACKOFF_BASE_SECONDS: Final = 0.5
API_BACKOFF_CAP_SECONDS: Final = 30.0
API_RETRY_AFTER_LIMIT_SECONDS: Final = 3600.0
"""A 429's `Retry-After` is read up to an hour (`RateLimited.retry_after`: the token bucket
is paused that long); a retry waits for it at most the back-off cap."""


def api_backoff(
    base: float = API_BACKOFF_BASE_SECONDS,
    cap: float = API_BACKOFF_CAP_SECONDS,
    rng: Jitter | None = None,
) -> Backoff:
    """The API client's back-off: `base` doubling up to `cap`.

    A Retry-After is honoured (plus up to 10%) up to `cap` too.
    """
    return Backoff(base, cap, rng, retry_after_cap=cap)


class TokenBucket:
    """Allows `rate` requests per second on average, with bursts of up to `burst`.

    Waiters are served in arrival order (an asyncio lock), so one busy caller cannot
    starve the others.
    """

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst ≥ 1")
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._monotonic = monotonic
        self._sleep = sleep
        self._stamp = monotonic()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now

    async def acquire(self) -> None:
        """Wait until one request may be sent."""
        async with self._lock:
            self._refill()
            while self._tokens < 1:
                await self._sleep((1 - self._tokens) / self._rate)
                self._refill()
            self._tokens -= 1

    def pause(self, seconds: float) -> None:
        """Spend the bucket so nothing is sent for about `seconds` (after a 429)."""
        self._refill()
        self._tokens = min(self._tokens, -seconds * self._rate + 1)
