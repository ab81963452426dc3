"""A backtest is the live engine on the paper core's ports: what a strategy sees and when.

The strategy under test records every context and event it is shown; a three-hour series
(APT 5 → 4 → 5 → 10 USD, USDC at 1, WBTC also in the file) makes its one limit buy fill
at the second hour.
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.backtest.result import BacktestResult
from bot.backtest.runner import run_backtest
from bot.backtest.spec import BacktestSpec
from bot.config import StrategyEntry
from bot.engine.plugins import load_plugin
from tests.support.backtest_inputs import DEEP, FREE

APT = "0x1::aptos_coin::AptosCoin"
APT_FA = "0xa"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WBTC = "0x68844a0d7f2587e726ad0579f3d640865bb4162c08a4589eeda3f9689ec52a3d"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)

PLUGIN = '''
from decimal import Decimal
from typing import Any, ClassVar

from bot.engine.strategy import (
    Action, Context, CreateLimit, OrderEvent, Strategy, StrategyParams,
)


class RecorderParams(StrategyParams):
    token: str = "APT"
    quote_token: str = "USDC"
    own_orders: bool = True
    sources: list[str] = []


class Recorder(Strategy):
    """Buys APT with a limit order once; records what every hook is shown."""

    name = "recorder"
    Params = RecorderParams
    seen: ClassVar[list[tuple[Any, ...]]] = []

    def order_sources(self) -> list[str]:
        own = [self.instance] if self.params.own_orders else []
        return [*own, *self.params.sources]

    async def on_tick(self, ctx: Context) -> list[Action]:
        orders = [(o.order_id, o.status, len(o.fills)) for o in ctx.orders]
        type(self).seen.append(
            ("tick", ctx.now, sorted(ctx.prices), sorted(ctx.balances), orders, dict(ctx.intents))
        )
        ctx.save("ticks", int(ctx.state.get("ticks", 0)) + 1)
        if ctx.now.hour == 2:
            ctx.save("bad", 0.5)  # the journal refuses a float
        return [CreateLimit(key="buy", sell="USDC", buy="APT", amount=Decimal(10),
                            rate=Decimal("0.24"))]

    async def on_order_event(self, ctx: Context, event: OrderEvent) -> list[Action]:
        type(self).seen.append(("event", ctx.now, type(event).__name__, event.order_id))
        return []
'''


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "recorder.py").write_text(textwrap.dedent(PLUGIN))
    return folder


def series(tmp_path: Path) -> Path:
    lines = ["timestamp,token,usdPrice"]
    for hours, price in enumerate(["5", "4", "5", "10"]):
        lines.append(f"{(T0 + hours * HOUR).isoformat()},{APT},{price}")
    lines += [f"{T0.isoformat()},{USDC},1", f"{T0.isoformat()},{WBTC},60000"]
    path = tmp_path / "prices.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tmp_path: Path, plugins: Path, **params: Any) -> tuple[BacktestResult, list[Any]]:
    recorder = load_plugin("recorder", [plugins])
    recorder.seen.clear()  # type: ignore[attr-defined]
    entry = StrategyEntry(
        name="rec", plugin="recorder", schedule={"interval_seconds": 3600}, params=params
    )
    spec = BacktestSpec(
        strategy=entry,
        start=T0,
        end=T0 + 3 * HOUR,
        prices=series(tmp_path),
        strategy_dirs=[plugins],
        depth_usd=DEEP,
        funding={"USDC": Decimal(100)},
        **FREE,
    )
    return run_backtest(spec), list(recorder.seen)  # type: ignore[attr-defined]


def test_order_events_reach_the_strategy_as_the_tracker_delivers_them(
    tmp_path: Path, plugins: Path
) -> None:
    result, seen = run(tmp_path, plugins)
    (order,) = result.orders
    assert order.status == "filled"
    # The poll runs before the tick of the same moment, as the daemon's jobs do.
    assert [(s[0], s[1]) for s in seen] == [
        ("tick", T0),
        ("event", T0 + HOUR),
        ("event", T0 + HOUR),
        ("tick", T0 + HOUR),
        ("tick", T0 + 2 * HOUR),
        ("tick", T0 + 3 * HOUR),
    ]
    assert [s[2:] for s in seen if s[0] == "event"] == [
        ("FillsRecorded", order.order_id),  # the slices, then the order told filled
        ("OrderFilled", order.order_id),
    ]


def test_a_backtested_context_is_the_live_ones(tmp_path: Path, plugins: Path) -> None:
    result, seen = run(tmp_path, plugins)
    ticks = [s for s in seen if s[0] == "tick"]
    order_id = result.orders[0].order_id
    # The declared tokens and APT (the gas token), by each of their ids; WBTC is in the
    # file but no strategy declares it, so no context lists it.
    assert all(t[2] == sorted([APT, APT_FA, USDC]) for t in ticks)
    assert all(t[3] == sorted([APT, USDC]) for t in ticks)
    assert ticks[0][4] == [] and ticks[0][5] == {}
    ((listed, status, records),) = ticks[1][4]
    assert (listed, status) == (order_id, "filled") and records > 0  # with its fills
    assert ticks[1][5] == {"buy": "confirmed"}  # the intent, as the journal would list it
    assert result.actions == 1  # the same key on later ticks is already done


def test_order_sources_decide_which_orders_a_context_lists(tmp_path: Path, plugins: Path) -> None:
    _result, seen = run(tmp_path, plugins, own_orders=False, sources=["other"])
    assert [s[4] for s in seen if s[0] == "tick"] == [[], [], [], []]


def test_a_value_the_journal_refuses_fails_that_tick_only(tmp_path: Path, plugins: Path) -> None:
    result, seen = run(tmp_path, plugins)
    (line,) = result.errors
    assert line.startswith(f"{(T0 + 2 * HOUR).isoformat()} ") and "float" in line
    assert result.ticks == 4
    assert [s[1] for s in seen if s[0] == "tick"][-1] == T0 + 3 * HOUR
