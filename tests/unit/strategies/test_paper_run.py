"""The built-ins through the real engine, executor and signer, against the paper world."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.api import PanoraClient
from bot.chain import NodeClient
from bot.clock import SteppedClock
from bot.config import RiskSettings, Schedule, StrategyEntry
from bot.engine.brokers import LiveBroker
from bot.engine.engine import Engine
from bot.engine.executor import Executor
from bot.engine.live_ports import live_engine
from bot.engine.plugins import build_strategy
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.engine.strategy import CreateLimit, Strategy, Swap
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from bot.paper.world import PaperWorld
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_rig import paper_rig

KEY = fixed_key("strategy-paper-tests")
WALLET = address_of(KEY)


@dataclass
class Rig:
    world: PaperWorld
    journal: Journal
    client: PanoraClient
    node: NodeClient
    executor: Executor

    def engine(self, strategies: list[Strategy]) -> Engine:
        book = self.world.market.tokens.book
        return live_engine(
            client=self.client,
            journal=self.journal,
            clock=self.world.market.clock,
            wallet=WALLET,
            tokens=book,
            broker=LiveBroker(self.executor),
            risk=RiskChecker(RiskSettings(max_slippage_percent=Decimal(5)), self.journal, book),
            strategies=strategies,
            node=self.node,
            tracker=OrderTracker(self.client, self.journal, self.world.market.clock, WALLET),
            timeout_seconds=5,
        )


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    funds = {"USDC": Decimal(2_000), "APT": Decimal(100)}
    async with paper_rig(tmp_path, KEY, funds=funds) as r:
        yield Rig(r.world, r.journal, r.client, r.node, r.executor)


def strategy(name: str, plugin: str, **params: Any) -> Strategy:
    entry = StrategyEntry(
        name=name, plugin=plugin, schedule={"interval_seconds": 3600}, params=params
    )
    return build_strategy(entry)


async def test_every_order_placing_builtin_is_carried_out(rig: Rig) -> None:
    apt_usd = rig.world.market.prices.usd_visible(
        rig.world.market.tokens.book.find("APT").address, rig.world.market.clock.now()
    )
    assert apt_usd is not None
    engine = rig.engine(
        [
            strategy(
                "dca", "recurring_dca", from_token="USDC", to_token="APT",
                amount_per_order="10", orders=3, interval="1 hour",
            ),
            strategy(
                "ladder", "limit_ladder", sell_token="USDC", buy_token="APT", rungs=3,
                spacing_percent="2", amount_per_rung="20", redrift_percent="5", expiry="1 day",
            ),
            strategy(
                "tp", "take_profit", token="APT", quote_token="USDC",
                entry_price=str(apt_usd), targets=[{"percent_above": "15", "fraction": "0.1"}],
            ),
            strategy(
                "mix", "rebalancer", weights={"APT": "0.5", "USDC": "0.5"},
                band_percent="5", slippage="1",
            ),
        ]
    )  # fmt: skip
    reports = {r.strategy: r for r in await engine.tick_all()}
    for name, report in reports.items():
        assert report.ok, (name, report.error)
        assert not report.refusals, (name, report.refusals)
        assert report.outcomes, name
        assert all(o.state == "confirmed" for _, o in report.outcomes), (name, report.outcomes)
    ladder = [a for a, _ in reports["ladder"].outcomes if isinstance(a, CreateLimit)]
    assert len(ladder) == 3 and len(rig.world.market.limit.orders_of(WALLET)) == 4
    [(swap, _)] = reports["mix"].outcomes
    assert isinstance(swap, Swap) and swap.sell == "USDC"  # 2,000 USDC outweighs 100 APT
    # A second tick at once: nothing new anywhere.
    again = await engine.tick_all()
    assert all(r.ok and not r.outcomes for r in again), [r.outcomes for r in again]


async def test_recurring_dca_is_renewed_through_the_day(rig: Rig) -> None:
    dca = strategy(
        "dca", "recurring_dca", from_token="USDC", to_token="APT",
        amount_per_order="10", orders=2, interval="1 hour",
    )  # fmt: skip
    engine = rig.engine([dca])
    clock = rig.world.market.clock
    assert isinstance(clock, SteppedClock)
    start = clock.now()
    hourly = make_trigger(Schedule(interval_seconds=3600), start)
    jobs = [
        Job("dca", hourly, lambda: engine.tick("dca")),
        Job("tracker", make_trigger(Schedule(interval_seconds=600), start), engine.poll_orders),
    ]
    await Driver(clock, jobs).run_until(start + timedelta(hours=5))
    orders = rig.world.market.dca.orders_of(WALLET)
    assert len(orders) >= 3
    assert sum(1 for o in orders if o.status == "active") <= 1
    keys = [i.idempotency_key for i in rig.journal.intents()]  # oldest first
    assert keys == [f"dca:dca:{n}" for n in range(len(keys))]  # one per generation
    assert len(keys) == len(orders)
