from __future__ import annotations

import asyncio

import pytest

from bot.api.resilience import TokenBucket
from tests.support.virtual_time import VirtualTime

# Back-off and Retry-After: tests/unit/test_retry.py (one policy, `bot.retry`).

# --- token bucket -----------------------------------------------------------------


def bucket(clock: VirtualTime, rate: float, burst: int) -> TokenBucket:
    return TokenBucket(rate, burst, monotonic=clock.monotonic, sleep=clock.sleep)


@pytest.mark.parametrize(("n", "rate", "burst"), [(20, 4.0, 4), (10, 0.5, 1), (5, 10.0, 5)])
async def test_bucket_rate(n: int, rate: float, burst: int) -> None:
    clock = VirtualTime(yields=True)
    limiter = bucket(clock, rate, burst)
    for _ in range(n):
        await limiter.acquire()
    assert clock.now - 1000.0 == pytest.approx(max(0, n - burst) / rate)


async def test_bucket_burst_is_free() -> None:
    clock = VirtualTime(yields=True)
    limiter = bucket(clock, 2.0, 3)
    for _ in range(3):
        await limiter.acquire()
    assert clock.sleeps == []


async def test_bucket_concurrent_callers_share_rate() -> None:
    clock = VirtualTime(yields=True)
    limiter = bucket(clock, 4.0, 2)
    await asyncio.gather(*(limiter.acquire() for _ in range(10)))
    assert clock.now - 1000.0 == pytest.approx(8 / 4.0)


async def test_bucket_pause_delays_next_acquire() -> None:
    clock = VirtualTime(yields=True)
    limiter = bucket(clock, 4.0, 4)
    limiter.pause(7.5)
    await limiter.acquire()
    assert clock.now - 1000.0 == pytest.approx(7.5)


async def test_bucket_pause_counts_elapsed_time() -> None:
    clock = VirtualTime(yields=True)
    limiter = bucket(clock, 4.0, 4)
    limiter.pause(5.0)
    clock.now += 2.0
    await limiter.acquire()
    assert clock.now - 1000.0 == pytest.approx(5.0)


@pytest.mark.parametrize(("rate", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_bucket_rejects_bad_settings(rate: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(rate, burst)
