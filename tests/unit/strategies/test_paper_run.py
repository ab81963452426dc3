"""The built-ins through the real engine, executor and signer, against the paper world."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.aptos.address import FunctionId
from bot.chain import InMemoryRecorder, NodeClient, Signer, SignerPolicy
from bot.chain.policy import ROUTER_FUNCTION
from bot.chain.settings import SignerSettings
from bot.clock import SteppedClock
from bot.config import PaperFunding, PaperSettings, RiskSettings, Schedule, StrategyEntry
from bot.engine.brokers import LiveBroker
from bot.engine.engine import Engine
from bot.engine.executor import Executor
from bot.engine.plugins import build_strategy
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.engine.strategy import CreateLimit, Strategy, Swap
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from bot.paper.core.modules import order_function
from bot.paper.world import PaperWorld, build_world
from tests.support.paper_signing import address_of, fixed_key

KEY = fixed_key("strategy-paper-tests")
WALLET = address_of(KEY)


async def no_wait(seconds: float) -> None:
    return None


@dataclass
class Rig:
    world: PaperWorld
    journal: Journal
    client: PanoraClient
    node: NodeClient
    executor: Executor

    def engine(self, strategies: list[Strategy]) -> Engine:
        book = self.world.market.tokens.book
        return Engine(
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
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=[
                PaperFunding(wallet=WALLET, token="USDC", amount=Decimal(2_000)),
                PaperFunding(wallet=WALLET, token="APT", amount=Decimal(100)),
            ],
        )
    )
    transport = httpx.ASGITransport(app=world.app)
    journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    client = PanoraClient(
        base_url="http://paper",
        api_key=SecretStr("k"),
        transport=transport,
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
        sleep=no_wait,
    )
    node = NodeClient("http://paper/v1", expected_chain_id=4, transport=transport, sleep=no_wait)
    functions = [order_function(k, f) for k in ("dca", "limit") for f in ("deposit", "withdraw")]
    policy = SignerPolicy(
        chain_id=4,
        allowed_functions=frozenset({ROUTER_FUNCTION, *map(FunctionId.parse, functions)}),
        max_slippage_percent=Decimal(5),
    )
    signer = Signer(
        node,
        KEY,
        policy,
        InMemoryRecorder(),
        sleep=no_wait,
        settings=SignerSettings(poll_interval_seconds=0, first_poll_delay_seconds=0),
    )
    executor = Executor(
        journal=journal,
        client=client,
        clock=world.market.clock,
        wallet=WALLET,
        tokens=world.market.tokens.book,
        signer=signer,
    )
    yield Rig(world, journal, client, node, executor)
    await client.aclose()
    await node.aclose()
    journal.close()


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
