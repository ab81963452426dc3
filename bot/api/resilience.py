"""Client-side rate limiting and retry back-off for the API client.

Both run on real (monotonic) time: asyncio's loop does not follow simulated clocks, and
rate limits are a property of the real server. Sleep and time functions are injectable so
tests stay fast and deterministic.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from typing import Final

__all__ = ["Backoff", "TokenBucket", "parse_retry_after"]

_MAX_RETRY_AFTER_SECONDS: Final = 3600.0


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


class Backoff:
    """Exponential back-off with full jitter and a cap; honours a server's Retry-After."""

    def __init__(self, base: float, cap: float, rng: random.Random | None = None) -> None:
        self._base = base
        self._cap = cap
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1).

        With a Retry-After, wait at least that long (plus up to 10% jitter), capped.
        """
        jitter: float = self._rng.random()
        if retry_after is not None:
            return min(self._cap, retry_after * (1 + 0.1 * jitter))
        ceiling = min(self._cap, self._base * 2.0 ** (attempt - 1))
        return ceiling * (0.5 + 0.5 * jitter)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, _MAX_RETRY_AFTER_SECONDS))
