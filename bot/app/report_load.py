"""What `bot report` reads of the journal: a strategy's trades, gas, orders and prices.

One query per table (`bot.journal.fills_read`), not one per order: each order's fills
become trades at once (`bot.accounting.from_journal`), the recorded prices of the tokens
traded a price book. `load_records` reads one strategy or all; `load_part` a part of
them, for a report split across processes (`bot.app.report_workers`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from bot.accounting import Trade
from bot.accounting.from_journal import (
    TRADED_FILL_TYPE,
    JournalRecords,
    accounted_name,
    gas_usd,
    open_orders,
    stored_names,
    swaps_and_gas,
    trades_of_order,
)
from bot.accounting.locked import OpenOrder
from bot.accounting.prices import PriceBook, PriceSeries
from bot.accounting.records import APT_COIN_TYPE, GasCost

if TYPE_CHECKING:
    from bot.journal import Journal
    from bot.journal.views import OrderView

__all__ = ["JournalLoad", "load_part", "load_records", "load_trades"]


@dataclass(frozen=True)
class JournalLoad:
    """What the journal holds for the accounting of one strategy (or all, or a part).

    `trades`: order fills and confirmed swaps; `gas`: gas outside them (an order's create
    or cancel, a swap that aborted), valued with `book`; `gas_unknown`: executed
    transactions whose gas is not known; `open_orders`: what open orders still hold;
    `latest`: the last moment recorded of them (a price or a trade; None: nothing);
    `traded`: the tokens they traded (as the orders and swaps name them), each priced in
    `book`, as APT always is.
    """

    trades: list[Trade]
    gas: list[GasCost]
    gas_unknown: list[str]
    open_orders: list[OpenOrder]
    book: PriceBook
    latest: datetime | None
    traded: frozenset[str] = frozenset()


def load_records(
    journal: Journal, strategy: str | None, orders: list[OrderView] | None = None
) -> JournalLoad:
    """Everything `strategy` (None: all) did that the accounting reads, and its prices.

    `orders`: the journal's orders when already read. The fills and prices come in one
    query each (`bot.journal.fills_read`), not one per order: a year of fills is read in
    a fraction of a second. APT is always priced: it pays the gas.
    """
    from bot.journal.fills_read import order_views

    mine = [
        order
        for order in (order_views(journal) if orders is None else orders)
        if strategy is None or order.strategy == strategy
    ]
    rest = swaps_and_gas(journal, strategy=strategy)
    return _load(journal, mine, None if strategy is None else [strategy], rest)


def load_part(
    journal: Journal, names: Collection[str], rest: JournalRecords, traded: Collection[str]
) -> JournalLoad:
    """`load_records` of the strategies `names` (as accounted) out of all of them.

    For a part of a report split by strategy (`bot.app.report_workers`): `rest` is
    `swaps_and_gas` of every strategy, read once for all parts (its unknown gas is left
    to whoever reads all of it); `traded`, every token any strategy traded. A report of
    all of them at once prices each of those: a part prices, besides its own, those of
    them it looks up (what its open orders hold, its fees), so its figures are the same.
    """
    from bot.journal.fills_read import order_views

    mine = [
        order
        for order in order_views(journal, strategies=stored_names(names))
        if accounted_name(order.strategy) in names
    ]
    part = JournalRecords(
        trades=[trade for trade in rest.trades if trade.strategy in names],
        gas=[cost for cost in rest.gas if cost.strategy in names],
        gas_unknown=[],
    )
    return _load(journal, mine, {order.strategy for order in mine}, part, traded)


def _series_of(journal: Journal, tokens: Iterable[str]) -> dict[str, PriceSeries]:
    """The recorded prices of each of `tokens` that has any, by canonical token."""
    from bot.journal.canon import token as canon_token
    from bot.journal.fills_read import price_micros

    series: dict[str, PriceSeries] = {}
    for token in tokens:  # one token's prices at a time
        micros, prices = price_micros(journal, token)
        if micros:
            key = canon_token(token)
            series[key] = PriceSeries.of_micros(key, micros, prices)
    return series


def _load(
    journal: Journal,
    mine: list[OrderView],
    strategies: Collection[str | None] | None,
    rest: JournalRecords,
    also_priced: Collection[str] = (),
) -> JournalLoad:
    """The trades of the orders `mine` and of `rest`, their gas, the prices of what they traded.

    `strategies`: what `mine` are stored with (None: any), for reading their fills only.
    `also_priced`: tokens also priced when looked up (by what open orders hold, or fees).
    """
    from bot.journal.canon import token as canon_token
    from bot.journal.fills_read import fill_batches

    by_row = {order.row_id: order for order in mine}
    made: dict[int, list[Trade]] = {}
    # Executions only (the other records move nothing traded); each batch let go once made.
    for batch in fill_batches(journal, strategies=strategies, of_type=TRADED_FILL_TYPE):
        for row_id, fills in batch.items():
            order = by_row.get(row_id)
            found = [] if order is None else trades_of_order(order, fills)
            if found:  # only an order with trades: its tokens are priced
                made.setdefault(row_id, []).extend(found)
    trades: list[Trade] = []
    traded: set[str] = set()
    for order in mine:  # in the order of the orders, as read one order at a time
        if order.row_id in made:
            trades += made.pop(order.row_id)
            traded.update((order.from_token, order.to_token))
    trades += rest.trades
    traded.update(t for trade in rest.trades for t in (trade.sold_token, trade.bought_token))
    held = open_orders(mine)
    extra: set[str] = set()
    if also_priced:
        looked_up = {order.token for order in held}
        for trade in trades:
            for fee in trade.fees:
                looked_up.add(fee.token)
        # A book is keyed by canonical token; a look-up finds the token its text names.
        extra = {token for token in also_priced if canon_token(token) in looked_up}
    series = _series_of(journal, sorted({*traded, *extra, APT_COIN_TYPE}))
    latest = max((trade.time for trade in trades), default=None)
    for key, prices_of in series.items():
        last = prices_of.last_time()
        if key in traded and last is not None:  # APT's prices alone do not make a "now"
            latest = last if latest is None else max(latest, last)
    book = PriceBook(series)
    return JournalLoad(
        trades=[
            _with_gas_usd(trade, book) if trade.gas_octas and trade.gas_usd is None else trade
            for trade in trades
        ],
        gas=[replace(g, gas_usd=gas_usd(g.gas_octas, g.time, book)) for g in rest.gas],
        gas_unknown=rest.gas_unknown,
        open_orders=held,
        book=book,
        latest=latest,
        traded=frozenset(traded | {APT_COIN_TYPE}),
    )


def load_trades(
    journal: Journal, strategy: str | None, orders: list[OrderView] | None = None
) -> tuple[list[Trade], PriceBook, datetime | None]:
    """`load_records`' trades, price book and latest moment (for who needs no more)."""
    loaded = load_records(journal, strategy, orders)
    return loaded.trades, loaded.book, loaded.latest


def _with_gas_usd(trade: Trade, book: PriceBook) -> Trade:
    """The trade (with gas, no USD value for it) with its gas valued at APT's price then."""
    return replace(trade, gas_usd=gas_usd(trade.gas_octas, trade.time, book))
