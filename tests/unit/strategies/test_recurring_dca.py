"""recurring_dca: one live DCA at a time, renewed with a new key once the last one ends."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from bot.engine.events import OrderFilled
from bot.engine.strategy import CreateDca
from strategies.recurring_dca import RecurringDca
from tests.unit.strategies.support import Ticker, build, context, order

PARAMS = {
    "from_token": "USDC",
    "to_token": "APT",
    "amount_per_order": "25",
    "orders": 7,
    "interval": "1 day",
}


def ticker(**extra: object) -> Ticker:
    return Ticker(build(RecurringDca, "weekly-apt", **{**PARAMS, **extra}))


async def test_creates_one_dca_and_repeats_the_same_key_until_it_shows_up() -> None:
    t = ticker()
    first = await t.tick()
    assert first == [
        CreateDca(
            key="weekly-apt:dca:0",
            sell="USDC",
            buy="APT",
            amount=Decimal(25),
            amount_type="perorder",
            orders=7,
            interval_value=1,
            interval_period="day",
        )
    ]
    # The order is not in the journal yet: the same key again, so nothing doubles.
    assert await t.tick() == first
    # Once it is live, nothing at all.
    assert await t.tick(orders=[order("o1", status="active")]) == []
    assert await t.tick(orders=[order("o1", status="partially_filled")]) == []
    assert await t.tick(orders=[order("o1", status="missing")]) == []


async def test_renews_with_a_new_key_after_completion() -> None:
    t = ticker()
    await t.tick()
    done = order("o1", status="filled", spent="175", received="17")
    renew = await t.tick(orders=[done])
    assert [a.key for a in renew] == ["weekly-apt:dca:1"]
    # A repeated tick before the new order shows up: the same key, not a third DCA.
    assert [a.key for a in await t.tick(orders=[done])] == ["weekly-apt:dca:1"]
    assert await t.tick(orders=[order("o2"), done]) == []
    expired = order("o2", status="expired")
    assert [a.key for a in await t.tick(orders=[expired, done])] == ["weekly-apt:dca:2"]


async def test_lost_state_never_reuses_a_spent_generation() -> None:
    t = ticker()
    past = [order(f"o{i}", status="filled") for i in (3, 2, 1)]
    assert [a.key for a in await t.tick(orders=past)] == ["weekly-apt:dca:3"]


async def test_passes_rate_bounds_and_slippage() -> None:
    t = ticker(min_rate="0.08", max_rate="0.125", slippage="0.5", interval="6 hours")
    (action,) = await t.tick()
    assert isinstance(action, CreateDca)
    assert (action.min_rate, action.max_rate) == (Decimal("0.08"), Decimal("0.125"))
    assert action.slippage == Decimal("0.5")
    assert (action.interval_value, action.interval_period) == (6, "hour")
    assert action.spend == Decimal(175)


async def test_an_order_event_renews_at_once() -> None:
    strategy = build(RecurringDca, "weekly-apt", **PARAMS)
    ctx = context("weekly-apt", orders=[order("o1", status="filled")])
    actions = await strategy.on_order_event(ctx, OrderFilled("dca", "o1", "active", "filled"))
    assert [a.key for a in actions] == ["weekly-apt:dca:1"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"amount_per_order": "-5"}, "greater than 0"),
        ({"orders": 0}, "greater than or equal to 1"),
        ({"interval": "1 fortnight"}, "not a duration"),
        ({"interval": "90s"}, "not a whole number of minutes"),
        ({"min_rate": "2", "max_rate": "1"}, "min_rate must not exceed max_rate"),
        ({"to_token": "usdc"}, "must differ"),
        ({"amount": "5"}, "Extra inputs"),
    ],
)
def test_params_are_checked(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RecurringDca.Params.model_validate({**PARAMS, **change})


def test_an_interval_in_short_form_is_kept_in_words() -> None:
    params = RecurringDca.Params.model_validate({**PARAMS, "interval": "6h"})
    assert params.model_dump()["interval"] == "6 hour"
    assert (
        RecurringDca.Params.model_validate({**PARAMS, "interval": "2 days"}).model_dump()[
            "interval"
        ]
        == "2 day"
    )
