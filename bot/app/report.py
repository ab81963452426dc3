"""`bot report`'s application part: the journal's fills and prices → one summary per strategy.

Reads the journal (the caller opens it read-only; `bot.app.report_load`): each order's
fills as trades, the recorded prices of their tokens as a price book; and accounts for
each strategy on its own lots (`bot.accounting.by_strategy`), a report of every strategy
over many fills in parts at once, in forked processes (`bot.app.report_workers`). Holdings are
valued at the window's end, or, without one, at the latest moment the journal recorded (a
price or a trade): "now" is the last recorded price, never the wall clock. Figures stay
exact; `summary_data` gives them as JSON-ready data with every decimal as an exact string.
Definitions: docs/accounting.md.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

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
from bot.accounting.locked import Locked, OpenOrder, locked_funds
from bot.app.errors import SetupError
from bot.app.report_load import JournalLoad, load_records
from bot.money import format_decimal

if TYPE_CHECKING:
    from bot.journal import Journal

__all__ = [
    "SPLIT_FROM_FILLS",
    "Report",
    "ReportAccounting",
    "ReportRequest",
    "build_report",
    "build_report_off_loop",
    "display_pair",
    "figures_data",
    "holdings_value",
    "summary_data",
]


SPLIT_FROM_FILLS: Final = 25_000
"""The fewest fills a report is split across processes for: with 10,000 fills the split
was slower than one process on the 2-core development machine (0.37 s against 0.35 s),
with 100,000 a quarter to a third faster."""


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
    """One summary per strategy with trades in the window (by name), and when it was valued.

    `locked`: per strategy, what its open orders hold now (only for a report valued now,
    without `--to`); `gas_unknown`: hashes of executed transactions whose gas the journal
    does not know (recorded before it kept the unit price).
    """

    request: ReportRequest
    valued_at: datetime | None
    summaries: dict[str, Summary]
    locked: dict[str, list[Locked]] = field(default_factory=dict)
    gas_unknown: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """No trade in the window."""
        return not self.summaries


def build_report(
    journal: Journal,
    request: ReportRequest,
    configured: Iterable[str],
    quote_of: Callable[[str, str], str] | None = None,
    loaded: JournalLoad | None = None,
    *,
    processes: int = 1,
    split_from: int = SPLIT_FROM_FILLS,
) -> Report:
    """The report of `request` over the journal's fills and recorded prices.

    `configured`: the strategy names of the configuration; with the journal's own, the
    names `request.strategy` may take. `quote_of(a, b)`: which of two tokens prices are
    counted in (the `[display].price_quote` convention); each strategy's position is on
    the pair it trades most, shown that way (None: base = the token it bought).

    Raises:
        SetupError: an unknown strategy (named, with the known ones), a window whose start
            is after its end, or an unknown time zone.

    `loaded`: `load_records(journal, request.strategy)` when the caller already has it.

    `processes` > 1: a report of every strategy over at least `split_from` fills is
    split into parts of whole strategies, accounted at once in forked processes
    (`bot.app.report_workers`), when this process may fork. The figures are the same.
    """
    if request.start and request.end and request.start > request.end:
        raise SetupError(
            f"--from {request.start.isoformat()} is after --to {request.end.isoformat()}"
        )
    try:
        zone = zone_of(request.zone)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    with _collector_paused():
        return _build(journal, request, configured, quote_of, zone, loaded, processes, split_from)


def _build(
    journal: Journal,
    request: ReportRequest,
    configured: Iterable[str],
    quote_of: Callable[[str, str], str] | None,
    zone: tzinfo,
    loaded: JournalLoad | None,
    processes: int,
    split_from: int,
) -> Report:
    """`build_report` once the request is checked."""
    from bot.journal.fills_read import order_views

    accounting = ReportAccounting(request, zone, quote_of)
    if loaded is None and request.strategy is None and processes > 1:
        from bot.app.report_workers import split_report

        split = split_report(journal, accounting, processes, split_from)
        if split is not None:
            return split
    orders = order_views(journal)  # = journal.orders(), without the ORM
    swappers = {f.strategy for f in journal.swap_fills()}
    known = sorted({*configured, *swappers, *(o.strategy for o in orders if o.strategy)})
    if request.strategy is not None and request.strategy not in known:
        listed = ", ".join(known) if known else "none"
        raise SetupError(f"unknown strategy {request.strategy!r} (known: {listed})")
    if loaded is None:
        loaded = load_records(journal, request.strategy, orders)
    valued_at = request.end if request.end is not None else loaded.latest
    if valued_at is None:
        return Report(request, None, {})
    summaries, locked = accounting.of(loaded, valued_at)
    return Report(request, valued_at, summaries, locked, tuple(loaded.gas_unknown))


@dataclass(frozen=True)
class ReportAccounting:
    """How a report accounts for what it loaded: its request, time zone and pair convention.

    One for the whole report, or for each part of a report split by strategy
    (`bot.app.report_workers`).
    """

    request: ReportRequest
    zone: tzinfo
    quote_of: Callable[[str, str], str] | None

    def of(
        self, loaded: JournalLoad, valued_at: datetime
    ) -> tuple[dict[str, Summary], dict[str, list[Locked]]]:
        """`summaries` and `locked` of `loaded` valued at `valued_at`."""
        return self.summaries(loaded, valued_at), self.locked(loaded, valued_at)

    def summaries(self, loaded: JournalLoad, valued_at: datetime) -> dict[str, Summary]:
        """The summaries of the strategies with trades in the window, valued at `valued_at`."""
        request, quote_of = self.request, self.quote_of
        summaries = by_strategy(
            loaded.trades,
            loaded.book,
            valued_at=valued_at,
            method=request.method,
            start=request.start,
            end=request.end,
            period=request.period,
            zone=self.zone,
            pair_of=lambda group: display_pair(group, quote_of),
            gas=loaded.gas,
        )
        return {name: s for name, s in summaries.items() if s.totals.trades > 0}

    def locked(self, loaded: JournalLoad, valued_at: datetime) -> dict[str, list[Locked]]:
        """What each strategy's open orders hold, for a report valued now (no `--to`) only."""
        if self.request.end is not None:  # a fact of now, not of a past --to
            return {}
        by_name: dict[str, list[OpenOrder]] = {}
        for order in loaded.open_orders:
            by_name.setdefault(order.strategy, []).append(order)
        return {name: locked_funds(held, loaded.book, valued_at) for name, held in by_name.items()}


async def build_report_off_loop(
    url: str,
    request: ReportRequest,
    configured: Iterable[str],
    quote_of: Callable[[str, str], str] | None = None,
    *,
    wallet: str | None,
) -> Report:
    """`build_report` in a worker thread, on a read-only journal of its own at `url`.

    For the daemon's reports (Telegram, the periodic summary): one over months of fills
    takes a second or more, and on the event loop it would hold up the ticks, the order
    poll and the console. `wallet` is the daemon's (its journal's scope): on a journal
    that several wallets share, the report counts that wallet's rows only; it is a
    required keyword so no caller reads every wallet's rows by forgetting it.

    Raises:
        JournalError: the journal cannot be opened read-only; and `build_report`'s errors.
    """
    from bot.journal import Journal

    names = list(configured)

    def build() -> Report:
        with Journal.open(url, readonly=True, wallet=wallet) as journal:
            return build_report(journal, request, names, quote_of)

    return await asyncio.to_thread(build)


class _CollectorPause:
    """Pauses the cyclic garbage collector while reports build their records.

    A year of fills is hundreds of thousands of small objects, none in a cycle; as they
    pile up the collector would walk all of them again and again (about half a report's
    time). Reference counting still frees as usual; cycles wait until the end. The pause
    is process-wide, and reports may run at once in worker threads (Telegram): the first
    to start pauses, the last to finish resumes — if the collector was running before.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._resume = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._running == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0 and self._resume:
                    gc.enable()


_collector_paused = _CollectorPause()


def display_pair(trades: list[Trade], quote_of: Callable[[str, str], str] | None) -> Pair | None:
    """The pair `trades` trade most, its quote chosen by `quote_of` when given.

    `quote_of`: the `[display].price_quote` convention (`PriceConvention.quote_of`).
    """
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
