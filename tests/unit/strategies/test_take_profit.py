"""take_profit: sells at targets above the average entry, placed once per entry."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from bot.engine.strategy import CancelLimit, CreateLimit
from strategies.take_profit import TakeProfit
from tests.unit.strategies.support import APT, USDC, Ticker, build, order

PARAMS = {
    "token": "APT",
    "quote_token": "USDC",
    "targets": [
        {"percent_above": "10", "fraction": "0.5"},
        {"percent_above": "25", "fraction": "0.25"},
    ],
    "expiry": "30 day",
}
BUYS = [
    order("b2", status="filled", total="110", spent="110", received="10"),
    order("b1", status="active", total="300", spent="100", received="10"),
]


def ticker(**extra: object) -> Ticker:
    return Ticker(build(TakeProfit, "tp", **{**PARAMS, **extra}))


async def test_places_targets_above_the_average_entry() -> None:
    t = ticker()
    actions = await t.tick(orders=BUYS, balances={APT: "20"})
    # Entry: (110 + 100) USDC / (10 + 10) APT = 10.5.
    assert actions == [
        CreateLimit(
            key="tp:tp:0:0",
            sell="APT",
            buy="USDC",
            amount=Decimal(10),
            rate=Decimal("11.55"),
            expiry_value=30,
            expiry_period="day",
        ),
        CreateLimit(
            key="tp:tp:0:1",
            sell="APT",
            buy="USDC",
            amount=Decimal(5),
            rate=Decimal("13.125"),
            expiry_value=30,
            expiry_period="day",
        ),
    ]


async def test_does_not_duplicate() -> None:
    t = ticker()
    await t.tick(orders=BUYS, balances={APT: "20"})
    sells = [order(f"s{i}", kind="limit", sell=APT, buy=USDC, total="5") for i in (1, 2)]
    assert await t.tick(orders=[*sells, *BUYS], balances={APT: "5"}) == []
    # A small move of the entry (1 %, the default band) changes nothing either.
    more = order("b3", status="filled", total="10.6", spent="10.6", received="1")
    assert await t.tick(orders=[more, *sells, *BUYS], balances={APT: "6"}) == []


async def test_replaces_the_targets_when_the_entry_moves() -> None:
    t = ticker()
    await t.tick(orders=BUYS, balances={APT: "20"})
    sell = order("s1", kind="limit", sell=APT, buy=USDC, total="10", spent="4")
    cheap = order("b3", status="filled", total="70", spent="70", received="10")
    actions = await t.tick(orders=[sell, cheap, *BUYS], balances={APT: "24"})
    assert actions[0] == CancelLimit(key="tp:cancel:s1", order_id="s1")
    limits = [a for a in actions if isinstance(a, CreateLimit)]
    # Entry 280 / 30; holding 24 + the 6 the live sell still holds.
    assert [a.key for a in limits] == ["tp:tp:1:0", "tp:tp:1:1"]
    assert [a.amount for a in limits] == [Decimal(15), Decimal("7.5")]
    assert limits[0].rate == Decimal("10.2666666667")


async def test_a_configured_entry_price_wins() -> None:
    t = ticker(entry_price="8", targets=[{"percent_above": "50", "fraction": "1"}])
    (action,) = await t.tick(orders=BUYS, balances={APT: "3"})
    assert isinstance(action, CreateLimit)
    assert (action.rate, action.amount) == (Decimal(12), Decimal(3))


async def test_waits_for_an_entry() -> None:
    t = ticker()
    assert await t.tick(balances={APT: "20"}) == []
    assert t.log().events("warning") == ["take_profit.no_entry"]


def test_fractions_must_not_exceed_the_holding() -> None:
    targets = [
        {"percent_above": "10", "fraction": "0.6"},
        {"percent_above": "20", "fraction": "0.5"},
    ]
    with pytest.raises(ValidationError, match="more than 1"):
        TakeProfit.Params.model_validate({**PARAMS, "targets": targets})


async def test_waits_for_a_known_balance() -> None:
    t = ticker()
    assert await t.tick(orders=BUYS) == []
    assert t.log().events("warning") == ["take_profit.no_balance"]
    assert t.state == {}


async def test_entry_from_another_strategy_counts_its_fills_but_never_touches_its_orders() -> None:
    from dataclasses import replace

    t = ticker(entry_from=["dca"])
    assert t.strategy.order_sources() == ["tp", "dca"]  # the engine passes these orders
    dca_fill = replace(
        order("d1", status="filled", total="100", spent="100", received="10"), strategy="dca"
    )
    # Another strategy's live sell of the same pair: not ours to cancel.
    foreign = replace(
        order("x1", kind="limit", sell=APT, buy=USDC, total="3", rate="99"), strategy="other"
    )
    actions = await t.tick(orders=[dca_fill, foreign], balances={APT: "10"})
    assert not [a for a in actions if isinstance(a, CancelLimit)]
    # Entry 100 USDC / 10 APT = 10: targets at 11 and 12.5.
    assert [a.rate for a in actions if isinstance(a, CreateLimit)] == [
        Decimal("11"),
        Decimal("12.5"),
    ]
