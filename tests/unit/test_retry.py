"""The one retry policy (`bot.retry`): back-off, Retry-After, and each caller's numbers."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from bot.api.client import PanoraClient
from bot.api.errors import RateLimited
from bot.api.resilience import API_RETRY_AFTER_LIMIT_SECONDS, api_backoff
from bot.chain.errors import NodeRateLimited
from bot.chain.node import NodeClient
from bot.chain.wire import NODE_RETRY_AFTER_LIMIT_SECONDS, node_backoff
from bot.clock import SteppedClock
from bot.ops.alerts import DeliveryTuning
from bot.retry import Backoff, parse_retry_after
from tests.support.virtual_time import VirtualTime

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)


def http_date(offset: float) -> str:
    return format_datetime(NOW + timedelta(seconds=offset), usegmt=True)


class Draws:
    """A jitter source that replays fixed draws and counts them."""

    def __init__(self, *values: float) -> None:
        self.values = list(values)
        self.drawn = 0

    def random(self) -> float:
        value = self.values[self.drawn % len(self.values)]
        self.drawn += 1
        return value


# --- Retry-After --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"), [("120", 120.0), (" 1.5 ", 1.5), ("0", 0.0), ("-5", 0.0)]
)
def test_retry_after_delta_seconds(value: str, expected: float) -> None:
    assert parse_retry_after(value, now=NOW, limit=3600) == expected


def test_retry_after_http_date_is_measured_from_the_injected_now() -> None:
    assert parse_retry_after(http_date(90), now=NOW, limit=3600) == 90.0
    later = NOW + timedelta(seconds=60)
    assert parse_retry_after(http_date(90), now=later, limit=3600) == 30.0


def test_retry_after_date_in_the_past_is_zero() -> None:
    assert parse_retry_after(http_date(-90), now=NOW, limit=3600) == 0.0


def test_retry_after_date_without_a_zone_is_gmt() -> None:
    assert parse_retry_after("Wed, 01 May 2024 12:02:00 -0000", now=NOW, limit=3600) == 120.0


@pytest.mark.parametrize("value", [None, "", "soon", "nan", "Wed, 99 Foo 2024"])
def test_retry_after_garbage_is_none(value: str | None) -> None:
    assert parse_retry_after(value, now=NOW, limit=3600) is None


@pytest.mark.parametrize("value", ["86400", "inf", "1e400", http_date(86400)])
def test_retry_after_held_to_the_callers_limit(value: str) -> None:
    assert parse_retry_after(value, now=NOW, limit=3600) == 3600.0
    assert parse_retry_after(value, now=NOW, limit=600) == 600.0


def test_retry_after_refuses_a_naive_now() -> None:
    with pytest.raises(ValueError, match="naive"):
        parse_retry_after(http_date(90), now=NOW.replace(tzinfo=None), limit=3600)


# --- back-off -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_backoff_doubles_within_half_to_full_ceiling(seed: int) -> None:
    backoff = Backoff(0.5, 30.0, random.Random(seed))
    delays = [backoff.delay(attempt) for attempt in range(1, 10)]
    for attempt, delay in enumerate(delays, start=1):
        ceiling = min(30.0, 0.5 * 2 ** (attempt - 1))
        assert ceiling / 2 <= delay <= ceiling
    uncapped = delays[:6]  # ceilings 0.5 … 16: each delay at least the previous ceiling
    assert uncapped == sorted(uncapped)
    assert min(delays[6:]) >= 15.0


def test_backoff_exact_values_from_the_draw() -> None:
    backoff = Backoff(1.0, 5.0, Draws(0.0, 1.0, 0.5))
    assert [backoff.delay(a) for a in (1, 2, 3, 4)] == [0.5, 2.0, 3.0, 2.5]


def test_backoff_never_overflows_after_a_very_long_outage() -> None:
    backoff = Backoff(1.0, 60.0, Draws(0.999))
    assert 59.9 < backoff.delay(10_000) <= 60.0  # 2.0 ** 9999 would raise OverflowError


def test_backoff_one_draw_per_delay() -> None:
    draws = Draws(0.3)
    backoff = Backoff(1.0, 5.0, draws, retry_after_cap=math.inf)
    backoff.delay(1)
    backoff.delay(2, retry_after=3.0)
    assert draws.drawn == 2


def test_retry_after_replaces_the_backoff_with_up_to_ten_percent() -> None:
    backoff = Backoff(0.5, 30.0, Draws(0.0, 1.0))
    assert backoff.delay(5, retry_after=10.0) == 10.0
    assert backoff.delay(5, retry_after=10.0) == pytest.approx(11.0)


def test_retry_after_held_to_the_cap_by_default() -> None:
    assert Backoff(0.5, 30.0, Draws(0.5)).delay(1, retry_after=600.0) == 30.0


def test_retry_after_cap_can_be_lifted() -> None:
    backoff = Backoff(0.25, 5.0, Draws(0.0), retry_after_cap=math.inf)
    assert backoff.delay(1, retry_after=600.0) == 600.0


def test_at_least_backoff_takes_the_longer_wait() -> None:
    backoff = Backoff(
        1.0, 60.0, Draws(1.0), retry_after_cap=120.0, retry_after_jitter=0, at_least_backoff=True
    )
    assert backoff.delay(4, retry_after=2.0) == 8.0  # the back-off is longer
    assert backoff.delay(1, retry_after=50.0) == 50.0  # the server asked for longer
    assert backoff.delay(1, retry_after=500.0) == 120.0  # held to retry_after_cap


def test_backoff_deterministic_with_a_seed() -> None:
    def sequence(seed: int) -> list[float]:
        backoff = Backoff(0.5, 30.0, random.Random(seed))
        return [backoff.delay(a) for a in range(1, 8)]

    assert sequence(42) == sequence(42)
    assert sequence(42) != sequence(43)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base": 0.0, "cap": 1.0},
        {"base": 1.0, "cap": -1.0},
        {"base": 1.0, "cap": 1.0, "retry_after_cap": -1.0},
        {"base": 1.0, "cap": 1.0, "retry_after_jitter": -0.1},
    ],
)
def test_backoff_refuses_bad_numbers(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Backoff(**kwargs)  # type: ignore[arg-type]


def test_attempts_count_from_one() -> None:
    with pytest.raises(ValueError, match="from 1"):
        Backoff(1.0, 2.0).delay(0)


# --- each caller's numbers ------------------------------------------------------------


def test_the_api_waits_for_retry_after_up_to_its_cap() -> None:
    backoff = api_backoff(0.5, 30.0, Draws(1.0))
    assert backoff.delay(1) == 0.5
    assert backoff.delay(1, retry_after=7.0) == pytest.approx(7.7)
    assert backoff.delay(1, retry_after=600.0) == 30.0


def test_the_node_honours_retry_after_above_its_cap() -> None:
    backoff = node_backoff(5.0, Draws(1.0))
    assert [backoff.delay(a) for a in (1, 2, 3, 10)] == [0.25, 0.5, 1.0, 5.0]
    assert backoff.delay(1, retry_after=600.0) == pytest.approx(660.0)


def test_alert_delivery_waits_the_longer_and_never_jitters_retry_after() -> None:
    backoff = DeliveryTuning().backoff(Draws(0.0))
    assert backoff.delay(1) == 0.5
    assert backoff.delay(1, retry_after=7.0) == 7.0
    assert backoff.delay(1, retry_after=3600.0) == 120.0
    assert backoff.delay(8, retry_after=7.0) == 30.0  # 128 s ceiling, capped at 60, halved


# --- the clients read a Retry-After date against their injected clock ------------------


async def test_the_api_client_dates_retry_after_by_its_clock() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"statusCode": 429, "message": "slow", "status": "fail"}
        return httpx.Response(429, json=body, headers={"retry-after": http_date(45)})

    time = VirtualTime()
    client = PanoraClient(
        base_url="http://provider.test",
        api_key=None,
        max_attempts=2,
        backoff=api_backoff(0.5, 30.0, Draws(0.0)),
        transport=httpx.MockTransport(handler),
        sleep=time.sleep,
        monotonic=time.monotonic,
        clock=SteppedClock(NOW),
    )
    async with client:
        with pytest.raises(RateLimited) as raised:
            await client.get_prices()
    assert raised.value.retry_after == 45.0
    assert time.sleeps[0] == 30.0  # the retry waits at most the cap …
    assert sum(time.sleeps) == pytest.approx(45.0)  # … and the paused bucket the rest
    assert API_RETRY_AFTER_LIMIT_SECONDS == 3600.0


async def test_the_node_client_dates_retry_after_by_its_clock() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"message": "rate", "error_code": "rate", "vm_error_code": None}
        return httpx.Response(429, json=body, headers={"retry-after": http_date(20)})

    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    node = NodeClient(
        "http://node.test/v1",
        transport=httpx.MockTransport(handler),
        max_attempts=2,
        sleep=sleep,
        rng=Draws(0.0),
        clock=SteppedClock(NOW),
    )
    async with node:
        with pytest.raises(NodeRateLimited) as raised:
            await node.estimate_gas_price()
    assert raised.value.retry_after == 20.0
    assert sleeps == [20.0]  # honoured in full (above the 5 s cap), no jitter at draw 0
    assert NODE_RETRY_AFTER_LIMIT_SECONDS == 600.0
