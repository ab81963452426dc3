"""`bot report`'s application part: the journal's fills and prices → one summary per strategy.

Reads the journal (the caller opens it read-only), turns each order's fills into trades
(`bot.accounting.from_journal`) and the recorded prices of their tokens into a price book,
and accounts for each strategy on its own lots (`bot.accounting.by_strategy`). Holdings are
valued at the window's end, or, without one, at the latest moment the journal recorded (a
price or a trade): "now" is the last recorded price, never the wall clock. Figures stay
exact; `summary_data` gives them as JSON-ready data with every decimal as an exact string.
Definitions: docs/accounting.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from bot.accounting import (
    BucketPeriod,
    CostMethod,
    Figures,
    Pair,
    Summary,
    Trade,
    by_strategy,
    main_pair,
    zone_of,
)
from bot.accounting.exact import total
from bot.accounting.from_journal import price_book, trades_of_order
from bot.app.errors import SetupError
from bot.money import format_decimal

if TYPE_CHECKING:
    from bot.journal import Journal

__all__ = [
    "Report",
    "ReportRequest",
    "build_report",
    "figures_data",
    "holdings_value",
    "summary_data",
]


@dataclass(frozen=True)
class ReportRequest:
    """What to report: one strategy or all, a window [start, end], buckets, how to count."""

    strategy: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    period: BucketPeriod | None = None
    zone: str = "UTC"
    method: CostMethod = CostMethod.FIFO


@dataclass(frozen=True)
class Report:
    """One summary per strategy with trades in the window (by name), and when it was valued."""

    request: ReportRequest
    valued_at: datetime | None
    summaries: dict[str, Summary]

    @property
    def empty(self) -> bool:
        """No trade in the window."""
        return not self.summaries


def build_report(
    journal: Journal,
    request: ReportRequest,
    configured: Iterable[str],
    quote_of: Callable[[str, str], str] | None = None,
) -> Report:
    """The report of `request` over the journal's fills and recorded prices.

    `configured`: the strategy names of the configuration; with the journal's own, the
    names `request.strategy` may take. `quote_of(a, b)`: which of two tokens prices are
    counted in (the `[display].price_quote` convention); each strategy's position is on
    the pair it trades most, shown that way (None: base = the token it bought).

    Raises:
        SetupError: an unknown strategy (named, with the known ones), a window whose start
            is after its end, or an unknown time zone.
    """
    if request.start and request.end and request.start > request.end:
        raise SetupError(
            f"--from {request.start.isoformat()} is after --to {request.end.isoformat()}"
        )
    try:
        zone = zone_of(request.zone)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    orders = journal.orders()
    known = sorted({*configured, *(o.strategy for o in orders if o.strategy)})
    if request.strategy is not None and request.strategy not in known:
        listed = ", ".join(known) if known else "none"
        raise SetupError(f"unknown strategy {request.strategy!r} (known: {listed})")
    trades: list[Trade] = []
    for order in orders:
        if request.strategy is None or order.strategy == request.strategy:
            trades += trades_of_order(order, journal.fills(order.kind, order.order_id))
    tokens = sorted({t for trade in trades for t in (trade.sold_token, trade.bought_token)})
    ticks = [tick for token in tokens for tick in journal.price_ticks(token)]
    book = price_book(ticks)
    moments = [tick.timestamp for tick in ticks] + [trade.time for trade in trades]
    valued_at = request.end if request.end is not None else max(moments, default=None)
    if valued_at is None:
        return Report(request, None, {})
    summaries = by_strategy(
        trades,
        book,
        valued_at=valued_at,
        method=request.method,
        start=request.start,
        end=request.end,
        period=request.period,
        zone=zone,
        pair_of=lambda group: _pair(group, quote_of),
    )
    counted = {name: s for name, s in summaries.items() if s.totals.trades > 0}
    return Report(request, valued_at, counted)


def _pair(trades: list[Trade], quote_of: Callable[[str, str], str] | None) -> Pair | None:
    """The pair `trades` trade most, its quote chosen by `quote_of` when given."""
    pair = main_pair(trades)
    if pair is None or quote_of is None:
        return pair
    quote = quote_of(pair.base, pair.quote)
    return pair if quote == pair.quote else Pair(base=pair.quote, quote=pair.base)


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format_decimal(value)


def _amounts(sums: dict[str, Decimal]) -> dict[str, str]:
    return {token: format_decimal(amount) for token, amount in sums.items()}


def figures_data(figures: Figures) -> dict[str, Any]:
    """A `Figures` as JSON-ready data (decimals as exact strings)."""
    return {
        "trades": figures.trades,
        "invested": _amounts(figures.invested),
        "received": _amounts(figures.received),
        "traded_usd": format_decimal(figures.traded_usd),
        "fees": {str(kind): _amounts(by) for kind, by in figures.fees.items()},
        "fees_usd": format_decimal(figures.fees_usd),
        "fees_unvalued": figures.fees_unvalued,
        "gas_octas": figures.gas_octas,
        "gas_usd": format_decimal(figures.gas_usd),
        "gas_unvalued": figures.gas_unvalued,
        "realised_usd": format_decimal(figures.realised_usd),
    }


def summary_data(summary: Summary) -> dict[str, Any]:
    """A `Summary` as JSON-ready data: every figure exact, decimals as strings."""
    position = summary.position
    return {
        "strategy": summary.name,
        "cost_basis": str(summary.method),
        "start": None if summary.start is None else summary.start.isoformat(),
        "end": None if summary.end is None else summary.end.isoformat(),
        "valued_at": summary.valued_at.isoformat(),
        "totals": figures_data(summary.totals),
        "position": None
        if position is None
        else {
            "base": position.pair.base,
            "quote": position.pair.quote,
            "bought": format_decimal(position.bought),
            "paid": format_decimal(position.paid),
            "sold": format_decimal(position.sold),
            "proceeds": format_decimal(position.proceeds),
            "average_entry": _text(position.average_entry),
            "market_mean": _text(position.market_mean),
            "entry_vs_market_percent": _text(position.entry_vs_market_percent),
        },
        "holdings": [
            {
                "token": h.token,
                "quantity": format_decimal(h.quantity),
                "cost_usd": format_decimal(h.cost_usd),
                "price_usd": _text(h.price_usd),
                "value_usd": _text(h.value_usd),
                "unrealised_usd": _text(h.unrealised_usd),
            }
            for h in summary.holdings
        ],
        "value_usd": _text(holdings_value(summary)),
        "realised_usd": format_decimal(summary.totals.realised_usd),
        "unrealised_usd": _text(summary.unrealised_usd),
        "pnl_usd": _text(summary.pnl_usd),
        "unvalued": list(summary.unvalued),
        "uncovered": _amounts(summary.uncovered),
        "buckets": [
            {"bucket": b.label, "first": b.first.isoformat(), **figures_data(b.figures)}
            for b in summary.buckets
        ],
    }


def holdings_value(summary: Summary) -> Decimal | None:
    """What the holdings are worth at `valued_at` (None when one has no price then)."""
    values = [h.value_usd for h in summary.holdings]
    if any(v is None for v in values):
        return None
    return total(v for v in values if v is not None)
