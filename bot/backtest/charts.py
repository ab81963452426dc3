"""Backtest pictures: price with the fills and the average cost, and the position's value.

PNGs are drawn with matplotlib's Agg canvas on a `Figure` of our own (no pyplot, so no
global state and no display), imported only when a report is asked for: `bot backtest`
without `--report` never loads matplotlib. `report.html` is one self-contained file: the
PNGs embedded as base64 data URIs, the summary table and the JSON summary.

Prices become floats here for drawing only; the figures in the table, the JSON and the
metrics stay exact. When the result carries the provider's credit line (its prices were
recorded), it is written in each picture and at the foot of the HTML page.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.backtest.metrics import Metrics
from bot.backtest.report import summary_rows
from bot.backtest.result import BacktestResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["CHART_POINTS", "Charts", "draw_charts", "write_html", "write_report_files"]

CHART_POINTS = 2000
"""Price points drawn per line (the series is sampled evenly; fills are all drawn)."""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Charts:
    """The two pictures as PNG bytes."""

    price_png: bytes
    value_png: bytes


def draw_charts(result: BacktestResult, metrics: Metrics) -> Charts:
    """Draw the price chart (fills, average cost, mean) and the position value chart."""
    return Charts(
        price_png=_png(_price_figure(result, metrics), result.credit),
        value_png=_png(_value_figure(result, metrics), result.credit),
    )


def write_report_files(
    out_dir: Path,
    result: BacktestResult,
    metrics: Metrics,
    report: Mapping[str, Any],
) -> list[Path]:
    """Write `price.png`, `value.png` and `report.html` into `out_dir`; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    charts = draw_charts(result, metrics)
    price = out_dir / "price.png"
    value = out_dir / "value.png"
    price.write_bytes(charts.price_png)
    value.write_bytes(charts.value_png)
    page = out_dir / "report.html"
    page.write_text(write_html(result, metrics, charts, report), encoding="utf-8")
    return [price, value, page]


def write_html(
    result: BacktestResult, metrics: Metrics, charts: Charts, report: Mapping[str, Any]
) -> str:
    """The self-contained HTML page: table, embedded pictures, JSON summary, credit."""
    esc = html.escape
    rows = "\n".join(
        f"<tr><th>{esc(label)}</th><td>{esc(value)}</td></tr>"
        for label, value in summary_rows(result, metrics)
    )
    summary = {k: report[k] for k in report if k not in ("fills", "orders")}
    errors = "".join(f"<li>{esc(line)}</li>" for line in result.errors)
    credit = f'<footer class="credit">{esc(result.credit)}</footer>' if result.credit else ""
    title = f"Backtest: {result.strategy} ({result.plugin})"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{esc(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ text-align: left; padding: .25em 1em .25em 0; border-bottom: 1px solid #ddd; }}
th {{ font-weight: 600; white-space: nowrap; }}
img {{ max-width: 100%; }}
pre {{ background: #f6f6f6; padding: 1em; overflow: auto; font-size: .85em; }}
.credit {{ margin-top: 2em; color: #555; font-size: .9em; }}
</style>
</head>
<body>
<h1>{esc(title)}</h1>
<table>
{rows}
</table>
{f"<h2>Strategy errors</h2><ul>{errors}</ul>" if errors else ""}
<h2>Price, fills and average cost</h2>
<img alt="price with fills" src="{_data_uri(charts.price_png)}">
<h2>Position value</h2>
<img alt="position value over time" src="{_data_uri(charts.value_png)}">
<h2>Summary (JSON)</h2>
<p>Every fill and order is in <code>report.json</code>.</p>
<pre>{esc(json.dumps(summary, indent=2, ensure_ascii=False))}</pre>
{credit}
</body>
</html>
"""


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _new_figure() -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 5), dpi=100, layout="constrained")
    return figure, figure.add_subplot()


def _png(figure: Figure, credit: str | None) -> bytes:
    if credit:
        # A figure-level x label takes its own room in the constrained layout.
        figure.supxlabel(credit, x=0.005, ha="left", fontsize=8, color="#555555")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")  # a bare Figure renders through Agg for PNG
    return buffer.getvalue()


def _days(moment: datetime) -> float:
    """Matplotlib's date number: days since 1970-01-01 UTC (for the x axis only)."""
    return (moment - EPOCH).total_seconds() / 86400


def _xy(points: list[tuple[datetime, Decimal]]) -> tuple[list[float], list[float]]:
    return [_days(t) for t, _ in points], [float(v) for _, v in points]


def _finish(axes: Axes, title: str, ylabel: str) -> None:
    axes.set_title(title)
    axes.set_ylabel(ylabel)
    axes.xaxis_date(UTC)
    axes.grid(True, alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="best", fontsize=8)


def _symbol(result: BacktestResult, key: str | None) -> str:
    info = result.tokens.get(key) if key is not None else None
    return info.symbol if info is not None else (key or "?")


def _price_figure(result: BacktestResult, metrics: Metrics) -> Figure:
    figure, axes = _new_figure()
    token = metrics.asset or next(iter(result.prices), None)
    symbol = _symbol(result, token)
    prices = result.prices.get(token) if token is not None else None
    if prices is not None:
        axes.plot(*_xy(prices.sample(CHART_POINTS)), lw=1, color="#555", label="price", zorder=3)
        axes.axhline(float(prices.mean), ls=":", color="#888", label=f"mean {prices.mean:.6g}")
    marks = _fill_marks(result, metrics)
    count = sum(len(marks[name]) for name in ("buy", "sell", "skipped"))
    # Many fills (an hourly DCA over a year): smaller, fainter marks under the price line.
    size, alpha = (14.0, 1.0) if count <= 200 else (max(3.0, 2800 / count), 0.4)
    styles = {"buy": ("^", "#1a7f37"), "sell": ("v", "#cf222e"), "skipped": ("x", "#999")}
    for name, (marker, colour) in styles.items():
        if marks[name]:
            x, y = _xy(marks[name])
            axes.scatter(x, y, marker=marker, s=size, alpha=alpha, color=colour, label=name)
    if marks["cost"]:
        axes.plot(
            *_xy(marks["cost"]),
            drawstyle="steps-post",
            lw=1.5,
            color="#0969da",
            label="average cost",
            zorder=4,
        )
    if prices is None and not marks["buy"]:
        axes.text(0.5, 0.5, "no prices and no trades", ha="center", transform=axes.transAxes)
    _finish(axes, f"{symbol} price: {result.strategy} ({result.plugin})", f"USD per {symbol}")
    return figure


def _fill_marks(
    result: BacktestResult, metrics: Metrics
) -> dict[str, list[tuple[datetime, Decimal]]]:
    """Where to mark the fills, and the average cost line.

    Buys and sells sit at their execution price (fees included), skipped slices at the
    oracle price; the average cost steps after each buy.
    """
    marks: dict[str, list[tuple[datetime, Decimal]]] = {
        "buy": [],
        "sell": [],
        "skipped": [],
        "cost": [],
    }
    spent = received = Decimal(0)
    pair, back = (metrics.quote, metrics.asset), (metrics.asset, metrics.quote)
    for f in sorted(result.fills, key=lambda f: f.time):
        direction = (f.sell_token, f.buy_token)
        if f.skipped:
            if direction == pair:
                marks["skipped"].append((f.time, f.buy_usd))
        elif direction == pair and f.bought:
            marks["buy"].append((f.time, f.sold * f.sell_usd / f.bought))
            spent += f.sold * f.sell_usd
            received += f.bought
            marks["cost"].append((f.time, spent / received))
        elif direction == back and f.sold:
            marks["sell"].append((f.time, f.bought * f.buy_usd / f.sold))
    if marks["cost"]:
        marks["cost"].append((result.end, marks["cost"][-1][1]))
    return marks


def _value_figure(result: BacktestResult, metrics: Metrics) -> Figure:
    figure, axes = _new_figure()
    path = metrics.path
    if path:
        x, value = _xy([(p.time, p.value_usd) for p in path])
        _, invested = _xy([(p.time, p.invested_usd) for p in path])
        axes.plot(x, value, lw=1.2, color="#0969da", label="position value")
        axes.plot(x, invested, drawstyle="steps-post", lw=1.2, color="#555", label="invested")
    else:
        axes.text(
            0.5,
            0.5,
            "no position: the strategy never traded",
            ha="center",
            transform=axes.transAxes,
        )
    asset = _symbol(result, metrics.asset)
    _finish(axes, f"Position value ({asset} held at the oracle price)", "USD")
    return figure
