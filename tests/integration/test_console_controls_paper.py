"""Controls from the console reach a real engine on a stepped paper world.

Real engine, executor, signer, tracker and journal (`tests.support.paper_rig`); the
console (a real uvicorn on loopback, its own read-only journal on the same file) queues
each control; the daemon's command step (`process_commands`) runs it: a paused strategy
ticks no more, `stopentry` pauses every strategy, a cancelled order is cancelled in the
paper world.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from bot.clock import RealClock
from bot.config import RiskSettings, Settings, StrategyEntry
from bot.console import ConsoleSources, create_app
from bot.engine.brokers import LiveBroker
from bot.engine.commands import process_commands
from bot.engine.engine import Engine
from bot.engine.live_ports import live_engine
from bot.engine.plugins import build_strategy
from bot.engine.risk import RiskChecker
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from harness.paper_signing import fixed_key
from tests.support.loopback import serve
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("console-control-tests")
TOKEN = "console-controls-token-42"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ENTRIES = [
    StrategyEntry(
        name=name,
        plugin="recurring_dca",
        schedule={"interval_seconds": 3600},
        params={
            "from_token": "USDC",
            "to_token": "APT",
            "amount_per_order": "10",
            "orders": 3,
            "interval": "1 day",
        },
    )
    for name in ("dca-a", "dca-b")
]


@dataclass
class Bot:
    rig: PaperRig
    engine: Engine
    console: httpx.Client

    async def control(self, path: str, body: object = None) -> str:
        """POST a control, let the daemon's command step run it; its result line."""
        answer = self.console.post(path, json=body)
        assert answer.status_code == 202, answer.text
        command_id = answer.json()["command_id"]
        taken = await process_commands(
            self.rig.journal, self.rig.executor, self.rig.clock, self.engine
        )
        assert taken == 1
        done = self.console.get(f"/api/v1/commands/{command_id}").json()
        assert done["state"] == "done", done
        return str(done["result"])


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PaperRig]:
    async with paper_rig(tmp_path, KEY, funds={"USDC": Decimal(2_000), "APT": Decimal(10)}) as r:
        yield r


@pytest.fixture
def bot(rig: PaperRig, tmp_path: Path) -> Iterator[Bot]:
    book = rig.world.market.tokens.book
    engine = live_engine(
        client=rig.client,
        journal=rig.journal,
        clock=rig.clock,
        wallet=rig.wallet,
        tokens=book,
        broker=LiveBroker(rig.executor),
        risk=RiskChecker(RiskSettings(max_slippage_percent=Decimal(5)), rig.journal, book),
        strategies=[build_strategy(e) for e in ENTRIES],
        node=rig.node,
        tracker=OrderTracker(rig.client, rig.journal, rig.clock, rig.wallet),
        timeout_seconds=5,
    )
    settings = Settings(journal={"url": f"sqlite:///{tmp_path / 'bot.db'}"}, strategies=ENTRIES)
    reader = Journal.open(settings.journal.url, readonly=True)
    sources = ConsoleSources(reader, lambda: settings, lambda: None)
    app = create_app(sources, token=TOKEN, clock=RealClock())
    try:
        with serve(app) as base, httpx.Client(base_url=base, headers=AUTH, timeout=10) as client:
            yield Bot(rig, engine, client)
    finally:
        reader.close()


async def test_pause_then_stopentry_stop_the_ticks(bot: Bot) -> None:
    assert await bot.control("/api/v1/strategies/dca-a/pause") == "dca-a paused"
    reports = await bot.engine.tick_all()
    placed = {r.strategy: [o.state for _, o in r.outcomes] for r in reports if not r.paused}
    assert placed == {"dca-b": ["confirmed"]}
    line = await bot.control("/api/v1/stopentry")
    assert line.startswith("entries stopped: paused dca-b")
    assert bot.engine.paused == {"dca-a", "dca-b"}
    assert all(r.paused for r in await bot.engine.tick_all())
    listed = bot.console.get("/api/v1/strategies").json()["items"]
    assert {s["name"]: s["paused"] for s in listed} == {"dca-a": True, "dca-b": True}
    assert await bot.control("/api/v1/strategies/dca-a/resume") == "dca-a resumed"
    assert bot.engine.paused == {"dca-b"}


async def test_a_cancel_from_the_console_cancels_in_the_paper_world(bot: Bot) -> None:
    await bot.engine.tick_all()
    orders = bot.console.get("/api/v1/orders", params={"state": "open"}).json()["items"]
    assert len(orders) == 2
    order_id = orders[0]["order_id"]
    line = await bot.control(f"/api/v1/orders/{order_id}/cancel", {"kind": "dca"})
    assert line.startswith("confirmed")
    await bot.engine.poll_orders()
    detail = bot.console.get(f"/api/v1/orders/{order_id}").json()
    assert detail["order"]["status"] == "cancelled"
    [dca] = [
        o for o in bot.rig.world.market.dca.orders_of(bot.rig.wallet) if o.order_id == order_id
    ]
    assert dca.status == "cancelled"
    again = bot.console.post(f"/api/v1/orders/{order_id}/cancel")
    assert again.status_code == 409
