"""`bot report --html DIR`: the report as one self-contained page, with charts.

`index.html` holds, per strategy, the figures of the console report (the same rows,
`bot.app.accounting_view`) and three inline SVG charts (`bot.svg_chart`: no script, no
file or network fetch):

- **value over time**: what the holdings from the strategy's trades are worth in USD at
  the prices in force, and their remaining cost (the gap is the unrealised P&L);
- **average entry vs market**: the running average entry on the position's pair (paid /
  bought by the window's buys so far) against the pair's market price then, and the
  window's time-weighted market mean;
- **P&L per bucket** (day, week or month in `[accounting].time_zone`): the change of the
  total P&L (realised + unrealised, marked at the prices in force) from the bucket's
  start to its end; the bars add up to the change over the window.

The position is evaluated at `GRID_POINTS` evenly spaced moments of the window, at each
bucket's end and, up to `TRADE_POINTS` trades, at every trade (`bot.accounting.series`).
Every text from the journal or the configuration (strategy names, token labels) is
HTML-escaped. Display rounding as the console's; the figures are computed exactly.
"""

from __future__ import annotations

import html
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Final

from bot.accounting import BucketPeriod, PriceBook, Summary, Trade, bucket_label, bucket_of
from bot.accounting.series import PositionSeries, position_series
from bot.app.accounting_view import (
    BUCKET_HEADER,
    ROUNDING_NOTE,
    bucket_rows,
    summary_rows,
    summary_title,
)
from bot.app.report import Report
from bot.backtest.page import page, table
from bot.clock import ensure_utc
from bot.price_view import PriceConvention, usd_text
from bot.svg_chart import Line, bar_chart, line_chart

__all__ = [
    "GRID_POINTS",
    "TRADE_POINTS",
    "bucket_ends",
    "default_period",
    "report_page",
    "strategy_section",
]

GRID_POINTS: Final = 400
"""Evenly spaced moments of the window the position is evaluated at (besides trades)."""
TRADE_POINTS: Final = 2000
"""Up to this many trades in the window, the position is also evaluated at each trade."""
DAYS_BY_DAY: Final = 92
"""A window up to this many days is bucketed by day when `--by` is not given."""
DAYS_BY_WEEK: Final = 730
"""Up to this many, by week; longer, by month."""
VALUE, COST, ENTRY, MARKET, MEAN = "#0969da", "#6e7781", "#d4660b", "#1f2328", "#8250df"
_CENT = Decimal("0.01")


def default_period(first: datetime, last: datetime) -> BucketPeriod:
    """Buckets for a window from `first` to `last`: days up to 3 months, weeks up to 2 years."""
    span = last - first
    if span <= timedelta(days=DAYS_BY_DAY):
        return BucketPeriod.DAY
    if span <= timedelta(days=DAYS_BY_WEEK):
        return BucketPeriod.WEEK
    return BucketPeriod.MONTH


def _next_first(first: date, period: BucketPeriod) -> date:
    if period is BucketPeriod.DAY:
        return first + timedelta(days=1)
    if period is BucketPeriod.WEEK:
        return first + timedelta(days=7)
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def bucket_ends(
    opens: datetime, closes: datetime, period: BucketPeriod, zone: tzinfo
) -> list[tuple[str, datetime]]:
    """Each bucket from `opens` to `closes` as (label, its last moment, at most `closes`).

    A bucket's last moment is one microsecond before the next one's local midnight.
    """
    ends: list[tuple[str, datetime]] = []
    first = bucket_of(opens, period, zone)
    last = bucket_of(closes, period, zone)
    while first <= last:
        following = _next_first(first, period)
        midnight = datetime.combine(following, time(0), tzinfo=zone).astimezone(UTC)
        ends.append(
            (bucket_label(first, period), min(midnight - timedelta(microseconds=1), closes))
        )
        first = following
    return ends


def _grid(opens: datetime, closes: datetime) -> list[datetime]:
    step = (closes - opens) / GRID_POINTS
    return [opens + step * i for i in range(GRID_POINTS + 1)] if step else [opens]


def _cents(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(_CENT, rounding=ROUND_HALF_EVEN)


def strategy_section(
    summary: Summary,
    trades: list[Trade],
    book: PriceBook,
    prices: PriceConvention,
    period: BucketPeriod,
    zone: tzinfo,
) -> list[str]:
    """One strategy's part of the page: its figures, its charts, its bucket table."""
    esc = html.escape
    counted = [
        t
        for t in trades
        if (summary.start is None or t.time >= summary.start)
        and (summary.end is None or t.time <= summary.end)
    ]
    opens = summary.start or min((t.time for t in counted), default=summary.valued_at)
    closes = summary.valued_at
    if closes < opens:
        opens = closes
    ends = bucket_ends(opens, closes, period, zone)
    pair = summary.position.pair if summary.position is not None else None
    series = position_series(
        trades,
        book,
        moments=[*_grid(opens, closes), *(end for _, end in ends), closes],
        method=summary.method,
        start=summary.start,
        end=closes,
        pair=pair,
        at_trades=len(counted) <= TRADE_POINTS,
    )
    body = [
        f'<h2 id="{esc(_anchor(summary.name))}">{esc(summary_title(summary))}</h2>',
        table(None, summary_rows(summary, prices), css="summary"),
        _value_chart(series),
    ]
    if pair is not None and summary.position is not None:
        unit = f"{prices.label(pair.quote)} per {prices.label(pair.base)}"
        body.append(_entry_chart(series, unit, summary.position.market_mean, opens, closes))
    bars = _bucket_pnl(series, ends)
    body.append(bar_chart(f"P&L per {period} (change of total P&L, USD)", "USD", bars))
    body.append(
        table(
            ("bucket", f"P&L change ({period})"),
            [(label, usd_text(change)) for label, change in bars],
            numeric=frozenset({1}),
        )
    )
    if summary.buckets:
        body.append(f"<h3>Trades per {esc(str(period))}</h3>")
        body.append(table(BUCKET_HEADER, bucket_rows(summary, prices), numeric=frozenset({1})))
    return body


def _anchor(name: str) -> str:
    return "strategy-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in name)


def _value_chart(series: PositionSeries) -> str:
    points = series.points
    return line_chart(
        "Value over time (USD)",
        "USD",
        [
            Line("position value", VALUE, [(p.time, p.value_usd) for p in points]),
            Line("cost of holdings", COST, [(p.time, p.cost_usd) for p in points], dashed=True),
        ],
    )


def _entry_chart(
    series: PositionSeries,
    unit: str,
    mean: Decimal | None,
    opens: datetime,
    closes: datetime,
) -> str:
    points = series.points
    lines = [
        Line("average entry", ENTRY, [(p.time, p.average_entry) for p in points]),
        Line("market price", MARKET, [(p.time, p.market) for p in points]),
    ]
    if mean is not None:
        lines.append(
            Line("market mean (time-weighted)", MEAN, [(opens, mean), (closes, mean)], True)
        )
    return line_chart(f"Average entry vs market ({unit})", unit, lines)


def _bucket_pnl(
    series: PositionSeries, ends: list[tuple[str, datetime]]
) -> list[tuple[str, Decimal | None]]:
    """Each bucket's change of total P&L, rounded to cents for display (None: unpriced)."""
    at = {p.time: p for p in series.points}
    previous: Decimal | None = series.opening.pnl_usd if series.opening is not None else Decimal(0)
    bars: list[tuple[str, Decimal | None]] = []
    for label, end in ends:
        point = at.get(ensure_utc(end))
        now = point.pnl_usd if point is not None else previous
        change = None if now is None or previous is None else now - previous
        bars.append((label, _cents(change)))
        previous = now
    return bars


def report_page(
    report: Report,
    trades: list[Trade],
    book: PriceBook,
    prices: PriceConvention,
    period: BucketPeriod,
    zone: tzinfo,
) -> str:
    """The whole `index.html` of `report` (its summaries) over `trades` and `book`."""
    esc = html.escape
    request = report.request
    window = " to ".join(
        [
            request.start.isoformat() if request.start else "the first trade",
            request.end.isoformat() if request.end else "the last record",
        ]
    )
    body = [
        "<h1>Accounting report</h1>",
        f'<p class="sub">From {esc(window)}; cost basis {esc(str(request.method).upper())}; '
        f"buckets by {esc(str(period))} in {esc(request.zone)}.</p>",
    ]
    if report.empty:
        body.append("<p>No trades in the window.</p>")
    else:
        names = list(report.summaries)
        body.append(
            "<ul>"
            + "".join(f'<li><a href="#{esc(_anchor(n))}">{esc(n)}</a></li>' for n in names)
            + "</ul>"
        )
    for name, summary in report.summaries.items():
        own = [t for t in trades if t.strategy == name]
        body += strategy_section(summary, own, book, prices, period, zone)
    body.append(f'<footer class="credit">{esc(ROUNDING_NOTE)}</footer>')
    return page("Accounting report", body)
