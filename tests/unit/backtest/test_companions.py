"""Companions: the configured strategies a backtested one reads the orders of, run beside it."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.backtest.companions import CompanionError, companions_of
from bot.backtest.runner import run_backtest
from bot.backtest.spec import BacktestSpec, parse_funding
from bot.config import Schedule, StrategyEntry
from bot.engine.plugins import load_plugin
from tests.support.backtest_inputs import APT, USDC, dca, write_series

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOURLY = Schedule(interval_seconds=3600)

READER = '''
from datetime import datetime
from typing import ClassVar

from bot.engine.strategy import Action, Context, Strategy, StrategyParams


class ReaderParams(StrategyParams):
    sources: list[str] = []


class Reader(Strategy[ReaderParams]):
    """Reads the orders of `sources`; keeps, per tick, whose orders its context held."""

    name = "reader"
    Params = ReaderParams
    seen: ClassVar[list[tuple[datetime, list[str | None]]]] = []

    def tokens(self) -> list[str]:
        return ["USDC", "APT"]

    def order_sources(self) -> list[str]:
        return [self.instance, *self.params.sources]

    async def on_tick(self, ctx: Context) -> list[Action]:
        type(self).seen.append((ctx.now, [o.strategy for o in ctx.orders]))
        return []


class Broken(Strategy):
    """Fails on every tick."""

    name = "broken"

    def tokens(self) -> list[str]:
        return ["USDC"]

    async def on_tick(self, ctx: Context) -> list[Action]:
        raise RuntimeError("broken on purpose")
'''


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "reader.py").write_text(textwrap.dedent(READER))
    return folder


def reader(name: str, *sources: str) -> StrategyEntry:
    return StrategyEntry(
        name=name, plugin="reader", schedule=HOURLY, params={"sources": list(sources)}
    )


def test_companions_are_the_sources_and_theirs_in_config_order(plugins: Path) -> None:
    configured = [dca(), reader("b", "dca"), reader("a", "b"), reader("c")]
    assert [e.name for e in companions_of(configured[2], configured, [plugins])] == ["dca", "b"]
    assert companions_of(configured[3], configured, [plugins]) == ()
    looped = [reader("x", "y"), reader("y", "x")]  # reading each other: each once
    assert [e.name for e in companions_of(looped[0], looped, [plugins])] == ["y"]


def test_a_source_not_configured_is_a_one_line_error(plugins: Path) -> None:
    configured = [reader("a", "b"), reader("b", "gone")]
    with pytest.raises(CompanionError, match=r"strategy 'b' reads the orders of 'gone'"):
        companions_of(configured[0], configured, [plugins])


def test_the_spec_runs_each_strategy_once() -> None:
    with pytest.raises(ValueError, match="each strategy once"):
        BacktestSpec(dca(), T0, T0 + timedelta(hours=1), "p.csv", companions=[dca()])


def test_funding_is_exact_token_amounts() -> None:
    assert parse_funding("USDC=1000.5, APT=0") == {"USDC": Decimal("1000.5"), "APT": Decimal(0)}
    for bad in ("USDC", "=1", "USDC=-1", "USDC=NaN", "USDC=x"):
        with pytest.raises(ValueError):
            parse_funding(bad)


def test_a_reader_sees_its_companions_orders_and_their_failures_are_named(
    plugins: Path, tmp_path: Path
) -> None:
    series = write_series(tmp_path / "p.csv", ["5"] * 13)
    spec = BacktestSpec(
        reader("r", "dca"),
        T0,
        T0 + timedelta(hours=5),
        series,
        strategy_dirs=[plugins],
        companions=[dca(), StrategyEntry(name="bad", plugin="broken", schedule=HOURLY)],
        funding={"USDC": Decimal(100)},
    )
    result = run_backtest(spec)
    seen = load_plugin("reader", [plugins]).seen  # type: ignore[attr-defined]
    # The DCA (every 4 hours) ticks first at 00:00: the reader sees its order at once.
    # Its order fills at 03:00; the poll then tells the DCA, which renews it at once (its
    # order event, as live), before the reader's tick.
    assert [owners for _, owners in seen] == [["dca"]] * 3 + [["dca", "dca"]] * 3
    assert [(c.name, c.plugin, c.ticks, c.errors) for c in result.companions] == [
        ("dca", "recurring_dca", 2, 0),
        ("bad", "broken", 6, 6),
    ]
    assert (result.ticks, result.actions) == (6, 0)  # the reader's own counts
    assert len(result.orders) == 2
    assert result.owners == {order.order_id: "dca" for order in result.orders}
    assert {(f.sell_token, f.buy_token) for f in result.fills} == {(USDC, APT)}
    assert len(result.errors) == 6
    assert all("bad: RuntimeError: broken on purpose" in line for line in result.errors)
