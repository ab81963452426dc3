"""The paper world's DCA engine: recurring slices sold through the one swap code path.

Semantic choices (the shared ones are in `bot.paper.core.orders`):

* Amounts: `amount_type="total"` makes `amount` the whole order; `"perorder"` makes the
  total `amount × orders`. `per_order = total // orders`; the remainder
  `total − per_order × orders` is added to the LAST slice, so the slices sum to the total
  exactly. `total < orders` (a zero slice) is refused.
* Schedule: slot k (0-based) is due at `add_period(first_at, k × interval)` where
  `first_at = start + delay` (or the start itself without a delay: it runs at the next
  `process` of due events, never inside `create`). Times are computed from `first_at`,
  not chained, so there is no drift and a monthly DCA started on Jan 31 runs on the
  last day of shorter months and back on the 31st when the month has one. A slice runs
  at its scheduled time (`event.at`) at the pool state of that time.
* A slice: `consumed = per_order` (+ remainder on the last slot); the keeper fee is
  `consumed × keeper_bps // 10000`; the rest is quoted with the order's slippage. If a
  min/max rate is set and the quoted execution rate (human buy per sell, per unit
  swapped) is outside `[min, max]`, the slot is *attempted*: an `attempted` tx detail
  carrying the quoted rate, nothing moves, the slice's funds stay in escrow. Otherwise
  `execute_swap(exact_in, amount_out=quote.min_out)` from escrow to the recipient, then
  the keeper fee is moved escrow → keeper account, and a `filled` tx detail is recorded.
  A quote or swap that fails (too small, `SlippageExceeded`) records `failed`; nothing
  moves. Every outcome uses up the slot (`orders_done`). Because the quote and the
  execution see the same pool state, `failed` in practice means "cannot be served" —
  unless an adverse move (`adverse_pct`, a backtest's slippage) prices the execution
  below the quote's minimum (the order's slippage): then the slice fails as on chain.
* End: when all slots are used, what is left in escrow (the skipped/failed slices) is
  refunded to the owner with a `cancelled` tx detail; status `filled` when nothing was
  left, else `refunded`.
* Cancel: only `active` orders; the balance is refunded (a `cancelled` tx detail, also
  for a zero balance), status `cancelled`, the scheduled slice is dropped.
* `orders_done` counts used slots (`numberOfOrdersCompleted`), `orders_executed` the
  fills; `estimated_completion` is the last slot's time while active, else None.
* Rate bounds: `max_rate=Infinity` and `min_rate=0` mean "no bound"; a negative or NaN
  bound, a zero maximum, an infinite minimum or `min > max` is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import ClassVar, Literal

from bot.aptos.tokens import Token
from bot.clock import ensure_utc
from bot.paper.core.dca_run import run_slices
from bot.paper.core.events import ScheduledEvent
from bot.paper.core.orders import (
    OrderEngineBase,
    OrderState,
    add_period,
    check_period,
    human_rate,
)
from bot.paper.core.swaps import SwapError, execute_swap, quote_swap

__all__ = ["DCA_SLICE", "DcaEngine", "DcaOrder"]

DCA_SLICE = "dca_slice"


@dataclass(kw_only=True)
class DcaOrder(OrderState):
    """A DCA order's state; amounts in base units, rates in human buy-per-sell units."""

    total: int
    per_order: int
    orders_total: int
    interval: tuple[int, str]
    delay: tuple[int, str] | None = None
    min_rate: Decimal | None = None
    max_rate: Decimal | None = None
    first_at: datetime | None = None
    next_at: datetime | None = None
    orders_done: int = 0
    orders_executed: int = 0

    @property
    def funded(self) -> int:
        """The total escrowed."""
        return self.total

    @property
    def remainder(self) -> int:
        """Units added to the last slice (`total − per_order × orders_total`)."""
        return self.total - self.per_order * self.orders_total

    @property
    def remaining_orders(self) -> int:
        """Slots not used yet."""
        return self.orders_total - self.orders_done

    def slot_time(self, slot: int) -> datetime | None:
        """When slot `slot` (0-based) is due; None before the order is active."""
        if self.first_at is None:
            return None
        value, period = self.interval
        return add_period(self.first_at, slot * value, period)

    @property
    def estimated_completion(self) -> datetime | None:
        """The last slot's time while the order is active, else None."""
        if self.status != "active":
            return None
        return self.slot_time(self.orders_total - 1)


class DcaEngine(OrderEngineBase[DcaOrder]):
    """Creates, runs and cancels DCA orders; slices are `dca_slice` events on the queue."""

    kind: ClassVar[str] = "dca"

    def _setup(self) -> None:
        self._handles: dict[str, ScheduledEvent] = {}

    def create(
        self,
        *,
        owner: str,
        recipient: str,
        sell: Token,
        buy: Token,
        amount: int,
        amount_type: Literal["total", "perorder"],
        orders: int,
        interval: tuple[int, str],
        delay: tuple[int, str] | None,
        min_rate: Decimal | None,
        max_rate: Decimal | None,
        slippage: Decimal,
        now: datetime,
        escrow_now: bool = True,
    ) -> DcaOrder:
        """Create a DCA order (escrowed and active, or pending a deposit).

        Raises:
            ValueError: invalid amounts, periods, rates or slippage.
            InsufficientFunds: the owner cannot fund the total (nothing is recorded).
        """
        now = ensure_utc(now)
        if isinstance(orders, bool) or not isinstance(orders, int) or orders < 1:
            raise ValueError(f"number of orders must be an int ≥ 1, got {orders!r}")
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            raise ValueError(f"amount must be a positive int of base units, got {amount!r}")
        if amount_type not in ("total", "perorder"):
            raise ValueError(f"amount type must be total or perorder, got {amount_type!r}")
        total = amount if amount_type == "total" else amount * orders
        if total < orders:
            raise ValueError(f"total {total} cannot be split into {orders} non-empty orders")
        min_rate = _bound(min_rate, "minimum rate", upper=False)
        max_rate = _bound(max_rate, "maximum rate", upper=True)
        if min_rate is not None and max_rate is not None and min_rate > max_rate:
            raise ValueError(f"minimum rate {min_rate} is above maximum rate {max_rate}")
        order = DcaOrder(
            order_id=self.ids.new(self.kind),
            owner=owner,
            recipient=recipient,
            sell=sell,
            buy=buy,
            slippage=slippage,
            created_at=now,
            status="pending",
            seq=self._next_seq(),
            total=total,
            per_order=total // orders,
            orders_total=orders,
            interval=check_period(interval, "interval"),
            delay=None if delay is None else check_period(delay, "delay", minimum=0),
            min_rate=min_rate,
            max_rate=max_rate,
        )
        return self._open(order, now, escrow_now)

    def _on_start(self, order: DcaOrder, now: datetime) -> None:
        first = now if order.delay is None else add_period(now, *order.delay)
        order.first_at = first
        self._schedule(order, first)

    def _schedule(self, order: DcaOrder, at: datetime) -> None:
        order.next_at = at
        self._handles[order.order_id] = self.events.push(at, DCA_SLICE, order.order_id)

    def process(
        self, event: ScheduledEvent, now: datetime, *, run_until: datetime | None = None
    ) -> int:
        """Run a due `dca_slice` event (at its scheduled time, `event.at` ≤ `now`).

        `run_until`: the caller knows nothing but queued events can happen up to then (no
        limit order can fill): this slot and the order's next ones due by then, before any
        other queued event, run at once (`dca_run.run_slices`: the same fills as one
        event each).
        Returns the number of slices run (0 for a stale event).
        """
        if event.kind != DCA_SLICE:
            raise ValueError(f"the DCA engine does not handle {event.kind!r} events")
        if event.at > now:
            raise ValueError(f"event due at {event.at.isoformat()} is not due at {now}")
        order = self._orders.get(event.key)
        if order is None or order.status != "active" or self._handles.get(event.key) is not event:
            return 0  # a stale event (the order was cancelled or rescheduled)
        del self._handles[event.key]
        ran = 0
        if run_until is not None and order.slot_time(order.orders_done) == event.at:
            ran = run_slices(self, order, run_until)
        if not ran:
            self._slice(order, event.at)
            order.orders_done += 1
            ran = 1
        if order.orders_done < order.orders_total:
            at = order.slot_time(order.orders_done)
            if at is None:  # a slot before orders_total always has a time
                raise ValueError(f"DCA order {order.order_id} has no slot {order.orders_done}")
            self._schedule(order, at)
            return ran
        order.next_at = None
        ended = order.details[-1].time  # the last slot's (run here or by `run_slices`)
        refunded = self._refund(order, ended, always_record=False)
        self._close(order, "refunded" if refunded else "filled")
        return ran

    def _slice(self, order: DcaOrder, at: datetime) -> None:
        last = order.orders_done == order.orders_total - 1
        consumed = min(order.per_order + (order.remainder if last else 0), order.balance)
        keeper = self._keeper_fee(consumed)
        swap_in = consumed - keeper
        try:
            terms = quote_swap(
                self.pools,
                self.fees,
                order.sell,
                order.buy,
                at=at,
                amount_in=swap_in,
                slippage=order.slippage,
            )
        except SwapError:
            self._record(order, "failed", at, from_amount=consumed)
            return
        rate = human_rate(terms.amount_out, order.buy, swap_in, order.sell)
        if not _within(rate, order.min_rate, order.max_rate):
            self._record(order, "attempted", at, from_amount=consumed, price=rate)
            return
        try:
            done = execute_swap(
                self.ledger,
                self.pools,
                self.fees,
                payer=order.escrow,
                recipient=order.recipient,
                sell=order.sell,
                buy=order.buy,
                at=at,
                exact_in=True,
                amount_in=swap_in,
                amount_out=terms.min_out,
                adverse_pct=self.adverse_pct,
                quoted=terms,  # priced a moment ago at this pool state: not again
            )
        except SwapError:  # SlippageExceeded included
            self._record(order, "failed", at, from_amount=consumed, price=rate)
            return
        self.ledger.transfer(order.sell.address, order.escrow, self.keeper_account, keeper)
        order.spent += consumed
        order.received += done.amount_out
        order.fees_paid += keeper
        order.orders_executed += 1
        if done.amount_out != terms.amount_out:  # an adverse move: priced anew
            rate = human_rate(done.amount_out, order.buy, swap_in, order.sell)
        self._record(
            order,
            "filled",
            at,
            from_amount=consumed,
            to_amount=done.amount_out,
            fee_amount=keeper,
            price=rate,
        )

    def cancel(self, order_id: str, now: datetime, owner: str | None = None) -> DcaOrder:
        """Cancel an active order: refund its balance, drop its next slice.

        Raises:
            UnknownOrder: no such order.
            NotOwner: `owner` given and not the order's owner.
            OrderStateError: the order is not active.
        """
        now = ensure_utc(now)
        order = self._live_order(order_id, owner)
        handle = self._handles.pop(order_id, None)
        if handle is not None:
            self.events.cancel(handle)
        order.next_at = None
        self._refund(order, now, always_record=True)
        self._close(order, "cancelled")
        return order


def _bound(value: Decimal | None, what: str, *, upper: bool) -> Decimal | None:
    """None for no bound: a maximum of Infinity, a minimum of 0; other values must be > 0."""
    if value is None:
        return None
    if value.is_nan() or value < 0 or (value.is_infinite() and not upper):
        raise ValueError(f"{what} must be a positive number, got {value}")
    if value.is_infinite() or (value == 0 and not upper):
        return None
    if value == 0:
        raise ValueError(f"{what} must be positive, got {value}")
    return value


def _within(rate: Decimal, low: Decimal | None, high: Decimal | None) -> bool:
    return (low is None or rate >= low) and (high is None or rate <= high)
