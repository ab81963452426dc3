from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from bot.api.resilience import Backoff, TokenBucket, parse_retry_after

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp()


def http_date(offset: float) -> str:
    return format_datetime(datetime.fromtimestamp(NOW + offset, tz=UTC), usegmt=True)


# --- Retry-After ------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [("120", 120.0), (" 1.5 ", 1.5), ("0", 0.0)])
def test_retry_after_seconds(value: str, expected: float) -> None:
    assert parse_retry_after(value) == expected


def test_retry_after_http_date_relative_to_now() -> None:
    assert parse_retry_after(http_date(90), now=NOW) == pytest.approx(90.0)


def test_retry_after_date_in_past_is_zero() -> None:
    assert parse_retry_after(http_date(-90), now=NOW) == 0.0


@pytest.mark.parametrize("value", [None, "", "soon", "nan", "Wed, 99 Foo 2024"])
def test_retry_after_garbage_is_none(value: str | None) -> None:
    assert parse_retry_after(value, now=NOW) is None


def test_retry_after_negative_is_zero() -> None:
    assert parse_retry_after("-5") == 0.0


@pytest.mark.parametrize("value", ["86400", "inf"])
def test_retry_after_capped_at_one_hour(value: str) -> None:
    assert parse_retry_after(value) == 3600.0
    assert parse_retry_after(http_date(86400), now=NOW) == 3600.0


# --- back-off ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_backoff_grows_within_bounds(seed: int) -> None:
    backoff = Backoff(0.5, 30.0, random.Random(seed))
    delays = [backoff.delay(attempt) for attempt in range(1, 10)]
    for attempt, delay in enumerate(delays, start=1):
        ceiling = min(30.0, 0.5 * 2 ** (attempt - 1))
        assert ceiling / 2 <= delay <= ceiling
    uncapped = delays[:6]  # ceilings 0.5 … 16: each delay at least the previous ceiling
    assert uncapped == sorted(uncapped)
    assert min(delays[6:]) >= 15.0


def test_backoff_capped() -> None:
    backoff = Backoff(1.0, 5.0, random.Random(1))
    assert all(backoff.delay(attempt) <= 5.0 for attempt in range(1, 50))


def test_backoff_honours_retry_after_with_small_jitter() -> None:
    backoff = Backoff(0.5, 30.0, random.Random(3))
    for _ in range(50):
        delay = backoff.delay(1, retry_after=10.0)
        assert 10.0 <= delay <= 11.0


def test_backoff_retry_after_capped() -> None:
    assert Backoff(0.5, 30.0, random.Random(0)).delay(1, retry_after=600.0) == 30.0


def test_backoff_deterministic_with_seed() -> None:
    first = Backoff(0.5, 30.0, random.Random(42))
    second = Backoff(0.5, 30.0, random.Random(42))
    sequence = [first.delay(a) for a in range(1, 8)]
    assert sequence == [second.delay(a) for a in range(1, 8)]
    other = Backoff(0.5, 30.0, random.Random(43))
    assert sequence != [other.delay(a) for a in range(1, 8)]


# --- token bucket -----------------------------------------------------------------


class VirtualClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def bucket(clock: VirtualClock, rate: float, burst: int) -> TokenBucket:
    return TokenBucket(rate, burst, monotonic=clock.monotonic, sleep=clock.sleep)


@pytest.mark.parametrize(("n", "rate", "burst"), [(20, 4.0, 4), (10, 0.5, 1), (5, 10.0, 5)])
async def test_bucket_rate(n: int, rate: float, burst: int) -> None:
    clock = VirtualClock()
    limiter = bucket(clock, rate, burst)
    for _ in range(n):
        await limiter.acquire()
    assert clock.now - 1000.0 == pytest.approx(max(0, n - burst) / rate)


async def test_bucket_burst_is_free() -> None:
    clock = VirtualClock()
    limiter = bucket(clock, 2.0, 3)
    for _ in range(3):
        await limiter.acquire()
    assert clock.sleeps == []


async def test_bucket_concurrent_callers_share_rate() -> None:
    clock = VirtualClock()
    limiter = bucket(clock, 4.0, 2)
    await asyncio.gather(*(limiter.acquire() for _ in range(10)))
    assert clock.now - 1000.0 == pytest.approx(8 / 4.0)


async def test_bucket_pause_delays_next_acquire() -> None:
    clock = VirtualClock()
    limiter = bucket(clock, 4.0, 4)
    limiter.pause(7.5)
    await limiter.acquire()
    assert clock.now - 1000.0 == pytest.approx(7.5)


async def test_bucket_pause_counts_elapsed_time() -> None:
    clock = VirtualClock()
    limiter = bucket(clock, 4.0, 4)
    limiter.pause(5.0)
    clock.now += 2.0
    await limiter.acquire()
    assert clock.now - 1000.0 == pytest.approx(5.0)


@pytest.mark.parametrize(("rate", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_bucket_rejects_bad_settings(rate: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(rate, burst)
