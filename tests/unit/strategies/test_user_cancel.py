"""A cancel the user made (not the strategy) is not undone by the next tick.

The user's path on hand-built contexts: an order placed, the user cancels it (`bot cancel`
or outside the bot: the order is `cancelled` and no intent of the strategy cancelled it),
the next ticks place nothing and say so once; `replace_cancelled = true` places again.
A cancel the strategy made itself (its `<instance>:cancel:<order id>` intent) is not the
user's. The same path through the real engine is in `test_user_cancel_engine.py`.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from bot.engine.events import OrderCancelled
from bot.engine.strategy import CancelLimit, CreateDca, CreateLimit, OrderInfo, cancelled_by_user
from strategies.limit_ladder import LimitLadder
from strategies.recurring_dca import RecurringDca
from strategies.take_profit import TakeProfit
from tests.unit.strategies.support import APT, NOW, USDC, Ticker, build, context, market, order

DCA = {
    "from_token": "USDC",
    "to_token": "APT",
    "amount_per_order": "25",
    "orders": 7,
    "interval": "1 day",
}
LADDER = {
    "sell_token": "USDC",
    "buy_token": "APT",
    "rungs": 3,
    "spacing_percent": "2",
    "amount_per_rung": "50",
    "redrift_percent": "5",
}
TP = {
    "token": "APT",
    "quote_token": "USDC",
    "entry_price": "10",
    "targets": [
        {"percent_above": "10", "fraction": "0.5"},
        {"percent_above": "25", "fraction": "0.25"},
    ],
}
LATER = NOW + timedelta(minutes=5)


def noted(t: Ticker, event: str) -> list[dict[str, Any]]:
    """The fields of each `event` logged on the last tick."""
    return [fields for _, name, fields in t.log().records if name == event]


# --- who cancelled ---------------------------------------------------------------------


def test_a_cancel_is_the_users_unless_the_strategy_journaled_it() -> None:
    gone = order("o1", status="cancelled")
    assert cancelled_by_user(context("s"), "s", gone)
    mine = context("s", intents={"s:cancel:o1": "confirmed"})
    assert not cancelled_by_user(mine, "s", gone)
    # Its own cancel failed (sent nothing): whoever cancelled the order, it was not this.
    assert cancelled_by_user(context("s", intents={"s:cancel:o1": "failed"}), "s", gone)
    # Another strategy's key does not count, and an order not cancelled is nobody's cancel.
    assert cancelled_by_user(context("s", intents={"t:cancel:o1": "confirmed"}), "s", gone)
    assert not cancelled_by_user(context("s"), "s", order("o1", status="expired"))


# --- recurring_dca ---------------------------------------------------------------------


async def test_a_dca_the_user_cancelled_is_not_renewed_before_its_run_is_over() -> None:
    t = Ticker(build(RecurringDca, "weekly-apt", **DCA))
    assert [a.key for a in await t.tick()] == ["weekly-apt:dca:0"]
    assert await t.tick(orders=[order("o1", at=NOW)]) == []  # placed, live
    cancelled = [order("o1", status="cancelled", at=NOW)]  # the user ran `bot cancel o1`
    assert await t.tick(now=LATER, orders=cancelled) == []
    [said] = noted(t, "recurring_dca.user_cancelled")
    assert said["order"] == "o1"
    assert said["renews_at"] == (NOW + timedelta(days=7)).isoformat()  # 7 slices × 1 day
    for hours in (1, 24, 24 * 7 - 1):  # ticks through the cancelled run: quiet, said once
        assert await t.tick(now=NOW + timedelta(hours=hours), orders=cancelled) == []
        assert noted(t, "recurring_dca.user_cancelled") == []
    # The order event of the cancel (the tracker's) changes nothing either.
    ctx = context("weekly-apt", now=LATER, orders=cancelled, state=t.state)
    event = OrderCancelled("dca", "o1", "active", "cancelled")
    assert await t.strategy.on_order_event(ctx, event) == []
    # Once the cancelled run would have ended, the next generation starts.
    renewed = await t.tick(now=NOW + timedelta(days=7), orders=cancelled)
    assert [a.key for a in renewed] == ["weekly-apt:dca:1"]
    assert t.state["counted"] == "o1"


async def test_replace_cancelled_renews_a_dca_at_once() -> None:
    t = Ticker(build(RecurringDca, "weekly-apt", **DCA, replace_cancelled=True))
    await t.tick()
    cancelled = [order("o1", status="cancelled", at=NOW)]
    renewed = await t.tick(now=LATER, orders=cancelled)
    assert [a.key for a in renewed] == ["weekly-apt:dca:1"]
    assert isinstance(renewed[0], CreateDca)


async def test_a_dca_that_ended_otherwise_is_renewed_at_once() -> None:
    for status in ("filled", "expired", "refunded", "lost"):
        t = Ticker(build(RecurringDca, "weekly-apt", **DCA))
        await t.tick()
        renewed = await t.tick(now=LATER, orders=[order("o1", status=status, at=NOW)])
        assert [a.key for a in renewed] == ["weekly-apt:dca:1"], status


def test_replace_cancelled_is_a_checked_parameter() -> None:
    for plugin, params in ((RecurringDca, DCA), (LimitLadder, LADDER), (TakeProfit, TP)):
        assert plugin.Params.model_validate(params).model_dump()["replace_cancelled"] is False
        with pytest.raises(ValidationError, match="replace_cancelled"):
            plugin.Params.model_validate({**params, "replace_cancelled": "sometimes"})


# --- limit_ladder ----------------------------------------------------------------------


PLACED = NOW + timedelta(seconds=1)  # the first ladder's rungs, made by its tick at NOW


def rung(o: str, status: str = "active", at: Any = PLACED) -> OrderInfo:
    return order(o, kind="limit", status=status, sell=USDC, buy=APT, total="50", at=at)


async def test_a_rung_the_user_cancelled_stays_empty_until_the_next_ladder() -> None:
    t = Ticker(build(LimitLadder, "ladder", **LADDER))
    assert len(await t.tick(prices=market(apt="10"))) == 3
    earlier = rung("r0", status="cancelled", at=NOW - timedelta(days=1))  # an older ladder's
    rungs = [rung("r3"), rung("r2", status="cancelled"), rung("r1"), earlier]
    assert await t.tick(now=LATER, prices=market(apt="10"), orders=rungs) == []
    assert [f["order"] for f in noted(t, "limit_ladder.user_cancelled")] == ["r2"]
    assert await t.tick(now=LATER, prices=market(apt="10.2"), orders=rungs) == []
    assert noted(t, "limit_ladder.user_cancelled") == []  # said once
    # A drift past the band places the next ladder, every rung, as usual.
    actions = await t.tick(now=LATER, prices=market(apt="11"), orders=rungs)
    assert [a.order_id for a in actions if isinstance(a, CancelLimit)] == ["r3", "r1"]
    assert len([a for a in actions if isinstance(a, CreateLimit)]) == 3


async def test_the_ladders_own_cancel_is_not_the_users() -> None:
    t = Ticker(build(LimitLadder, "ladder", **LADDER, replace_cancelled=True))
    await t.tick(prices=market(apt="10"))
    rungs = [rung("r3"), rung("r2", status="cancelled"), rung("r1")]
    own = {**t.intents, "ladder:cancel:r2": "confirmed"}
    assert await t.tick(now=LATER, prices=market(apt="10"), orders=rungs, intents=own) == []
    assert noted(t, "limit_ladder.user_cancelled") == []


async def test_replace_cancelled_re_places_the_ladder_at_the_next_tick() -> None:
    t = Ticker(build(LimitLadder, "ladder", **LADDER, replace_cancelled=True))
    await t.tick(prices=market(apt="10"))
    rungs = [rung("r3"), rung("r2", status="cancelled"), rung("r1")]
    actions = await t.tick(now=LATER, prices=market(apt="10"), orders=rungs)
    assert [a.order_id for a in actions if isinstance(a, CancelLimit)] == ["r3", "r1"]
    creates = [a for a in actions if isinstance(a, CreateLimit)]
    assert [a.key for a in creates] == [f"ladder:ladder:1:{k}" for k in (1, 2, 3)]
    # The new ladder was placed after the cancelled rung: it asks for nothing more.
    new = [rung(f"n{k}", at=LATER + timedelta(seconds=1)) for k in (1, 2, 3)]
    after = LATER + timedelta(minutes=5)
    assert await t.tick(now=after, prices=market(apt="10"), orders=[*new, *rungs]) == []


# --- take_profit -----------------------------------------------------------------------


def sell(o: str, status: str = "active", total: str = "10") -> OrderInfo:
    return order(o, kind="limit", status=status, sell=APT, buy=USDC, total=total, at=LATER)


async def test_a_target_the_user_cancelled_is_not_placed_again() -> None:
    t = Ticker(build(TakeProfit, "tp", **TP))
    assert len(await t.tick(balances={APT: "20"})) == 2
    sells = [sell("s2", total="5"), sell("s1", status="cancelled")]
    later = LATER + timedelta(minutes=1)
    assert await t.tick(now=later, orders=sells, balances={APT: "15"}) == []
    [said] = noted(t, "take_profit.user_cancelled")
    assert said["order"] == "s1"
    assert await t.tick(now=later, orders=sells, balances={APT: "15"}) == []
    assert noted(t, "take_profit.user_cancelled") == []


async def test_replace_cancelled_places_the_targets_again() -> None:
    t = Ticker(build(TakeProfit, "tp", **TP, replace_cancelled=True))
    await t.tick(balances={APT: "20"})
    sells = [sell("s2", total="5"), sell("s1", status="cancelled")]
    later = LATER + timedelta(minutes=1)
    actions = await t.tick(now=later, orders=sells, balances={APT: "15"})
    assert actions[0] == CancelLimit(key="tp:cancel:s2", order_id="s2")
    creates = [a for a in actions if isinstance(a, CreateLimit)]
    # Holding: 15 in the wallet + 5 the live sell holds.
    assert [(a.key, a.amount) for a in creates] == [
        ("tp:tp:1:0", Decimal(10)),
        ("tp:tp:1:1", Decimal(5)),
    ]


async def test_a_cancel_is_acted_on_once_even_on_a_clock_that_stands_still() -> None:
    # A stepped clock: the rungs are made, cancelled and re-placed at one instant.
    t = Ticker(build(LimitLadder, "ladder", **LADDER, replace_cancelled=True))
    await t.tick(prices=market(apt="10"))
    rungs = [rung("r3", at=NOW), rung("r2", status="cancelled", at=NOW), rung("r1", at=NOW)]
    assert len(await t.tick(prices=market(apt="10"), orders=rungs)) == 5  # 2 cancels, 3 rungs
    new = [rung(f"n{k}", at=NOW) for k in (1, 2, 3)]
    assert await t.tick(prices=market(apt="10"), orders=[*new, *rungs]) == []
