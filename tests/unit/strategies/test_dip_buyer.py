"""dip_buyer: buys on a 24 h drop or a fall below the moving average, then cools down."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from pydantic import ValidationError

from bot.engine.strategy import Swap
from strategies.dip_buyer import DipBuyer
from tests.unit.strategies.support import NOW, Ticker, build, market

PARAMS = {
    "sell_token": "USDC",
    "buy_token": "APT",
    "amount": "100",
    "drop_percent": "5",
    "cooldown": "12 hour",
}


def ticker(**extra: object) -> Ticker:
    return Ticker(build(DipBuyer, "dips", **{**PARAMS, **extra}))


def window(hours: float) -> int:
    return int((NOW + timedelta(hours=hours)).timestamp() // (12 * 3600))


async def test_buys_on_a_24h_drop() -> None:
    t = ticker()
    assert await t.tick(prices=market(apt_change="-4.9")) == []
    actions = await t.tick(prices=market(apt_change="-5"))
    assert actions == [
        Swap(key=f"dips:dip:{window(0)}", sell="USDC", buy="APT", sell_amount=Decimal(100))
    ]


async def test_respects_the_cooldown() -> None:
    t = ticker()
    assert len(await t.tick(prices=market(apt_change="-8"))) == 1
    for hours in (0, 1, 11.9):
        later = NOW + timedelta(hours=hours)
        assert await t.tick(now=later, prices=market(apt_change="-9")) == []
    assert "dip_buyer.cooling_down" in t.log().events()
    again = await t.tick(now=NOW + timedelta(hours=12), prices=market(apt_change="-9"))
    assert [a.key for a in again] == [f"dips:dip:{window(12)}"]


async def test_a_repeated_tick_without_saved_state_keeps_the_key() -> None:
    first = await ticker().tick(prices=market(apt_change="-8"))
    second = await ticker().tick(now=NOW + timedelta(hours=2), prices=market(apt_change="-8"))
    assert [a.key for a in first] == [a.key for a in second]


async def test_buys_below_the_moving_average() -> None:
    t = ticker(use_change_24h=False, ma_ticks=3)
    for i, apt in enumerate(("10", "10.2", "9.8")):
        assert await t.tick(now=NOW + timedelta(hours=i), prices=market(apt=apt)) == []
    # Average 10: 9.6 is only 4 % below it.
    assert await t.tick(now=NOW + timedelta(hours=3), prices=market(apt="9.6")) == []
    # The average is now (10.2 + 9.8 + 9.6) / 3 = 9.8666…; 9.3 is 5.7 % below.
    actions = await t.tick(now=NOW + timedelta(hours=4), prices=market(apt="9.3"))
    assert [a.sell_amount for a in actions if isinstance(a, Swap)] == [Decimal(100)]
    assert len(t.state["prices"]) == 3


async def test_the_24h_trigger_can_be_turned_off() -> None:
    t = ticker(use_change_24h=False, ma_ticks=2)
    assert await t.tick(prices=market(apt_change="-50")) == []


def test_needs_a_trigger() -> None:
    with pytest.raises(ValidationError, match="turn on a trigger"):
        DipBuyer.Params.model_validate({**PARAMS, "use_change_24h": False})
