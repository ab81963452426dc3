"""The report a user reads: the trade table, one title, the charts' layers, the warnings.

The page is parsed back as a browser reads it; the charts are inspected as matplotlib
draws them (artists, their layers, the rendered pixels).
"""

from __future__ import annotations

import csv
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from bot.backtest.charts import (
    LINE_ZORDER,
    MARKER_ZORDER,
    Charts,
    date_number,
    order_levels,
    price_figure,
    value_figure,
)
from bot.backtest.metrics import compute_metrics, drawdown_series
from bot.backtest.page import TABLE_ROWS, report_page, write_report_files
from bot.backtest.report import build_report, report_title
from bot.backtest.trades import trade_rows
from tests.support.backtest_results import (
    HOUR,
    T0,
    buy,
    four_slice_dca,
    ladder_result,
    make_result,
)
from tests.support.html_tables import read_page

D = Decimal
pytest.importorskip("matplotlib")


# ── the trade table ───────────────────────────────────────────────────────────────────


def test_the_trade_table_lists_every_trade_with_units(tmp_path: Path) -> None:
    result = ladder_result()
    metrics = compute_metrics(result)
    write_report_files(tmp_path, result, metrics, build_report(result, metrics))
    page = read_page((tmp_path / "report.html").read_text())
    trades = next(t for t in page.tables if t.css == "data")
    assert trades.header == [
        "time (UTC)", "strategy", "order", "side", "sold", "bought", "price", "fee",
    ]  # fmt: skip
    assert trades.rows == [
        [
            "2026-01-01 01:00:00", "ladder", "limit l-1", "buy", "100 USDC", "25 APT",
            "4.00000 USDC per APT", "0.3 USDC",
        ],
        [
            "2026-01-01 02:00:00", "ladder", "limit tp-1", "sell", "10 APT", "50 USDC",
            "5.00000 USDC per APT", "0.01 APT",
        ],
        [
            "2026-01-01 03:00:00", "ladder", "dca dca-9", "skipped", "-", "-",
            "10.0000 USDC per APT (market)", "-",
        ],
    ]  # fmt: skip
    assert trades.row_classes == ["buy", "sell", "skipped"]
    assert len(trades.rows) == len(result.fills)
    assert "Trades (3)" in page.h2
    assert {"report.json", "trades.csv"} <= set(page.links)


def test_trades_csv_is_exact_and_matches_the_fills(tmp_path: Path) -> None:
    result = ladder_result()
    metrics = compute_metrics(result)
    write_report_files(tmp_path, result, metrics)
    with (tmp_path / "trades.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["side"] for r in rows] == ["buy", "sell", "skipped"]
    for row, fill in zip(rows, sorted(result.fills, key=lambda f: f.time), strict=True):
        assert row["time"] == fill.time.isoformat().replace("+00:00", "Z")
        assert D(row["sold"]) == fill.sold and D(row["bought"]) == fill.bought
        assert D(row["fee"]) == fill.fee
        assert row["price_unit"] == "USDC per APT"
    assert D(rows[0]["price"]) == D(4)  # 100 USDC for 25 APT, fees included
    assert D(rows[1]["price"]) == D(5)  # 50 USDC for 10 APT


def test_a_long_trade_table_shows_both_ends_and_points_to_the_csv() -> None:
    fills = [buy(0, "1", "0.2", "5") for _ in range(TABLE_ROWS + 7)]
    result = make_result(fills, ["5", "5"])
    metrics = compute_metrics(result)
    page = read_page(report_page(result, metrics, _no_charts(), trade_rows(result, metrics)))
    trades = next(t for t in page.tables if t.css == "data")
    assert len(trades.rows) == TABLE_ROWS + 1
    gap = trades.rows[TABLE_ROWS // 2]
    assert gap == ["… 7 more trades: all of them are in trades.csv"]
    assert f"Trades ({TABLE_ROWS + 7})" in page.h2


# ── one title ─────────────────────────────────────────────────────────────────────────


def test_one_title_names_strategy_pair_and_window_once() -> None:
    result = replace(four_slice_dca(), strategy="recurring_dca")  # the plugin's own name
    metrics = compute_metrics(result)
    title = report_title(result, metrics)
    assert title == "recurring_dca · USDC → APT · 2026-01-01 00:00 → 2026-01-01 03:00 UTC"
    page = read_page(report_page(result, metrics, _no_charts()))
    assert page.title == page.h1[0] == title
    assert page.h1[0].count("recurring_dca") == 1
    named = replace(result, strategy="weekly-apt", end=T0 + 24 * HOUR)
    assert report_title(named, metrics).startswith("weekly-apt (recurring_dca) · USDC → APT")
    assert report_title(named, metrics).endswith("2026-01-01 → 2026-01-02")


# ── warnings ──────────────────────────────────────────────────────────────────────────


def test_warnings_are_a_section_of_the_page_and_of_the_json() -> None:
    line = "the prices of APT end at 2026-01-01T03:00:00Z, 9 days before the window's end"
    result = replace(four_slice_dca(), warnings=[line])
    metrics = compute_metrics(result)
    assert read_page(report_page(result, metrics, _no_charts())).warnings == [line]
    assert build_report(result, metrics)["warnings"] == [line]
    plain = four_slice_dca()
    assert read_page(report_page(plain, compute_metrics(plain), _no_charts())).warnings == []


# ── the price chart ───────────────────────────────────────────────────────────────────


def test_trade_markers_are_drawn_above_the_price_line() -> None:
    result = four_slice_dca()  # buys at exactly the oracle price: markers sit on the line
    figure = price_figure(result, compute_metrics(result))
    axes = figure.axes[0]
    line = next(a for a in axes.lines if a.get_label() == "price")
    buys = next(c for c in axes.collections if str(c.get_label()).startswith("buy"))
    assert line.get_zorder() == LINE_ZORDER < buys.get_zorder() == MARKER_ZORDER
    assert str(buys.get_label()) == "buy (4)"
    assert "buy (4)" in axes.get_legend_handles_labels()[1]
    # Rendered: at a buy on the line, the pixel is the marker's green, not the line's grey.
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())
    height = pixels.shape[0]
    x, y = axes.transData.transform((date_number(T0 + HOUR), 4.0))
    r, g, b, _ = pixels[round(float(height - y)), round(float(x))]
    assert (r, g, b) == (0x1A, 0x7F, 0x37)  # GREEN: the marker covers the line


def test_ladder_levels_and_cancellations_are_on_the_price_chart() -> None:
    result = ladder_result()
    metrics = compute_metrics(result)
    levels = {level.order_id: level for level in order_levels(result, metrics)}
    assert {k: (v.price, v.outcome) for k, v in levels.items()} == {
        "l-1": (D(4), "filled"),  # 1 / 0.25 USDC per APT
        "l-2": (D("3.2"), "cancelled"),
        "l-3": (D("2.5"), "expired"),
        "l-4": (D(2), "open"),
    }
    assert levels["l-4"].end == result.end  # still open: drawn to the window's end
    axes = price_figure(result, metrics).axes[0]
    labels = [str(c.get_label()) for c in axes.collections]
    for text in (
        "limit order level (filled): 1",
        "limit order level (cancelled ×): 1",
        "limit order level (expired): 1",
        "limit order level (open at end): 1",
        "sell (1)",
        "skipped (1)",
    ):
        assert text in labels
    cancelled = next(c for c in axes.collections if c.get_gid() == "cancellations")
    assert tuple(cancelled.get_offsets()[0]) == pytest.approx((date_number(T0 + 2 * HOUR), 3.2))
    segments = next(
        c for c in axes.collections if str(c.get_label()).startswith("limit order level (filled)")
    )
    (start, end), = [tuple(map(tuple, s)) for s in segments.get_segments()]  # fmt: skip
    assert start == pytest.approx((date_number(T0), 4.0))
    assert end == pytest.approx((date_number(T0 + HOUR), 4.0))
    level_layer = segments.get_zorder()
    line = next(a for a in axes.lines if a.get_label() == "price")
    assert level_layer < line.get_zorder()  # levels under the price, trades above it


# ── the value chart ───────────────────────────────────────────────────────────────────


def test_value_chart_has_the_lump_sum_and_the_drawdown_panel() -> None:
    result = four_slice_dca()
    metrics = compute_metrics(result)
    top, bottom = value_figure(result, metrics).axes
    lump = next(a for a in top.lines if str(a.get_label()).startswith("lump sum at start"))
    assert metrics.lump_sum is not None
    expected = [float(metrics.lump_sum.received * p.price_usd) for p in metrics.path]
    assert list(lump.get_ydata()) == pytest.approx(expected)
    assert str(lump.get_label()).endswith(f"({metrics.lump_sum.return_percent:+.2f}%)")
    depth = drawdown_series(metrics.path)
    assert max(d for _, d in depth) == metrics.max_drawdown_usd == D(20)  # exact, one definition
    drawn = next(a for a in bottom.lines)
    assert min(drawn.get_ydata()) == pytest.approx(-20.0)
    assert any("max drawdown $20.00 (10.00%)" in str(c.get_label()) for c in bottom.collections)


def _no_charts() -> Charts:
    return Charts(price_png=b"", value_png=b"")
