"""A backtest's result in the accounting's terms (`bot.accounting.from_backtest`).

- the same fills through the journal's adapter (a real journal file) and the backtest's
  give the same summary, figure for figure;
- a real backtest run (the paper core's fees, a skipped slice) accounts to the
  backtest's own totals to the base unit: invested, received, fees, held, value.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from bot.accounting import (
    BucketPeriod,
    CostMethod,
    FeeKind,
    PricePoint,
    PriceSeries,
    account,
    by_strategy,
)
from bot.accounting.from_backtest import (
    BACKTEST_WALLET,
    backtest_prices,
    backtest_trades,
)
from bot.accounting.from_journal import price_book, trades_of_order
from bot.app.backtest_accounting import backtest_report
from bot.backtest.metrics import compute_metrics
from bot.backtest.result import BacktestFill, BacktestResult, PricePoints, TokenInfo
from bot.backtest.runner import run_backtest
from bot.backtest.spec import BacktestSpec
from bot.journal import Journal
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot, PriceTickRow
from tests.support.backtest_inputs import DEEP, dca

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "ab" * 32
T0 = datetime(2026, 5, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
END = T0 + 72 * HOUR
# (hours after T0, USDC sold with the fee inside, APT bought, keeper fee, APT's price)
FILLS = [
    (12, "25", "4.99", "0.05", "5"),
    (36, "25", "6.2375", "0.05", "4"),
    (60, "25", "3.992", "0.05", "6.25"),
]
TICKS = [(0, APT, "5"), (0, USDC, "1")] + [(h, APT, p) for h, *_, p in FILLS]
TICKS += [(72, APT, "6")]


def _journal_trades(path: Path) -> tuple[list[Any], Any]:
    snapshot = OrderSnapshot(
        kind="dca",
        order_id="0xdca1",
        wallet=WALLET,
        from_token=USDC,
        to_token=APT,
        status="completed",
        amount_total=Decimal("75"),
        strategy="dca-apt",
    )
    fills = [
        FillRecord(f"0xt{n}", "filled", n, Decimal(s), Decimal(b), Decimal(f), T0 + h * HOUR)
        for n, (h, s, b, f, _) in enumerate(FILLS, start=1)
    ]
    with Journal.open(f"sqlite:///{path}") as journal:
        journal.observe_orders(
            [OrderObservation(snapshot, fills=fills)], observed_at=END, source="poll"
        )
        journal.add_price_ticks([PriceTickRow(T0 + h * HOUR, t, Decimal(p)) for h, t, p in TICKS])
        order = journal.order("dca", "0xdca1")
        assert order is not None
        trades = trades_of_order(order, journal.fills("dca", "0xdca1"))
        ticks = [tick for token in (APT, USDC) for tick in journal.price_ticks(token)]
    return trades, price_book(ticks)


def _points(token: str) -> PricePoints:
    points = [PricePoint(T0 + h * HOUR, Decimal(p)) for h, t, p in TICKS if t == token]
    series = PriceSeries(token, points)
    return PricePoints(
        token=token,
        at=series.at,
        sample=lambda n: [(p.time, p.usd) for p in points][:n],
        mean=Decimal(0),  # not read by the adapter
        first=points[0].usd,
        last=points[-1].usd,
    )


def _result() -> BacktestResult:
    apt = dict((h, Decimal(p)) for h, *_, p in FILLS)
    fills = [
        BacktestFill(
            T0 + h * HOUR,
            "dca",
            "0xdca1",
            USDC,
            APT,
            Decimal(s),
            Decimal(b),
            Decimal(f),
            Decimal(1),
            apt[h],
        )
        for h, s, b, f, _ in FILLS
    ]
    # A skipped slice moves nothing: no trade.
    fills.append(
        BacktestFill(
            T0 + 70 * HOUR,
            "dca",
            "0xdca1",
            USDC,
            APT,
            Decimal(0),
            Decimal(0),
            Decimal(0),
            Decimal(1),
            Decimal(6),
            skipped=True,
        )
    )
    return BacktestResult(
        strategy="dca-apt",
        plugin="recurring_dca",
        params={},
        start=T0,
        end=END,
        tokens={APT: TokenInfo(APT, "APT", 8), USDC: TokenInfo(USDC, "USDC", 6)},
        fills=fills,
        orders=[],
        start_balances={USDC: Decimal(100)},
        end_balances={},
        locked_at_end={},
        prices={APT: _points(APT), USDC: _points(USDC)},
        ticks=3,
        events=0,
        actions=1,
        refused=0,
    )


def test_the_same_fills_through_both_adapters_give_the_same_figures(tmp_path: Path) -> None:
    journal_trades, journal_book = _journal_trades(tmp_path / "bot.db")
    result = _result()
    trades = backtest_trades(result)
    assert len(trades) == 3  # the skipped slice is no trade
    assert {t.wallet for t in trades} == {BACKTEST_WALLET}
    assert [f.kind for t in trades for f in t.fees] == [FeeKind.KEEPER] * 3
    for method in CostMethod:
        options: dict[str, Any] = {
            "valued_at": END,
            "method": method,
            "start": T0,
            "end": END,
            "period": BucketPeriod.DAY,
        }
        live = by_strategy(journal_trades, journal_book, **options)
        tested = by_strategy(trades, backtest_prices(result), **options)
        assert live == tested  # every figure: totals, buckets, position, holdings, P&L
    (summary,) = live.values()
    assert summary.totals.invested == {USDC: Decimal(75)}
    assert summary.unrealised_usd == Decimal("15.2195") * 6 - 75  # 91.317 − 75


def test_a_run_accounts_to_the_backtests_own_totals(tmp_path: Path) -> None:
    # APT at 5, 4, 5, 10 on the hour; a 4-slice DCA of 10 USDC with the paper world's
    # fees, its rate bound skipping the slice at 4 (0.25 APT per USDC > 0.21).
    series = tmp_path / "prices.csv"
    lines = ["timestamp,token,usdPrice", f"{T0.isoformat()},{USDC},1"]
    lines += [f"{(T0 + h * HOUR).isoformat()},{APT},{p}" for h, p in enumerate([5, 4, 5, 10])]
    series.write_text("\n".join(lines) + "\n")
    spec = BacktestSpec(
        strategy=dca(max_rate="0.21"),
        start=T0,
        end=T0 + 3 * HOUR,
        prices=series,
        depth_usd=DEEP,
        funding={"USDC": Decimal(100)},
    )
    result = run_backtest(spec)
    metrics = compute_metrics(result)
    assert [f.skipped for f in result.fills] == [False, True, False, False]
    summary = account(
        backtest_trades(result), backtest_prices(result), valued_at=result.end, start=T0
    )
    quote, asset = metrics.quote, metrics.asset
    assert (quote, asset) == (USDC, APT)
    totals = summary.totals
    assert totals.trades == metrics.fills == 3 and metrics.skips == 1
    assert totals.invested == {USDC: metrics.invested}
    assert totals.received == {APT: metrics.received}
    assert totals.fees == {FeeKind.KEEPER: metrics.fees}
    # To the base unit: USDC has 6 decimals, APT 8; the sums are whole base units.
    assert (metrics.invested * 10**6) % 1 == 0 and (metrics.received * 10**8) % 1 == 0
    assert totals.traded_usd == metrics.invested_usd
    position = summary.position
    assert position is not None
    assert (position.paid, position.bought) == (metrics.invested, metrics.received)
    (held,) = summary.holdings
    assert held.quantity == metrics.held_at_end
    assert held.value_usd == metrics.value_at_end_usd  # nothing sold back: held × last
    assert summary.pnl_usd == metrics.pnl_usd  # value − what the buys cost in USD
    report = backtest_report(result)
    assert list(report.summaries) == ["dca"] and report.valued_at == result.end
    assert report.summaries["dca"].totals == totals
