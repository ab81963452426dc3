"""The engine with test strategies against an in-process paper world: isolation, risk, dry run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.api import PanoraClient
from bot.chain import NodeClient, Signer
from bot.clock import SteppedClock
from bot.config import RiskSettings, Schedule
from bot.engine.actions import CreateDca, Swap
from bot.engine.brokers import DryRunBroker, LiveBroker
from bot.engine.engine import Engine
from bot.engine.executor import Executor
from bot.engine.live_ports import live_engine
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.engine.strategy import Action, Context, Strategy, StrategyParams
from bot.engine.tracker import OrderTracker
from bot.journal import Journal, JournalError
from bot.paper.world import PaperWorld
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_rig import paper_rig

KEY = fixed_key("engine-tests")
WALLET = address_of(KEY)


class Params(StrategyParams):
    amount: Decimal = Decimal(10)


class DcaEveryDay(Strategy):
    """Keeps one 24-slice hourly DCA running, renewing it when it ends."""

    name = "test_dca"
    Params = Params

    async def on_tick(self, ctx: Context) -> list[Action]:
        if ctx.live_orders("dca"):
            return []
        generation = int(ctx.state.get("generation", 0)) + (1 if ctx.orders else 0)
        ctx.save("generation", generation)
        assert isinstance(self.params, Params)
        return [
            CreateDca(
                key=f"{self.instance}:{generation}",
                sell="USDC",
                buy="APT",
                amount=self.params.amount,
                orders=24,
                interval_value=1,
                interval_period="hour",
            )
        ]


class Raises(Strategy):
    name = "raises"

    async def on_tick(self, ctx: Context) -> list[Action]:
        raise RuntimeError("boom")


class Sleeps(Strategy):
    name = "sleeps"

    async def on_tick(self, ctx: Context) -> list[Action]:
        await asyncio.sleep(5)
        return []


class ReturnsJunk(Strategy):
    name = "junk"

    async def on_tick(self, ctx: Context) -> list[Action]:
        return "not a list"  # type: ignore[return-value]


class SwapsBig(Strategy):
    name = "swaps_big"

    async def on_tick(self, ctx: Context) -> list[Action]:
        return [
            Swap(key=f"big:{ctx.now.isoformat()}", sell="USDC", buy="APT", sell_amount=Decimal(600))
        ]


@dataclass
class Rig:
    world: PaperWorld
    journal: Journal
    client: PanoraClient
    node: NodeClient
    executor: Executor
    signer: Signer

    def engine(
        self, strategies: list[Strategy], *, dry_run: bool = False, risk: RiskSettings | None = None
    ) -> Engine:
        broker = (
            DryRunBroker(self.client, self.world.market.tokens.book, WALLET, self.signer)
            if dry_run
            else LiveBroker(self.executor)
        )
        checker = RiskChecker(risk or RiskSettings(), self.journal, self.world.market.tokens.book)
        tracker = OrderTracker(self.client, self.journal, self.world.market.clock, WALLET)
        return live_engine(
            client=self.client,
            journal=self.journal,
            clock=self.world.market.clock,
            wallet=WALLET,
            tokens=self.world.market.tokens.book,
            broker=broker,
            risk=checker,
            strategies=strategies,
            node=self.node,
            tracker=tracker,
            timeout_seconds=0.5,
        )


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with paper_rig(tmp_path, KEY) as r:
        yield Rig(r.world, r.journal, r.client, r.node, r.executor, r.signer)


async def test_a_failing_strategy_does_not_stop_the_others(rig: Rig) -> None:
    engine = rig.engine(
        [
            Raises("r", StrategyParams()),
            Sleeps("s", StrategyParams()),
            ReturnsJunk("j", StrategyParams()),
            DcaEveryDay("dca", Params()),
        ]
    )
    reports = {r.strategy: r for r in await engine.tick_all()}
    assert not reports["r"].ok and "boom" in (reports["r"].error or "")
    assert not reports["s"].ok and reports["s"].error == "timed out"
    assert not reports["j"].ok and "list of actions" in (reports["j"].error or "")
    assert reports["dca"].ok and reports["dca"].outcomes[0][1].state == "confirmed"
    assert engine.stats["r"].errors == engine.stats["s"].errors == engine.stats["j"].errors == 1


async def test_a_repeated_tick_never_doubles_an_order(rig: Rig) -> None:
    engine = rig.engine([DcaEveryDay("dca", Params())])
    await engine.tick_all()
    await engine.tick_all()
    assert len(rig.world.market.dca.orders_of(WALLET)) == 1


async def test_a_risk_cap_stops_an_action_and_says_why(rig: Rig) -> None:
    risk = RiskSettings(daily_spend_caps={"USDC": Decimal(500)})
    engine = rig.engine([SwapsBig("big", StrategyParams())], risk=risk)
    [report] = await engine.tick_all()
    [(_action, reason)] = report.refusals
    assert reason.rule == "daily spend cap" and "500" in str(reason)
    assert rig.journal.intents() == []  # refused before any intent was written
    assert rig.world.chain.submitted == 0


async def test_a_dry_run_sends_nothing_that_spends(rig: Rig) -> None:
    engine = rig.engine(
        [DcaEveryDay("dca", Params()), SwapsBig("big", StrategyParams())], dry_run=True
    )
    reports = await engine.tick_all()
    lines = [line for r in reports for _, o in r.outcomes for line in o.lines]
    assert any("[dry run] dca: create DCA" in line for line in lines)
    assert any("txData:" in line and "router_entry" in line for line in lines)  # fetched, shown
    log = rig.world.provider_api.request_log
    assert not [r for r in log if "createOrder" in r.path or "cancelOrder" in r.path]
    assert rig.world.chain.submitted == 0
    assert rig.journal.intents() == []


async def test_a_stepped_run_of_days_matches_the_paper_world(rig: Rig) -> None:
    engine = rig.engine([DcaEveryDay("dca", Params())])
    clock = rig.world.market.clock
    assert isinstance(clock, SteppedClock)
    start = clock.now()
    jobs = [
        Job(
            "dca", make_trigger(Schedule(interval_seconds=3600), start), lambda: engine.tick("dca")
        ),
        Job("tracker", make_trigger(Schedule(interval_seconds=600), start), engine.poll_orders),
    ]
    driver = Driver(clock, jobs)
    await driver.run_until(start + timedelta(days=3))
    journal_orders = {o.order_id: o.status for o in rig.journal.orders(kind="dca")}
    paper_orders = {o.order_id: o.status for o in rig.world.market.dca.orders_of(WALLET)}
    assert journal_orders == paper_orders
    assert len(paper_orders) >= 3  # renewed after each 24-hour DCA
    assert sorted(paper_orders.values()).count("filled") >= 2
    assert all(i.state == "confirmed" for i in rig.journal.intents())
    rig.world.market.ledger.check_conservation()


async def test_the_context_carries_the_strategys_orders_and_fills(rig: Rig) -> None:
    engine = rig.engine([DcaEveryDay("dca", Params())])
    await engine.tick("dca")
    clock = rig.world.market.clock
    assert isinstance(clock, SteppedClock)
    clock.advance(timedelta(hours=3))
    await engine.poll_orders()
    ctx = await engine.context(engine.strategies["dca"])
    [order] = ctx.orders
    slices = [f for f in order.fills if f.type == "filled"]
    assert len(slices) == 4  # the first at creation, then hourly
    assert all(f.from_amount is not None and f.from_amount > 0 for f in slices)
    assert ctx.intents == {"dca:0": "confirmed"}


async def test_contexts_built_within_a_second_share_one_prices_call(rig: Rig) -> None:
    engine = rig.engine([DcaEveryDay("dca", Params())])
    strategy = engine.strategies["dca"]
    clock = rig.world.market.clock
    assert isinstance(clock, SteppedClock)
    before = rig.client.stats.requests
    await engine.context(strategy)
    clock.advance(timedelta(milliseconds=500))  # a real clock never reads the same twice
    await engine.context(strategy)
    assert rig.client.stats.requests - before == 1
    clock.advance(timedelta(seconds=1))
    await engine.context(strategy)
    assert rig.client.stats.requests - before == 2


async def test_a_strategys_saved_values_are_written_together(rig: Rig) -> None:
    moment = rig.world.market.clock.now()
    rig.journal.set_states("s", {"a": Decimal("1.5"), "b": [1, 2]}, at=moment)
    assert rig.journal.states("s") == {"a": Decimal("1.5"), "b": [1, 2]}
    with pytest.raises(JournalError, match=r"float 0\.5 refused"):
        rig.journal.set_states("s", {"a": Decimal(2), "c": 0.5}, at=moment)
    assert rig.journal.states("s") == {"a": Decimal("1.5"), "b": [1, 2]}  # nothing written


class SavesFloat(Strategy):
    """Saves a value the journal refuses (a float) on every tick."""

    name = "saves_float"

    async def on_tick(self, ctx: Context) -> list[Action]:
        ctx.save("ratio", 0.5)
        return []


async def test_a_value_the_journal_refuses_fails_the_tick_not_the_engine(rig: Rig) -> None:
    engine = rig.engine([SavesFloat("bad", StrategyParams())])
    report = await engine.tick("bad")  # never raises
    assert not report.ok and report.error is not None and "float 0.5 refused" in report.error
    assert engine.stats["bad"].errors == 1
    assert rig.journal.states("bad") == {}  # nothing written
