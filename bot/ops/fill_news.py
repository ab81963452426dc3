"""What an order event means in numbers, for the console and the alerts.

A batch of new fills becomes a `FillNews`: what was paid and got, at what price, the
strategy's average entry after it (from `bot.accounting` over that strategy's recorded
fills only), and how far the order has come (DCA slices done of its total; a limit
order's amount spent of its deposit). An order that ends (filled, cancelled, expired,
refunded) becomes an `OrderEnd`: what it spent, got and gave back. Prices follow the
user's `[display].price_quote` (`bot.price_view`); amounts stay exact until shown.

`FillNewsReader` reads the journal once per event: the console and the alert sources ask
for the same event's news and the second answer is the first one, kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Protocol

from bot.accounting import Pair, Position, PriceBook, Trade, account
from bot.accounting.exact import EXACT, ratio, total
from bot.accounting.from_journal import TRADED_FILL_TYPE, trades_of_order
from bot.engine.events import (
    FillsRecorded,
    OrderCancelled,
    OrderEvent,
    OrderExpired,
    OrderFilled,
    OrderRefunded,
)
from bot.journal import FillView, OrderView
from bot.logging import get_logger
from bot.money import format_decimal
from bot.price_view import Price, PriceConvention

__all__ = [
    "FillNews",
    "FillNewsReader",
    "OrderEnd",
    "OrderJournal",
    "order_label",
    "short_id",
]

_ENDS: dict[type[OrderEvent], str] = {
    OrderFilled: "filled",
    OrderCancelled: "cancelled",
    OrderExpired: "expired",
    OrderRefunded: "refunded",
}


class OrderJournal(Protocol):
    """What the news reads (`bot.journal.Journal` is one)."""

    def order(self, kind: str, order_id: str) -> OrderView | None:
        """One stored order, or None."""
        ...

    def fills(self, kind: str, order_id: str) -> list[FillView]:
        """An order's fills in recording order."""
        ...

    def orders(self, *, strategy: str | None = None) -> list[OrderView]:
        """Stored orders, oldest first (here: one strategy's)."""
        ...

    def fills_by_order(self, strategy: str) -> dict[tuple[str, str], list[FillView]]:
        """The fills of all of a strategy's orders: (kind, id) → fills."""
        ...


def short_id(order_id: str) -> str:
    """`0xab12cd34…` for a long id; short ids as they are."""
    return order_id if len(order_id) <= 12 else order_id[:10] + "…"


def order_label(kind: str) -> str:
    """`DCA`, `limit` or the kind as it is."""
    return {"dca": "DCA", "limit": "limit"}.get(kind, kind)


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format_decimal(value)


@dataclass(frozen=True)
class FillNews:
    """One batch of new fills of an order, with the strategy's position after it.

    `sold`/`bought`: the batch's amounts (fees in the sold token included in `sold`);
    `buying`: the order buys the pair's base with its quote (`[display].price_quote`);
    `price`: the batch's own price; `average_entry`/`average_exit`: the strategy's, over
    all its recorded fills on this pair; `done`/`total`: DCA slices, or for a limit
    order the amount spent of its deposit (`progress_unit` then names the token).
    """

    strategy: str | None
    kind: str
    order_id: str
    sold_token: str
    sold: Decimal
    bought_token: str
    bought: Decimal
    fills: int
    buying: bool
    price: Price | None
    average_entry: Price | None
    average_exit: Price | None
    done: Decimal | None
    total: Decimal | None
    progress_unit: str = ""

    @property
    def subject(self) -> str:
        """Who did it: the strategy, or the order for one no strategy owns."""
        return self.strategy or f"{order_label(self.kind)} order {short_id(self.order_id)}"

    def line(self) -> str:
        """`demo-dca bought 4.9821 APT for 25 USDC at 5.018 USDC per APT (avg entry …)`."""
        sold = f"{format_decimal(self.sold)} {self.sold_token}"
        bought = f"{format_decimal(self.bought)} {self.bought_token}"
        what = f"bought {bought} for {sold}" if self.buying else f"sold {sold} for {bought}"
        at = f" at {self.price}" if self.price is not None else ""
        notes = []
        average = self.average_entry if self.buying else self.average_exit
        if average is not None:
            notes.append(f"avg {'entry' if self.buying else 'exit'} {average.number}")
        if self.done is not None and self.total is not None:
            unit = f" {self.progress_unit}" if self.progress_unit else ""
            finished = "done" if not self.progress_unit else "filled"
            notes.append(
                f"{format_decimal(self.done)} of {format_decimal(self.total)}{unit} {finished}"
            )
        extra = f" ({', '.join(notes)})" if notes else ""
        return f"{self.subject} {what}{at}{extra}"

    def fields(self) -> dict[str, object]:
        """The numbers as alert/log fields: exact decimal strings, shown prices."""
        return {
            "strategy": self.strategy,
            "order_kind": self.kind,
            "order_id": self.order_id,
            "fills": self.fills,
            "sold_token": self.sold_token,
            "sold": format_decimal(self.sold),
            "bought_token": self.bought_token,
            "bought": format_decimal(self.bought),
            "price": None if self.price is None else str(self.price),
            "average_entry": None if self.average_entry is None else str(self.average_entry),
            "average_exit": None if self.average_exit is None else str(self.average_exit),
            "done": _text(self.done),
            "total": _text(self.total),
        }


@dataclass(frozen=True)
class OrderEnd:
    """An order that ended: what it spent of its deposit, got, and gave back."""

    strategy: str | None
    kind: str
    order_id: str
    how: str
    """filled, cancelled, expired or refunded."""
    from_token: str
    to_token: str
    deposit: Decimal
    spent: Decimal | None
    received: Decimal | None
    returned: Decimal | None
    price: Price | None
    """The order's average price (spent / received), when both are known."""

    def line(self) -> str:
        """`demo-dca: DCA order 0x306840f8… filled: 150 USDC → 29.9 APT at 5.02 USDC per APT`.

        A deposit not spent whole says how much of it was (`30 of 50 USDC`) and what came back.
        """
        head = f"{order_label(self.kind)} order {short_id(self.order_id)}"
        head = f"{self.strategy}: {head}" if self.strategy else head
        spent = self.spent if self.spent is not None else Decimal(0)
        of = "" if spent == self.deposit else f" of {format_decimal(self.deposit)}"
        parts = [f"{format_decimal(spent)}{of} {self.from_token}"]
        if spent == 0:
            parts = [f"nothing spent of {format_decimal(self.deposit)} {self.from_token}"]
        if self.received is not None and self.received > 0:
            parts[0] += f" → {format_decimal(self.received)} {self.to_token}"
            if self.price is not None:
                parts[0] += f" at {self.price}"
        if self.returned is not None and self.returned > 0:
            parts.append(f"{format_decimal(self.returned)} {self.from_token} returned")
        return f"{head} {self.how}: {'; '.join(parts)}"

    def fields(self) -> dict[str, object]:
        """The numbers as alert/log fields (exact decimal strings)."""
        return {
            "strategy": self.strategy,
            "from_token": self.from_token,
            "to_token": self.to_token,
            "amount_total": format_decimal(self.deposit),
            "amount_spent": _text(self.spent),
            "to_amount_received": _text(self.received),
            "amount_returned": _text(self.returned),
            "average_price": None if self.price is None else str(self.price),
        }


class FillNewsReader:
    """Reads the journal for an order event's numbers (`news`); never raises.

    The last event's answer is kept, so the console and the alerts asking for the same
    event read the journal once.
    """

    def __init__(self, journal: OrderJournal, convention: PriceConvention) -> None:
        self.journal = journal
        self.convention = convention
        self._last: tuple[OrderEvent, FillNews | OrderEnd | None] | None = None
        self._positions: dict[tuple[str, Pair], Position | None] = {}
        self._log = get_logger("fill_news")

    def news(self, event: OrderEvent) -> FillNews | OrderEnd | None:
        """The numbers of `event`, or None.

        A `FillNews` for new fills that traded, an `OrderEnd` for an order that ended;
        None for other events, or when the journal does not know the order.
        """
        if self._last is not None and self._last[0] is event:
            return self._last[1]
        answer: FillNews | OrderEnd | None = None
        try:
            if isinstance(event, FillsRecorded):
                answer = self._fills(event)
            elif type(event) in _ENDS:
                answer = self._end(event)
        except Exception as exc:  # a journal hiccup: the event is still shown, without numbers
            self._positions.clear()  # they may have missed fills: read afresh next time
            self._log.warning(
                "fill_news.failed", order_id=event.order_id, error=f"{type(exc).__name__}: {exc}"
            )
        self._last = (event, answer)
        return answer

    def _pair(self, order: OrderView) -> Pair:
        quote = self.convention.quote_of(order.from_token, order.to_token)
        base = order.to_token if quote == order.from_token else order.from_token
        return Pair(base=base, quote=quote)

    def _fills(self, event: FillsRecorded) -> FillNews | None:
        order = self.journal.order(event.kind, event.order_id)
        if order is None or event.count <= 0:
            return None
        fills = self.journal.fills(event.kind, event.order_id)
        new = [f for f in fills[-event.count :] if _traded(f)]
        if not new:
            return None  # a refund or a bookkeeping record: the status event says it
        sold = total(f.from_amount or Decimal(0) for f in new)
        bought = total(f.to_amount or Decimal(0) for f in new)
        label = self.convention.label
        pair = self._pair(order)
        position = self._position(order, pair, new) if order.strategy else None
        done, whole, unit = _progress(order, fills)
        return FillNews(
            strategy=order.strategy,
            kind=order.kind,
            order_id=order.order_id,
            sold_token=label(order.from_token),
            sold=sold,
            bought_token=label(order.to_token),
            bought=bought,
            fills=len(new),
            buying=pair.quote == order.from_token,
            price=self.convention.of_amounts(sold, order.from_token, bought, order.to_token),
            average_entry=self._average(position, pair, entry=True),
            average_exit=self._average(position, pair, entry=False),
            done=done,
            total=whole,
            progress_unit=label(unit) if unit else "",
        )

    def _position(self, order: OrderView, pair: Pair, new: list[FillView]) -> Position | None:
        """The strategy's position on `pair` over its recorded fills, `new` included.

        Read from the journal once per strategy and pair, then kept up to date with each
        event's new fills: re-reading a year of fills at every slice would hold up the
        event loop for seconds.
        """
        assert order.strategy is not None
        key = (order.strategy, pair)
        if key not in self._positions:  # the journal already holds `new`
            self._positions[key] = self._read_position(order.strategy, pair)
            return self._positions[key]
        known = self._positions[key]
        for fill in new:
            known = _moved(known, pair, order, fill)
        self._positions[key] = known
        return known

    def _read_position(self, strategy: str, pair: Pair) -> Position | None:
        """The strategy's position on `pair` over its own recorded fills (no prices needed)."""
        by_order = self.journal.fills_by_order(strategy)
        trades: list[Trade] = []
        for order in self.journal.orders(strategy=strategy):
            trades += trades_of_order(order, by_order.get((order.kind, order.order_id), []))
        if not trades:
            return None
        latest = max(t.time for t in trades)
        return account(trades, PriceBook(), valued_at=latest, pair=pair, name=strategy).position

    def _average(self, position: Position | None, pair: Pair, *, entry: bool) -> Price | None:
        if position is None:
            return None
        quote, base = (
            (position.paid, position.bought)
            if entry
            else (
                position.proceeds,
                position.sold,
            )
        )
        return self.convention.of_amounts(quote, pair.quote, base, pair.base)

    def _end(self, event: OrderEvent) -> OrderEnd | None:
        order = self.journal.order(event.kind, event.order_id)
        if order is None:
            return None
        spent, received = order.amount_spent, order.to_amount_received
        returned = order.amount_balance
        if returned is None and spent is not None and type(event) is not OrderFilled:
            returned = max(order.amount_total - spent, Decimal(0))
        price = None
        if spent is not None and received is not None:
            price = self.convention.of_amounts(spent, order.from_token, received, order.to_token)
        label = self.convention.label
        return OrderEnd(
            strategy=order.strategy,
            kind=order.kind,
            order_id=order.order_id,
            how=_ENDS[type(event)],
            from_token=label(order.from_token),
            to_token=label(order.to_token),
            deposit=order.amount_total,
            spent=spent,
            received=received,
            returned=returned,
            price=price,
        )


def _moved(position: Position | None, pair: Pair, order: OrderView, fill: FillView) -> Position:
    """`position` after one more traded fill of `order` (as `account` would count it)."""
    zero = Decimal(0)
    if position is None:
        position = Position(pair, zero, zero, zero, zero, None, None, None)
    sold, bought = fill.from_amount or zero, fill.to_amount or zero
    if order.to_token == pair.base and order.from_token == pair.quote:
        grown = replace(
            position,
            bought=EXACT.add(position.bought, bought),
            paid=EXACT.add(position.paid, sold),
        )
    elif order.from_token == pair.base and order.to_token == pair.quote:
        grown = replace(
            position,
            sold=EXACT.add(position.sold, sold),
            proceeds=EXACT.add(position.proceeds, bought),
        )
    else:
        return position
    entry = ratio(grown.paid, grown.bought) if grown.bought > 0 else None
    return replace(grown, average_entry=entry)


def _traded(fill: FillView) -> bool:
    return fill.type == TRADED_FILL_TYPE and bool(fill.from_amount) and bool(fill.to_amount)


def _progress(
    order: OrderView, fills: list[FillView]
) -> tuple[Decimal | None, Decimal | None, str]:
    """(done, of, unit): how far the order has come.

    A DCA's slices done of its total (unit ""), or another order's amount spent of its
    deposit (unit: its sold token).
    """
    if order.kind == "dca":
        slices = order.orders_total
        done = order.orders_completed
        if done is None:
            done = sum(1 for f in fills if _traded(f))
        return (Decimal(done), Decimal(slices), "") if slices else (None, None, "")
    spent = order.amount_spent
    if spent is None:
        spent = total(f.from_amount or Decimal(0) for f in fills if _traded(f))
    return spent, order.amount_total, order.from_token
