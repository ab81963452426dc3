"""limit_ladder: N rungs below the market, quiet inside the band, re-placed past it."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from pydantic import ValidationError

from bot.engine.strategy import CancelLimit, CreateLimit
from strategies.limit_ladder import LimitLadder, rung_rate
from tests.unit.strategies.support import APT, NOW, USDC, Ticker, build, market, order

PARAMS = {
    "sell_token": "USDC",
    "buy_token": "APT",
    "rungs": 3,
    "spacing_percent": "2",
    "amount_per_rung": "50",
    "redrift_percent": "5",
    "expiry": "1 day",
}


def ticker(**extra: object) -> Ticker:
    return Ticker(build(LimitLadder, "ladder", **{**PARAMS, **extra}))


def rung(o: str, status: str = "active") -> object:
    return order(o, kind="limit", status=status, sell=USDC, buy=APT, total="50")


async def test_places_n_rungs_below_the_market() -> None:
    t = ticker()
    actions = await t.tick(prices=market(apt="10"))
    assert all(isinstance(a, CreateLimit) for a in actions)
    limits = [a for a in actions if isinstance(a, CreateLimit)]
    assert [a.key for a in limits] == [
        "ladder:ladder:0:1",
        "ladder:ladder:0:2",
        "ladder:ladder:0:3",
    ]
    # Prices 9.8, 9.6, 9.4 USDC per APT: rates in APT per USDC.
    expected = [Decimal(1) / Decimal(p) for p in ("9.8", "9.6", "9.4")]
    for limit, want in zip(limits, expected, strict=True):
        assert abs(limit.rate - want) < Decimal("1e-12")
        assert (limit.sell, limit.buy, limit.amount) == ("USDC", "APT", Decimal(50))
        assert (limit.expiry_value, limit.expiry_period) == (1, "day")
    assert t.state["anchor"] == Decimal(10)


async def test_nothing_while_the_market_stays_in_the_band() -> None:
    t = ticker()
    await t.tick(prices=market(apt="10"))
    live = [rung("r1"), rung("r2"), rung("r3")]
    for apt in ("10.4", "9.6", "10.5", "9.5"):
        assert await t.tick(prices=market(apt=apt), orders=live) == []


async def test_cancels_and_replaces_past_the_band() -> None:
    t = ticker()
    await t.tick(prices=market(apt="10"))
    filled = rung("r1", status="filled")
    other_pair = order("x", kind="limit", sell=APT, buy=USDC)
    orders = [rung("r3"), rung("r2"), filled, other_pair]
    actions = await t.tick(prices=market(apt="11"), orders=orders)
    cancels = [a for a in actions if isinstance(a, CancelLimit)]
    assert [(c.order_id, c.key) for c in cancels] == [
        ("r3", "ladder:cancel:r3"),
        ("r2", "ladder:cancel:r2"),
    ]
    limits = [a for a in actions if isinstance(a, CreateLimit)]
    assert [a.key for a in limits] == [
        "ladder:ladder:1:1",
        "ladder:ladder:1:2",
        "ladder:ladder:1:3",
    ]
    assert limits[0].rate == rung_rate(Decimal(11), 1, Decimal(2))
    assert actions.index(cancels[-1]) < actions.index(limits[0])
    # The new anchor holds: the same price again is inside the band.
    assert await t.tick(prices=market(apt="11")) == []


async def test_replaces_an_expired_ladder() -> None:
    t = ticker()
    await t.tick(prices=market(apt="10"))
    assert await t.tick(now=NOW + timedelta(hours=23), prices=market(apt="10")) == []
    actions = await t.tick(now=NOW + timedelta(days=1), prices=market(apt="10"))
    assert [a.key for a in actions] == [
        "ladder:ladder:1:1",
        "ladder:ladder:1:2",
        "ladder:ladder:1:3",
    ]


async def test_waits_without_prices() -> None:
    t = ticker()
    assert await t.tick(prices=market(apt=None)) == []
    assert t.log().events("warning") == ["limit_ladder.no_price"]
    assert t.state == {}


def test_rungs_must_stay_above_zero() -> None:
    with pytest.raises(ValidationError, match="below 100"):
        LimitLadder.Params.model_validate({**PARAMS, "rungs": 10, "spacing_percent": "10"})


async def test_rungs_that_never_took_are_asked_for_again_inside_the_band() -> None:
    t = ticker()
    placed = await t.tick(prices=market(apt="10"))
    # The first rung was placed, the second failed (its key freed), the third refused.
    intents = {placed[0].key: "confirmed", f"{placed[1].key}~failed-2": "failed"}
    again = await t.tick(prices=market(apt="10.2"), orders=[rung("r1")], intents=intents)
    assert [a.key for a in again] == [placed[1].key, placed[2].key]
    assert again == placed[1:]  # the same rungs: same keys, rates and amounts
