"""Every price the backtest report shows follows the `[display].price_quote` convention.

A take_profit (APT sold for USDC) is shown in `USDC per APT`, as `bot orders` shows its
limits, although its position (the direction it trades) counts in APT; with
`price_quote = ["APT"]` a USDC → APT buy is shown in `APT per USDC`. Values are the
figures' own ratios (exact `Decimal`s); the metrics are untouched.
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest

from bot.backtest.charts import order_levels, price_figure, price_unit
from bot.backtest.metrics import compute_metrics
from bot.backtest.page import write_report_files
from bot.backtest.quoting import pair_view, report_convention
from bot.backtest.report import format_price, summary_rows, summary_table
from bot.backtest.result import BacktestOrder, BacktestResult
from bot.backtest.trades import trade_rows
from tests.support.backtest_results import APT, HOUR, T0, USDC, ladder_result, make_result, sell
from tests.support.html_tables import read_page

D = Decimal
pytest.importorskip("matplotlib")


def take_profit_result() -> BacktestResult:
    """Two APT → USDC sells (at 5 and 6 USDC per APT) and an open target at 7.5."""
    orders = [
        BacktestOrder("limit", "tp-1", T0, APT, USDC, D(14), "filled", T0 + 2 * HOUR, rate=D(5)),
        BacktestOrder("limit", "tp-2", T0, APT, USDC, D(10), "active", None, rate=D("7.5")),
    ]
    fills = [sell(1, "10", "50", "5"), sell(2, "4", "24", "6", fee="0.01")]
    params = {"token": "APT", "quote_token": "USDC"}
    return make_result(fills, ["5", "4", "6", "8"], orders, strategy="tp", params=params)


def test_a_take_profit_is_shown_in_usdc_per_apt(tmp_path: Path) -> None:
    result = take_profit_result()
    metrics = compute_metrics(result)
    # Its position counts in APT (what it pays with): the accounting is unchanged.
    assert (metrics.quote, metrics.asset) == (APT, USDC)
    assert (metrics.invested, metrics.received) == (D(14), D(74))
    assert metrics.avg_entry_quote == D(14) / D(74)  # APT per USDC, as computed

    rows = trade_rows(result, metrics)
    assert [r.price_unit for r in rows] == ["USDC per APT"] * 2
    assert [r.price for r in rows] == [D(5), D(6)]  # bought / sold, exactly

    write_report_files(tmp_path, result, metrics)
    with (tmp_path / "trades.csv").open(newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [(D(r["price"]), r["price_unit"]) for r in written] == [
        (D(5), "USDC per APT"),
        (D(6), "USDC per APT"),
    ]
    page = read_page((tmp_path / "report.html").read_text())
    trades = next(t for t in page.tables if t.css == "data")
    assert [row[6] for row in trades.rows] == ["5.00000 USDC per APT", "6.00000 USDC per APT"]

    entry = dict(summary_rows(result, metrics))["average entry"]
    assert entry.endswith(f"({format_price(D(74) / D(14))} USDC per APT)")
    assert entry.endswith("(5.28571 USDC per APT)")
    assert "APT per USDC" not in summary_table(result, metrics)


def test_a_take_profit_chart_reads_usdc_per_apt() -> None:
    result = take_profit_result()
    metrics = compute_metrics(result)
    assert price_unit(result, metrics) == (APT, USDC, "USDC per APT")
    levels = {level.order_id: level.price for level in order_levels(result, metrics)}
    assert levels == {"tp-1": D(5), "tp-2": D("7.5")}  # a sell's rate is USDC per APT
    axes = price_figure(result, metrics).axes[0]
    assert axes.get_ylabel() == "USDC per APT"
    assert axes.get_title(loc="left") == "APT price in USDC"
    line = next(a for a in axes.lines if a.get_label() == "price")
    assert list(line.get_ydata()) == pytest.approx([5.0, 4.0, 6.0, 8.0])  # APT in USDC
    labels = [str(a.get_label()) for a in axes.lines]
    assert "mean 5.75000" in labels  # (5 + 4 + 6 + 8) / 4 USDC per APT
    cost = next(a for a in axes.lines if a.get_label() == "average cost")
    assert list(cost.get_ydata()) == pytest.approx([5.0, 74 / 14, 74 / 14])
    marks = next(c for c in axes.collections if str(c.get_label()).endswith("(2)"))
    assert [y for _, y in marks.get_offsets()] == pytest.approx([5.0, 6.0])


def test_price_quote_apt_shows_a_usdc_to_apt_buy_in_apt_per_usdc(tmp_path: Path) -> None:
    result = ladder_result()  # a buy of 25 APT for 100 USDC, a sell back, a skipped slice
    metrics = compute_metrics(result)
    convention = report_convention(["APT"])
    rows = trade_rows(result, metrics, convention)
    assert [r.price_unit for r in rows] == ["APT per USDC"] * 3
    # 25 APT for 100 USDC; 50 USDC for 10 APT; the market at APT $10: each exact.
    assert [r.price for r in rows] == [D("0.25"), D("0.2"), D("0.1")]
    write_report_files(tmp_path, result, metrics, convention=convention)
    with (tmp_path / "trades.csv").open(newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [(D(r["price"]), r["price_unit"]) for r in written] == [
        (D("0.25"), "APT per USDC"),
        (D("0.2"), "APT per USDC"),
        (D("0.1"), "APT per USDC"),
    ]
    page = read_page((tmp_path / "report.html").read_text())
    trades = next(t for t in page.tables if t.css == "data")
    assert [row[6] for row in trades.rows] == [
        "0.250000 APT per USDC",
        "0.200000 APT per USDC",
        "0.100000 APT per USDC (market)",
    ]
    summary = dict(summary_rows(result, metrics, convention))
    assert summary["average entry"].endswith("(0.250000 APT per USDC)")

    assert price_unit(result, metrics, convention) == (USDC, APT, "APT per USDC")
    levels = {lv.order_id: lv.price for lv in order_levels(result, metrics, convention)}
    # A buy's rate is APT per USDC: the level is the rate itself, not 1 / rate.
    assert levels == {"l-1": D("0.25"), "l-2": D("0.3125"), "l-3": D("0.4"), "l-4": D("0.5")}
    axes = price_figure(result, metrics, convention).axes[0]
    assert axes.get_ylabel() == "APT per USDC"
    assert axes.get_title(loc="left") == "USDC price in APT"
    line = next(a for a in axes.lines if a.get_label() == "price")
    assert list(line.get_ydata()) == pytest.approx([0.2, 0.25, 0.2, 0.1])


def test_the_default_keeps_a_buy_in_usdc_per_apt() -> None:
    result = ladder_result()
    metrics = compute_metrics(result)
    default = report_convention()
    assert [r.price_unit for r in trade_rows(result, metrics, default)] == ["USDC per APT"] * 3
    assert trade_rows(result, metrics, default) == trade_rows(result, metrics)
    assert price_unit(result, metrics) == (APT, USDC, "USDC per APT")
    entry = dict(summary_rows(result, metrics))["average entry"]
    assert entry.endswith(f"({format_price(metrics.avg_entry_quote)} USDC per APT)")


def test_a_pair_view_inverts_from_the_figures_themselves() -> None:
    result = ladder_result()
    view = pair_view(result, USDC, APT, report_convention(["APT"]))
    assert (view.quote, view.base, view.unit) == (APT, USDC, "APT per USDC")
    # 3 APT for 7 USDC: 3/7 APT per USDC, never 1 / (7/3) rounded.
    assert view.exchange(USDC, D(7), D(3)) == D(3) / D(7)
    assert view.exchange(APT, D(3), D(7)) == D(3) / D(7)
    assert view.exchange(USDC, D(0), D(3)) is None
    assert view.rate(USDC, D("0.2")) == D("0.2") and view.rate(APT, D(5)) == D("0.2")
    assert view.rate(APT, None) is None
    assert view.market(APT, D(5), D(1)) == D("0.2")
    assert view.market(USDC, D(1), D(5)) == D("0.2")
    assert view.market(APT, D(0), D(1)) is None  # no USD price of the quote token
