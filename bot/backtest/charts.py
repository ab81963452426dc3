"""Backtest pictures: the pair's price with trades and order levels, the value with its benchmark.

PNGs are drawn with matplotlib's Agg canvas on a `Figure` of our own (no pyplot, so no
global state and no display), imported only when a report is asked for: `bot backtest`
without `--report` never loads matplotlib.

- **Price** (`price_figure`): the pair's price in the user's `[display].price_quote`
  convention (`USDC per APT`, whichever way the strategy trades: `bot.backtest.quoting`;
  the oracle's USD prices of the two, divided), the period's mean, the running average
  cost;
  each limit order of the pair as a horizontal segment at its limit price from its
  placement to its fill, cancellation or expiry (coloured by how it ended; a
  cancellation is marked ×); buys ▲, sells ▼ and skipped slices × at their execution
  price, drawn last so that they sit above every line.
- **Value** (`value_figure`): the position's value, the money invested so far, and the
  lump sum benchmark (the same quote amount swapped at the window's first price and
  held); below it, the drawdown — how far PnL stands below its earlier peak — with the
  maximum marked.

Prices and amounts become floats here for drawing only; the figures in the tables, the
JSON and the metrics stay exact. When the result carries the provider's credit line (its
prices were recorded), it is written in each picture.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from bot.backtest.metrics import Metrics, drawdown_series, held_value_series
from bot.backtest.quoting import PairView, position_view
from bot.backtest.report import format_price, format_usd, symbol_of
from bot.backtest.result import BacktestResult, PricePoints
from bot.clock import EPOCH
from bot.price_view import PriceConvention

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "CHART_POINTS",
    "LINE_ZORDER",
    "MARKER_ZORDER",
    "Charts",
    "OrderLevel",
    "date_number",
    "draw_charts",
    "finish_axes",
    "order_levels",
    "png_bytes",
    "price_figure",
    "price_unit",
    "value_figure",
]

CHART_POINTS: Final = 2000
"""Price points drawn per line (the series is sampled evenly; fills are all drawn)."""
LEVEL_ZORDER: Final = 1.5
LINE_ZORDER: Final = 2.0
"""The price line's layer; the trade markers' layer is above it, the order levels below."""
COST_ZORDER: Final = 3.0
MARKER_ZORDER: Final = 6.0
SMALL_COUNT: Final = 200
"""Up to this many trades, markers are drawn large with an edge; more, small and lighter."""
GREEN, RED, BLUE, GREY = "#1a7f37", "#cf222e", "#0969da", "#6e7781"
ORANGE, LUMP = "#d4660b", "#bc4c00"
LEVEL_STYLES: Final = {  # how an order ended → (legend label, colour, line style)
    "filled": ("limit order level (filled)", GREEN, "solid"),
    "cancelled": ("limit order level (cancelled ×)", ORANGE, "dashed"),
    "expired": ("limit order level (expired)", GREY, "dotted"),
    "open": ("limit order level (open at end)", BLUE, "dashdot"),
}


@dataclass(frozen=True)
class Charts:
    """The two pictures as PNG bytes."""

    price_png: bytes
    value_png: bytes


@dataclass(frozen=True)
class OrderLevel:
    """A limit order on the price chart: its limit price from placement to its end."""

    order_id: str
    start: datetime
    end: datetime
    price: Decimal  # in the chart's unit (`price_unit`)
    outcome: str  # filled | cancelled | expired | open


def draw_charts(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> Charts:
    """Draw the price chart and the value chart as PNGs (prices shown per `convention`)."""
    return Charts(
        price_png=png_bytes(price_figure(result, metrics, convention), result.credit),
        value_png=png_bytes(value_figure(result, metrics), result.credit),
    )


def price_unit(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> tuple[str | None, str | None, str]:
    """(base key, quote key, unit text) of the price chart: `USDC per APT`.

    The quote is the position's pair's token `convention` counts prices in (the asset
    itself when the convention says so). Without a trade the first priced token is drawn
    in USD (quote None).
    """
    view = position_view(result, metrics, convention)
    if view is not None:
        return view.base, view.quote, view.unit
    token = next(iter(result.prices), None)
    return token, None, f"USD per {symbol_of(result, token)}"


def order_levels(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> list[OrderLevel]:
    """The limit orders of the main pair (either direction) as levels in the chart's unit.

    A limit price is the order's rate (bought per sold) or its inverse, whichever is in
    the unit (in `USDC per APT`: a buy's 1 / rate, a sell's rate). An order still open at
    the window's end runs to the end.
    """
    view = position_view(result, metrics, convention)
    if view is None:
        return []
    levels = []
    for order in result.orders:
        if order.kind != "limit" or {order.sell_token, order.buy_token} != {view.quote, view.base}:
            continue
        price = view.rate(order.sell_token, order.rate)
        if price is None:
            continue
        if order.status == "filled":
            outcome = "filled"
        elif order.status == "cancelled":
            outcome = "cancelled"
        elif order.status in ("expired", "refunded"):
            outcome = "expired"
        else:
            outcome = "open"
        end = order.ended_at if order.ended_at is not None else result.end
        levels.append(OrderLevel(order.order_id, order.created_at, end, price, outcome))
    return levels


def price_figure(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> Figure:
    """The price chart (see the module docstring); a `Figure` to save or inspect."""
    figure, axes = _new_figure(5.2)
    view = position_view(result, metrics, convention)
    base, quote, unit = price_unit(result, metrics, convention)
    prices = result.prices.get(base) if base is not None else None
    quote_prices = result.prices.get(quote) if quote is not None else None
    if prices is not None:
        line = [(t, _in_quote(p, t, quote_prices)) for t, p in prices.sample(CHART_POINTS)]
        axes.plot(*_xy(line), lw=1, color="#444c56", label="price", zorder=LINE_ZORDER)
        mean = prices.mean / quote_prices.mean if quote_prices is not None else prices.mean
        axes.axhline(
            float(mean), ls=":", lw=1, color=GREY, label=f"mean {format_price(mean)}", zorder=1
        )
    _draw_levels(axes, order_levels(result, metrics, convention))
    marks = _fill_marks(result, metrics, view)
    if marks["cost"]:
        axes.plot(
            *_xy(marks["cost"]),
            drawstyle="steps-post",
            lw=1.5,
            color=BLUE,
            label="average cost",
            zorder=COST_ZORDER,
        )
    count = sum(len(marks[name]) for name in ("buy", "sell", "skipped"))
    small = count > SMALL_COUNT  # an hourly DCA over a year: small, lighter marks
    size = max(3.0, 6000 / count) if small else 60.0
    styles = {"buy": ("^", GREEN), "sell": ("v", RED), "skipped": ("x", GREY)}
    for name, (marker, colour) in styles.items():
        if not marks[name]:
            continue
        x, y = _xy(marks[name])
        outlined = not small and marker != "x"  # a white rim parts a mark from the line
        axes.scatter(
            x,
            y,
            marker=marker,
            s=size,
            alpha=0.45 if small else 1.0,
            color=colour,
            edgecolors="white" if outlined else None,
            linewidths=0.7 if outlined else None,
            label=f"{name} ({len(marks[name])})",
            zorder=MARKER_ZORDER,
        )
    if prices is None and not marks["buy"]:
        axes.text(0.5, 0.5, "no prices and no trades", ha="center", transform=axes.transAxes)
    title = f"{symbol_of(result, base)} price in USD"
    if view is not None:
        title = f"{view.base_label} price in {view.quote_label}"
    finish_axes(axes, title, unit)
    return figure


def _in_quote(usd: Decimal, moment: datetime, quote: PricePoints | None) -> Decimal:
    """A USD price in quote units at `moment` (the quote's own USD price then)."""
    if quote is None:
        return usd
    quote_usd = quote.at(moment) or quote.first
    return usd / quote_usd


def _draw_levels(axes: Axes, levels: Sequence[OrderLevel]) -> None:
    """The order levels by outcome (one legend entry each), cancellations marked ×."""
    from matplotlib.collections import LineCollection

    for outcome, (label, colour, style) in LEVEL_STYLES.items():
        chosen = [level for level in levels if level.outcome == outcome]
        if not chosen:
            continue
        segments = [
            [(date_number(lv.start), float(lv.price)), (date_number(lv.end), float(lv.price))]
            for lv in chosen
        ]
        axes.add_collection(
            LineCollection(
                segments,
                colors=colour,
                linestyles=style,
                linewidths=1.3,
                alpha=0.75,
                label=f"{label}: {len(chosen)}",
                zorder=LEVEL_ZORDER,
            )
        )
        if outcome == "cancelled":
            axes.scatter(
                [date_number(lv.end) for lv in chosen],
                [float(lv.price) for lv in chosen],
                marker="X",
                gid="cancellations",
                s=30.0 if len(chosen) <= 100 else max(6.0, 3000 / len(chosen)),
                color=ORANGE,
                edgecolors="white",
                linewidths=0.5,
                zorder=MARKER_ZORDER - 1,
            )
    if levels:
        axes.autoscale_view()


def _fill_marks(
    result: BacktestResult, metrics: Metrics, view: PairView | None
) -> dict[str, list[tuple[datetime, Decimal]]]:
    """Where to mark the fills, and the average cost line, in `view`'s unit.

    Buys and sells sit at their execution price (fees included; in `USDC per APT`:
    sold / bought for a buy, bought / sold for a sell), skipped slices at the market
    price; the average cost (quote invested / asset received, or its inverse in a unit
    that counts in the asset) steps after each buy.
    """
    marks: dict[str, list[tuple[datetime, Decimal]]] = {
        "buy": [],
        "sell": [],
        "skipped": [],
        "cost": [],
    }
    if view is None or metrics.quote is None:
        return marks
    spent = received = Decimal(0)
    pair, back = (metrics.quote, metrics.asset), (metrics.asset, metrics.quote)
    for f in sorted(result.fills, key=lambda f: f.time):
        direction = (f.sell_token, f.buy_token)
        if f.skipped:
            if direction == pair:
                _mark(marks["skipped"], f.time, view.market(f.sell_token, f.sell_usd, f.buy_usd))
        elif direction == pair and f.bought:
            _mark(marks["buy"], f.time, view.exchange(f.sell_token, f.sold, f.bought))
            spent += f.sold
            received += f.bought
            _mark(marks["cost"], f.time, view.exchange(metrics.quote, spent, received))
        elif direction == back:
            _mark(marks["sell"], f.time, view.exchange(f.sell_token, f.sold, f.bought))
    if marks["cost"]:
        marks["cost"].append((result.end, marks["cost"][-1][1]))
    return marks


def _mark(marks: list[tuple[datetime, Decimal]], moment: datetime, price: Decimal | None) -> None:
    if price is not None:
        marks.append((moment, price))


def value_figure(result: BacktestResult, metrics: Metrics) -> Figure:
    """The value chart over the drawdown panel (see the module docstring)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import StrMethodFormatter

    figure = Figure(figsize=(11, 6.4), dpi=100, layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    path = metrics.path
    if not path:
        top.text(
            0.5,
            0.5,
            "no position: the strategy never traded",
            ha="center",
            transform=top.transAxes,
        )
        finish_axes(top, "Position value (USD)", "USD")
        bottom.set_axis_off()
        return figure
    x, value = _xy([(p.time, p.value_usd) for p in path])
    _, invested = _xy([(p.time, p.invested_usd) for p in path])
    top.plot(
        x,
        value,
        lw=1.3,
        color=BLUE,
        zorder=3,
        label=f"position value ({_percent(metrics.return_percent)})",
    )
    top.plot(x, invested, drawstyle="steps-post", lw=1.2, color=GREY, label="invested so far")
    lump = metrics.lump_sum
    if lump is not None:
        _, bench = _xy(held_value_series(path, lump.received))
        top.plot(
            x,
            bench,
            lw=1.0,
            alpha=0.85,
            color=LUMP,
            zorder=2,
            label=f"lump sum at start, held ({_percent(lump.return_percent)})",
        )
    asset = symbol_of(result, metrics.asset)
    finish_axes(top, f"Position value ({asset} held, at the oracle's USD price)", "USD")
    _draw_drawdown(bottom, drawdown_series(path), metrics)
    for axes in (top, bottom):
        axes.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    return figure


def _draw_drawdown(axes: Axes, series: list[tuple[datetime, Decimal]], metrics: Metrics) -> None:
    """Drawdown below zero, shaded; the maximum marked and labelled."""
    x, depth = _xy(series)
    below = [-d for d in depth]
    axes.fill_between(x, below, 0, step="post", color=RED, alpha=0.3, lw=0)
    axes.plot(x, below, drawstyle="steps-post", lw=0.8, color=RED)
    worst = max(range(len(series)), key=lambda i: series[i][1]) if series else None
    if worst is not None and series[worst][1] > 0:
        percent = metrics.max_drawdown_percent
        text = f"max drawdown {format_usd(metrics.max_drawdown_usd)}"
        text += f" ({percent:.2f}%)" if percent is not None else ""
        axes.scatter([x[worst]], [below[worst]], color=RED, s=18, zorder=4, label=text)
    axes.set_ylim(top=0)
    finish_axes(axes, "", "drawdown (USD)")


def _new_figure(height: float) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, height), dpi=100, layout="constrained")
    return figure, figure.add_subplot()


def png_bytes(figure: Figure, credit: str | None) -> bytes:
    """The figure as PNG bytes, with the provider's credit line under it when given."""
    if credit:
        # A figure-level x label takes its own room in the constrained layout.
        figure.supxlabel(credit, x=0.005, ha="left", fontsize=8, color="#555555")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")  # a bare Figure renders through Agg for PNG
    return buffer.getvalue()


def date_number(moment: datetime) -> float:
    """Matplotlib's date number: days since 1970-01-01 UTC (for the x axis only)."""
    return (moment - EPOCH).total_seconds() / 86400


def _xy(points: Sequence[tuple[datetime, Decimal]]) -> tuple[list[float], list[float]]:
    return [date_number(t) for t, _ in points], [float(v) for _, v in points]


def _percent(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:+.2f}%"


def finish_axes(axes: Axes, title: str, ylabel: str) -> None:
    """Title, y label, UTC date ticks, grid, and the legend to the right of the axes."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    if title:
        axes.set_title(title, loc="left", fontsize=11)
    axes.set_ylabel(ylabel)
    axes.xaxis_date(UTC)
    locator = AutoDateLocator(tz=UTC)  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=UTC))  # type: ignore[no-untyped-call]
    axes.grid(True, alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, borderaxespad=0
        )
