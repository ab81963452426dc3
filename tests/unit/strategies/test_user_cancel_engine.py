"""The user cancels a recurring DCA's order through the daemon: it is not placed again.

Real engine, executor, signer, order tracker and journal on a stepped paper world: the
strategy places its DCA, `bot cancel ID` reaches the running daemon through the journal's
command queue (an intent of the command line's), the tracker sees the order cancelled and
tells the strategy, and the hourly ticks that follow place nothing, until the cancelled
run would have ended. With `replace_cancelled = true` the next DCA is placed at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.config import RiskSettings, StrategyEntry
from bot.engine.brokers import LiveBroker
from bot.engine.commands import CLI_STRATEGY, process_commands
from bot.engine.engine import Engine
from bot.engine.live_ports import live_engine
from bot.engine.plugins import build_strategy
from bot.engine.risk import RiskChecker
from bot.engine.tracker import OrderTracker
from harness.paper_signing import fixed_key
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("user-cancel-tests")


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PaperRig]:
    async with paper_rig(tmp_path, KEY, funds={"USDC": Decimal(2_000), "APT": Decimal(10)}) as r:
        yield r


def engine_for(rig: PaperRig, **extra: object) -> Engine:
    params = {
        "from_token": "USDC",
        "to_token": "APT",
        "amount_per_order": "10",
        "orders": 3,
        "interval": "1 day",
        **extra,
    }
    entry = StrategyEntry(
        name="dca", plugin="recurring_dca", schedule={"interval_seconds": 3600}, params=params
    )
    book = rig.world.market.tokens.book
    return live_engine(
        client=rig.client,
        journal=rig.journal,
        clock=rig.clock,
        wallet=rig.wallet,
        tokens=book,
        broker=LiveBroker(rig.executor),
        risk=RiskChecker(RiskSettings(max_slippage_percent=Decimal(5)), rig.journal, book),
        strategies=[build_strategy(entry)],
        node=rig.node,
        tracker=OrderTracker(rig.client, rig.journal, rig.clock, rig.wallet),
        timeout_seconds=5,
    )


async def place_then_user_cancels(rig: PaperRig, engine: Engine) -> str:
    """The first tick places the DCA; the user cancels it through the daemon's queue."""
    [report] = await engine.tick_all()
    assert [o.state for _, o in report.outcomes] == ["confirmed"]
    [placed] = rig.journal.orders(kind="dca")
    rig.clock.advance(timedelta(minutes=5))
    payload = {"kind": "dca", "order_id": placed.order_id}
    rig.journal.enqueue_command("cancel", payload, at=rig.clock.now())
    assert await process_commands(rig.journal, rig.executor, rig.clock) == 1
    [command] = rig.journal.commands()
    assert command.state == "done", command
    await engine.poll_orders()  # the tracker records `cancelled` and tells the strategy
    order = rig.journal.order("dca", placed.order_id)
    assert order is not None and order.status == "cancelled"
    return placed.order_id


def dca_intents(rig: PaperRig) -> list[str]:
    return [i.idempotency_key for i in rig.journal.intents() if i.strategy != CLI_STRATEGY]


async def test_the_next_ticks_place_nothing_until_the_cancelled_run_is_over(
    rig: PaperRig,
) -> None:
    engine = engine_for(rig)
    await place_then_user_cancels(rig, engine)
    for _ in range(6):  # six hourly ticks (and polls) after the cancel
        rig.clock.advance(timedelta(hours=1))
        await engine.poll_orders()
        [report] = await engine.tick_all()
        assert report.ok and not report.outcomes, report
    assert dca_intents(rig) == ["dca:dca:0"]
    assert len(rig.world.market.dca.orders_of(rig.wallet)) == 1
    # Three daily slices from its creation: the next DCA once that time has come.
    rig.clock.advance(timedelta(days=3))
    [report] = await engine.tick_all()
    assert [o.state for _, o in report.outcomes] == ["confirmed"]
    assert dca_intents(rig) == ["dca:dca:0", "dca:dca:1"]


async def test_replace_cancelled_places_the_next_dca_at_once(rig: PaperRig) -> None:
    engine = engine_for(rig, replace_cancelled=True)
    await place_then_user_cancels(rig, engine)
    # The cancel's order event already renewed it, before any further tick.
    assert dca_intents(rig) == ["dca:dca:0", "dca:dca:1"]
    live = [o for o in rig.journal.orders(kind="dca") if o.status == "active"]
    assert len(live) == 1
