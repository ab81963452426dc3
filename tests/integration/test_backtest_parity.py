"""One code path for fills: a strategy through the paper world and through the backtester.

The same strategy, on the same price file, run twice:
1. the paper world on a stepped clock, driven by the bot as it runs: the real engine,
   the live broker, the executor, the signer and the order tracker, over the ASGI
   transport (on-chain order style: createOrder, then a signed deposit);
2. the backtester (`run_backtest`) on that file.
Both must produce the same orders (ids, statuses, refunds) and the same executions
(time, amounts in base units, skips) — exactly.

The paper side's tracker polls on the strategy's schedule, just before the strategy
ticks: the backtester delivers order events at the same moments (docs/backtesting.md).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.backtest.result import BacktestResult
from bot.backtest.runner import run_backtest_async
from bot.backtest.spec import BacktestSpec
from bot.config import RiskSettings, StrategyEntry
from bot.engine.brokers import LiveBroker
from bot.engine.live_ports import live_engine
from bot.engine.plugins import build_strategy
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.engine.tracker import OrderTracker
from bot.money import to_base_units
from bot.paper.core.orders import OrderState
from harness.paper_signing import fixed_key
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("backtest-parity")
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
START = datetime(2026, 4, 1, tzinfo=UTC)
STEP = timedelta(minutes=5)
DAYS = 2
FUNDS = {"USDC": Decimal(5_000), "APT": Decimal(100)}
RISK = RiskSettings(max_slippage_percent=Decimal(5), max_open_orders=50)

Execution = tuple[str, datetime, int, int, bool]


def write_prices(path: Path, seed: str, *, usdc_moves: bool) -> Path:
    """A 5-minute series for APT (a ±0.3 % walk from 5 USD) and USDC, as exact text."""
    rng = random.Random(seed)
    apt, usdc = 500_000_000, 100_000_000  # coefficients of 10⁻⁸ USD
    lines = ["timestamp,token,usdPrice"]
    moment = START
    while moment <= START + timedelta(days=DAYS):
        stamp = moment.isoformat().replace("+00:00", "Z")
        lines.append(f"{stamp},{APT},{Decimal(apt).scaleb(-8)}")
        if usdc_moves or moment == START:
            lines.append(f"{stamp},{USDC},{Decimal(usdc).scaleb(-8)}")
        apt = apt * (10_000 + rng.randint(-30, 30)) // 10_000
        usdc = 100_000_000 + rng.randint(-50_000, 50_000)
        moment += STEP
    path.write_text("\n".join(lines) + "\n")
    return path


def paper_executions(orders: list[tuple[str, OrderState]]) -> list[Execution]:
    found = []
    for _kind, order in orders:
        for d in order.details:
            if d.type == "filled":
                found.append((order.order_id, d.time, d.from_amount, d.to_amount, False))
            elif d.type in ("attempted", "failed"):
                found.append((order.order_id, d.time, 0, 0, True))
    return sorted(found, key=lambda e: (e[1], e[0]))


def backtest_executions(result: BacktestResult) -> list[Execution]:
    decimals = {key: info.decimals for key, info in result.tokens.items()}
    found = [
        (
            f.order_id,
            f.time,
            to_base_units(f.sold, decimals[f.sell_token]),
            to_base_units(f.bought, decimals[f.buy_token]),
            f.skipped,
        )
        for f in result.fills
    ]
    return sorted(found, key=lambda e: (e[1], e[0]))


async def run_paper(
    rig: PaperRig, entry: StrategyEntry, end: datetime
) -> list[tuple[str, OrderState]]:
    """The strategy through the bot's engine against the paper world, until `end`."""
    book = rig.world.market.tokens.book
    clock = rig.clock
    tracker = OrderTracker(rig.client, rig.journal, clock, rig.wallet)
    engine = live_engine(
        client=rig.client,
        journal=rig.journal,
        clock=clock,
        wallet=rig.wallet,
        tokens=book,
        broker=LiveBroker(rig.executor),
        risk=RiskChecker(RiskSettings(**RISK.model_dump()), rig.journal, book),
        strategies=[build_strategy(entry)],
        node=rig.node,
        tracker=tracker,
        timeout_seconds=30,
    )
    start = clock.now()
    schedule = entry.schedule
    jobs = [
        Job("tracker", make_trigger(schedule, start), engine.poll_orders),  # polls first
        Job("strategy", make_trigger(schedule, start), lambda: engine.tick(entry.name)),
    ]
    await engine.start()
    await Driver(clock, jobs).run_until(end)
    # What is due at `end` itself, including what the last tick scheduled for then (the
    # backtester runs it; the paper world would at its next request after `end`).
    rig.world.market.advance_to(end)
    assert all(s.errors == 0 for s in engine.stats.values()), engine.stats
    market = rig.world.market
    return [("dca", o) for o in market.dca.orders_of(rig.wallet)] + [
        ("limit", o) for o in market.limit.orders_of(rig.wallet)
    ]


async def both(tmp_path: Path, entry: StrategyEntry, prices: Path) -> tuple[Any, BacktestResult]:
    end = START + timedelta(days=DAYS)
    async with paper_rig(
        tmp_path, KEY, funds=FUNDS, prices_file=prices, start=START.isoformat()
    ) as rig:
        assert rig.clock.now() == START
        paper = await run_paper(rig, entry, end)
    spec = BacktestSpec(
        strategy=entry, start=START, end=end, prices=prices, funding=FUNDS, risk=RISK
    )
    result = await run_backtest_async(spec)
    assert result.errors == []
    return paper, result


def check_same(paper: list[tuple[str, OrderState]], result: BacktestResult) -> None:
    decimals = {key: info.decimals for key, info in result.tokens.items()}
    ours = {
        (o.kind, o.order_id): (
            o.status,
            o.created_at,
            to_base_units(o.refunded, decimals[o.sell_token]),
        )
        for o in result.orders
    }
    theirs = {(kind, o.order_id): (o.status, o.created_at, o.withdrawn) for kind, o in paper}
    assert ours == theirs
    assert backtest_executions(result) == paper_executions(paper)


@pytest.mark.parametrize("usdc_moves", [False, True], ids=["pegged-usdc", "moving-usdc"])
async def test_recurring_dca_gives_the_same_fills(tmp_path: Path, usdc_moves: bool) -> None:
    prices = write_prices(tmp_path / "prices.csv", "dca", usdc_moves=usdc_moves)
    entry = StrategyEntry(
        name="dca",
        plugin="recurring_dca",
        schedule={"interval_seconds": 3600},
        params={
            "from_token": "USDC",
            "to_token": "APT",
            "amount_per_order": "10",
            "orders": 5,
            "interval": "1 hour",
            "max_rate": "0.21",  # no buying while APT is under 4.76 USD: skipped slices
        },
    )
    paper, result = await both(tmp_path, entry, prices)
    check_same(paper, result)
    executions = backtest_executions(result)
    assert sum(1 for e in executions if not e[4]) >= 10
    assert any(e[4] for e in executions)  # some slices skipped by the bound
    assert len(result.orders) >= 5  # renewed through the run


@pytest.mark.parametrize("usdc_moves", [False, True], ids=["pegged-usdc", "moving-usdc"])
async def test_limit_ladder_gives_the_same_fills(tmp_path: Path, usdc_moves: bool) -> None:
    prices = write_prices(tmp_path / "prices.csv", "ladder", usdc_moves=usdc_moves)
    entry = StrategyEntry(
        name="ladder",
        plugin="limit_ladder",
        schedule={"interval_seconds": 3600},
        params={
            "sell_token": "USDC",
            "buy_token": "APT",
            "rungs": 3,
            "spacing_percent": "0.5",
            "amount_per_rung": "20",
            "redrift_percent": "1.5",
            "expiry": "6 hour",
        },
    )
    paper, result = await both(tmp_path, entry, prices)
    check_same(paper, result)
    statuses = {o.status for o in result.orders}
    assert {"filled", "cancelled"} <= statuses or {"filled", "expired"} <= statuses
    assert sum(1 for f in result.fills if f.kind == "limit") >= 2
