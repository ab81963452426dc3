"""Backtests on tiny series, checked against amounts computed by hand.

The pools are 10¹² USD deep: a 10 USDC trade moves them by 10⁻¹¹, so what a slice buys is
10 / price, less the one base unit the pool's rounding keeps (the pool rounds in its own
favour): `out = floor(y·in / (x + in))` with x = 10¹⁸ USDC units, y = 10²⁰/price APT units.
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.backtest.result import BacktestResult
from bot.backtest.runner import BacktestError, run_backtest
from bot.backtest.spec import BacktestSpec
from bot.config import StrategyEntry
from bot.engine.plugins import load_plugin
from tests.support.backtest_inputs import DEEP, FREE, dca

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
D = Decimal

PLUGINS = '''
from decimal import Decimal
from typing import ClassVar

from bot.engine.strategy import (
    Action, Context, CreateDca, CreateLimit, Strategy, StrategyParams, Swap,
)


class OneLimitParams(StrategyParams):
    rate: Decimal
    expiry_hours: int | None = None


class OneLimit(Strategy):
    """Places one limit buy of APT for 10 USDC (the same key on every tick)."""

    name = "one_limit"
    Params = OneLimitParams

    async def on_tick(self, ctx: Context) -> list[Action]:
        hours = self.params.expiry_hours
        return [
            CreateLimit(
                key="only", sell="USDC", buy="APT", amount=Decimal(10), rate=self.params.rate,
                expiry_value=hours, expiry_period="hour" if hours else None,
            )
        ]


class OneSwap(Strategy):
    """Swaps 10 USDC for APT once, at 1 % slippage."""

    name = "one_swap"

    async def on_tick(self, ctx: Context) -> list[Action]:
        return [Swap(key="once", sell="USDC", buy="APT", sell_amount=Decimal(10),
                     slippage=Decimal(1))]


class NoFloor(Strategy):
    """A DCA whose minimum rate is Infinity: the service refuses it (nothing would run)."""

    name = "no_floor"

    async def on_tick(self, ctx: Context) -> list[Action]:
        return [CreateDca(key="inf", sell="USDC", buy="APT", amount=Decimal(10), orders=2,
                          interval_value=1, interval_period="hour",
                          min_rate=Decimal("Infinity"))]


class Watcher(Strategy):
    """Keeps every context it is shown; fails on the tick at 02:00."""

    name = "watcher"
    seen: ClassVar[list[Context]] = []

    async def on_tick(self, ctx: Context) -> list[Action]:
        type(self).seen.append(ctx)
        if ctx.now.hour == 2:
            raise RuntimeError("boom at two")
        return []
'''


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "mine.py").write_text(textwrap.dedent(PLUGINS))
    return folder


def prices(tmp_path: Path, apt: list[tuple[float, str]], usdc: str | None = "1") -> Path:
    """A CSV series: APT at (hours after T0, price) points; USDC flat from T0."""
    lines = ["timestamp,token,usdPrice"]
    lines += [f"{(T0 + h * HOUR).isoformat()},{APT},{p}" for h, p in apt]
    if usdc is not None:
        lines.append(f"{T0.isoformat()},{USDC},{usdc}")
    path = tmp_path / "prices.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(entry: StrategyEntry, series: Path, hours: float, **options: Any) -> BacktestResult:
    settings: dict[str, Any] = {"depth_usd": DEEP, "funding": {"USDC": D(100)}, **options}
    spec = BacktestSpec(strategy=entry, start=T0, end=T0 + hours * HOUR, prices=series, **settings)
    return run_backtest(spec)


def bought(result: BacktestResult) -> list[Decimal]:
    return [f.bought for f in result.fills if not f.skipped]


def test_a_four_slice_dca_buys_what_the_hand_computation_says(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "5"), (3, "10")])
    result = run(dca(), series, 3, **FREE)
    assert [f.time for f in result.fills] == [T0 + i * HOUR for i in range(4)]
    assert bought(result) == [D("1.99999999"), D("2.49999999"), D("1.99999999"), D("0.99999999")]
    assert [f.sold for f in result.fills] == [D(10)] * 4
    assert all(f.fee == 0 for f in result.fills)
    assert [f.buy_usd for f in result.fills] == [D(5), D(4), D(5), D(10)]
    total = sum(bought(result), D(0))
    assert total == D("7.49999996")
    # The average entry price is the harmonic mean of 5, 4, 5, 10: 40 / 7.5, less rounding.
    assert (D(40) / total).quantize(D("0.00000001")) == D("5.33333336")
    [order] = result.orders
    assert (order.status, order.amount, order.refunded) == ("filled", D(40), D(0))
    assert result.start_balances == {USDC: D(100)}
    assert result.end_balances[USDC] == D(60) and result.end_balances[APT] == total
    assert result.locked_at_end == {}
    assert (result.ticks, result.actions, result.refused, result.errors) == (1, 1, 0, [])
    assert result.prices[APT].mean == D(6) and result.prices[APT].last == D(10)


def test_fees_take_the_expected_amounts(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "5"), (3, "10")])
    result = run(dca(), series, 3)  # the paper world's fees: pool 25, platform 10, keeper 5 bps
    # Per slice of 10 USDC: keeper 5,000 units; platform 10 bps of the 9,995,000 swapped =
    # 9,995; the pool keeps 25 bps of the 9,985,005 it gets = 24,962 → 0.039957 USDC.
    assert [f.fee for f in result.fills] == [D("0.039957")] * 4
    # out = floor(y · e / (x·10⁴ + e)), e = 9,985,005 × 9,975
    assert bought(result) == [D("1.99200849"), D("2.49001062"), D("1.99200849"), D("0.99600424")]
    assert result.end_balances[USDC] == D(60)  # fees come out of the 10 per slice


def test_slippage_prices_every_execution_worse(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "5"), (3, "10")])
    result = run(dca(), series, 3, slippage=D("0.5"), **FREE)
    # 0.5 % less than without slippage, rounded down: floor(199,999,999 × 0.995) ...
    assert bought(result) == [D("1.98999999"), D("2.48749999"), D("1.98999999"), D("0.99499999")]


def test_slippage_beyond_the_orders_tolerance_skips_every_slice(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "5"), (3, "10")])
    result = run(dca(), series, 3, slippage=D(2), **FREE)  # the DCA's own slippage: 1 %
    assert [f.skipped for f in result.fills] == [True] * 4
    assert all(f.bought == f.sold == 0 for f in result.fills)
    [order] = result.orders
    assert (order.status, order.refunded) == ("refunded", D(40))
    assert result.end_balances[USDC] == D(100)


def test_rate_bounds_skip_slices_outside_them(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "5"), (3, "10")])
    # APT per USDC at most 0.21: buys at 5 (0.2) and 10 (0.1), not at 4 (0.25).
    result = run(dca(max_rate="0.21"), series, 3, **FREE)
    assert [f.skipped for f in result.fills] == [False, True, False, False]
    [order] = result.orders
    assert (order.status, order.refunded) == ("refunded", D(10))


def test_a_limit_order_on_a_series_that_touches_its_rate_fills_once(
    tmp_path: Path, plugins: Path
) -> None:
    # Buys APT at ≤ 1 / 0.24 ≈ 4.17 USD: touched at 02:00 and again at 04:00.
    series = prices(tmp_path, [(0, "5"), (1, "5"), (2, "4"), (3, "5"), (4, "4"), (5, "5")])
    entry = StrategyEntry(
        name="lim", plugin="one_limit", schedule={"interval_seconds": 1800}, params={"rate": "0.24"}
    )
    result = run(entry, series, 5, strategy_dirs=[plugins], **FREE)
    [fill] = result.fills
    assert (fill.kind, fill.time, fill.sold, fill.bought) == (
        "limit",
        T0 + 2 * HOUR,
        D(10),
        D("2.49999999"),
    )
    [order] = result.orders
    assert order.status == "filled" and order.ended_at == T0 + 2 * HOUR
    assert result.actions == 1  # every later tick repeats the key: done once


def test_a_limit_order_that_is_never_touched_expires_and_is_refunded(
    tmp_path: Path, plugins: Path
) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "4.5"), (4, "4")])
    entry = StrategyEntry(
        name="lim",
        plugin="one_limit",
        schedule={"interval_seconds": 3600},
        params={"rate": "0.3", "expiry_hours": 3},  # ≤ 3.33 USD: never
    )
    result = run(entry, series, 6, strategy_dirs=[plugins], **FREE)
    assert result.fills == []
    [order] = result.orders
    assert (order.status, order.ended_at, order.refunded) == ("expired", T0 + 3 * HOUR, D(10))
    assert result.end_balances[USDC] == D(100)


def test_through_a_gap_the_last_price_holds_and_limits_wait_for_a_tick(
    tmp_path: Path, plugins: Path
) -> None:
    series = prices(tmp_path, [(0, "5"), (5, "4")])  # nothing recorded for five hours
    result = run(dca(), series, 3, **FREE)
    assert bought(result) == [D("1.99999999")] * 4  # every slice at the stale 5
    limit = StrategyEntry(
        name="lim", plugin="one_limit", schedule={"interval_seconds": 3600}, params={"rate": "0.24"}
    )
    [fill] = run(limit, series, 6, strategy_dirs=[plugins], **FREE).fills
    assert fill.time == T0 + 5 * HOUR  # the first recorded price under the rate


def test_the_strategy_sees_its_orders_fills_and_balances(tmp_path: Path, plugins: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "5"), (3, "10")])
    watcher = load_plugin("watcher", [plugins])
    watcher.seen.clear()  # type: ignore[attr-defined]
    entry = StrategyEntry(name="w", plugin="watcher", schedule={"interval_seconds": 3600})
    result = run(entry, series, 3, strategy_dirs=[plugins], **FREE)
    seen = watcher.seen  # type: ignore[attr-defined]
    assert [c.now for c in seen] == [T0 + i * HOUR for i in range(4)]
    assert [c.price("APT").usd for c in seen] == [D(5), D(4), D(5), D(10)]
    # As the live engine: APT and the tokens the parameters name (here none).
    assert seen[0].balances == {APT: D(0)}
    assert result.errors == [f"{(T0 + 2 * HOUR).isoformat()} RuntimeError: boom at two"]
    assert result.ticks == 4  # the failing tick did not stop the run


def test_a_finished_dca_is_renewed_at_the_next_tick_and_starts_at_once(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4"), (2, "5"), (3, "10")])
    result = run(dca(orders=2, every=3600), series, 3, **FREE)
    # Each 2-slice order ends with its slice at the tick's moment; the tick sees it final
    # (the order event, then on_tick) and the next order's first slice runs then too.
    assert [o.created_at for o in result.orders] == [T0 + i * HOUR for i in range(4)]
    assert [o.status for o in result.orders] == ["filled"] * 3 + ["active"]
    hours = [0, 1, 1, 2, 2, 3, 3]
    assert [f.time for f in result.fills] == [T0 + h * HOUR for h in hours]
    assert result.locked_at_end == {USDC: D(10)}


def test_default_funding_is_a_million_usd_of_each_named_token(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4")])
    spec = BacktestSpec(strategy=dca(), start=T0, end=T0 + HOUR, prices=series)
    result = run_backtest(spec)
    assert result.start_balances == {USDC: D(1_000_000), APT: D(200_000)}


def test_what_cannot_be_run_is_one_line(tmp_path: Path) -> None:
    series = prices(tmp_path, [(0, "5")])
    with pytest.raises(BacktestError, match="no prices for THL"):
        run(dca(to_token="THL"), series, 1)
    # APT is known to every run (for gas), but a strategy that trades it needs its prices.
    no_apt = prices(tmp_path, [])
    with pytest.raises(BacktestError, match="no prices for APT"):
        run(dca(), no_apt, 1)
    late = prices(tmp_path, [(2, "5")])
    with pytest.raises(BacktestError, match="prices of APT start at"):
        run(dca(), late, 3)
    with pytest.raises(BacktestError, match="amount_per_order"):
        run(dca(amount_per_order="-1"), series, 1)
    with pytest.raises(ValueError, match="before it starts"):
        BacktestSpec(strategy=dca(), start=T0, end=T0, prices=series)


def test_a_shallow_pool_fills_a_limit_order_in_parts(tmp_path: Path, plugins: Path) -> None:
    # 200 USD per side: 10 USDC at a rate just under the market moves the pool past the
    # rate before all of it is sold; the rest fills at later price points.
    series = prices(tmp_path, [(h / 4, "4") for h in range(12)])
    entry = StrategyEntry(
        name="lim", plugin="one_limit", schedule={"interval_seconds": 3600}, params={"rate": "0.24"}
    )
    result = run(entry, series, 3, strategy_dirs=[plugins], depth_usd=D(200), **FREE)
    assert len(result.fills) >= 2
    assert all(f.bought >= f.sold * D("0.24") for f in result.fills)  # never under the rate
    assert sum((f.sold for f in result.fills), D(0)) <= D(10)
    [order] = result.orders
    assert order.status in ("partially_filled", "filled")


def test_prices_recorded_in_the_journal_can_be_replayed(tmp_path: Path) -> None:
    from bot.journal import Journal, PriceTickRow

    url = f"sqlite:///{tmp_path / 'bot.db'}"
    with Journal.open(url) as journal:
        journal.add_price_ticks(
            [PriceTickRow(T0 + h * HOUR, APT, D(p)) for h, p in [(0, "5"), (1, "4"), (2, "5")]]
            + [PriceTickRow(T0 + 3 * HOUR, "0xa", D(10))]  # the FA spelling of APT
        )
    spec = BacktestSpec(
        strategy=dca(), start=T0, end=T0 + 3 * HOUR, prices="journal", journal_url=url,
        depth_usd=DEEP, funding={"USDC": D(100)}, **FREE,
    )  # fmt: skip
    result = run_backtest(spec)
    assert bought(result) == [D("1.99999999"), D("2.49999999"), D("1.99999999"), D("0.99999999")]
    assert result.credit is not None and result.price_source == "journal"


def test_a_swap_executes_at_the_quote_and_reverts_beyond_its_slippage(
    tmp_path: Path, plugins: Path
) -> None:
    series = prices(tmp_path, [(0, "5"), (1, "4")])
    entry = StrategyEntry(name="s", plugin="one_swap", schedule={"interval_seconds": 3600})
    result = run(entry, series, 1, strategy_dirs=[plugins])
    [fill] = result.fills
    assert (fill.kind, fill.order_id, fill.time, fill.sold) == ("swap", "swap:once", T0, D(10))
    # Platform 10 bps of 10 USDC = 0.01; the pool keeps 25 bps of the 9.99 it gets.
    assert fill.fee == D("0.01") + D("0.024975")
    assert fill.bought == D("1.99300499")  # floor(y · e / (x·10⁴ + e)), e = 9,990,000 × 9,975
    assert (result.actions, result.refused) == (1, 0)  # the later tick repeats the key
    reverted = run(entry, series, 1, strategy_dirs=[plugins], slippage=D(2))
    # Reverted (nothing applied), the key runs again on the next tick, as live: reverts again.
    assert reverted.fills == [] and (reverted.actions, reverted.refused) == (0, 2)
    assert reverted.end_balances[USDC] == D(100)


def test_a_dca_whose_minimum_rate_is_infinity_is_refused_as_the_service_does(
    tmp_path: Path, plugins: Path
) -> None:
    entry = StrategyEntry(name="nf", plugin="no_floor", schedule={"interval_seconds": 3600})
    series = prices(tmp_path, [(0, "5")])
    result = run(entry, series, 1, strategy_dirs=[plugins])
    assert result.orders == [] and result.fills == []
    assert result.refused >= 1
