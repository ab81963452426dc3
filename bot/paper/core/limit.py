"""The paper world's limit-order engine: fills at or above the order's rate, through swaps.

Semantic choices (the shared ones are in `bot.paper.core.orders`):

* The rate is human units of the bought token per unit swapped (platform fee included,
  keeper fee excluded): every fill's average rate `received / swapped` is ≥ the rate.
  The swap's minimum out is `ceil(swapped × rate)` in base units; `slippage` is kept
  and shown but the rate is the binding bound.
* Fillable: an order is considered only at a price point where the oracle ratio
  `usd(sell)/usd(buy) ≥ rate / ((1 − pool fee)(1 − platform fee))` (the fee-adjusted
  threshold, the same test `next_crossing` asks the oracle about), and then fills as much
  as the pool gives at an average rate ≥ its rate (`Pool.max_in_at_rate`, checked
  against an exact quote). Within a pair (sell → buy) the lowest rate fills first (ties:
  the older order).
* When checked: `fill_due(now)` looks at pairs whose price point (the `step_start` of
  either token) changed since the pair was last checked, and pairs that got a new live
  order (a dirty set). While a new order is unchecked, `next_crossing` answers `now`, so
  a driver that advances through `next_crossing` checks it at its creation time. The
  driver calls `fill_due(t)` after the events due at t (an order expiring at t does not
  fill at t) and at every `next_crossing` time. Trades that move a pool between price
  points do not trigger a check.
* Depth: a fill limited by the pool leaves the order `partially_filled` and stops the
  pair for this price point (the pool sits at the rate until it re-anchors); the order
  fills more at later fillable price points. A fill consuming the whole balance makes it
  `filled`.
* Dust: when the whole remaining balance would give no output at all (the quote is
  "too small") at a fillable price point, it is refunded to the owner (a `cancelled`
  tx detail) and the order ends `filled` (or `refunded` if it never filled). A remainder
  that rounding keeps just under the rate waits for a better price or expiry.
* Expiry (`limit_expiry` event at `created_at + expiry`, calendar months as in
  `add_period`): the balance is refunded (a `cancelled` tx detail, also for zero) and
  the order ends `expired`, partially filled or not. Without an expiry it never expires.
* Cancel: `active` or `partially_filled` orders only; refund, status `cancelled`.
* Adverse move (`adverse_pct`, a backtest's slippage): the keeper sizes and prices a
  fill with the move included (threshold, depth and quote alike), so a fill still meets
  the rate; the move only makes an order fill later, or less, than without it.
* Fill tx details carry `keeper=KEEPER_WALLET`; `fills` counts fills
  (`numberOfOrdersCompleted`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal, localcontext
from typing import ClassVar, Final

from bot.aptos.tokens import Token
from bot.clock import ensure_utc
from bot.domain import PROVIDER_LIVE_STATUSES
from bot.paper.core.events import ScheduledEvent
from bot.paper.core.orders import (
    KEEPER_WALLET,
    OrderEngineBase,
    OrderState,
    add_period,
    check_period,
    human_rate,
)
from bot.paper.core.pools import Pool
from bot.paper.core.swaps import SwapError, execute_swap, quote_swap

__all__ = ["LIMIT_EXPIRY", "LimitEngine", "LimitOrder"]

LIMIT_EXPIRY: Final = "limit_expiry"
_BPS: Final = 10_000
_HUNDRED: Final = Decimal(100)
_PREC: Final = 80
_ROUNDING_TRIES: Final = 32
_DUST: Final = "dust"

_Pair = tuple[str, str]


@dataclass(kw_only=True)
class LimitOrder(OrderState):
    """A limit order's state; amounts in base units, `rate` in human buy-per-sell units."""

    amount: int
    rate: Decimal
    expiry: tuple[int, str] | None = None
    expire_at: datetime | None = None
    fills: int = 0

    @property
    def funded(self) -> int:
        """The amount escrowed."""
        return self.amount

    @property
    def pair(self) -> _Pair:
        """(sold token, bought token) keys."""
        return self.sell.address, self.buy.address

    @property
    def rate_base(self) -> Decimal:
        """The rate in base units of the bought token per base unit sold."""
        with localcontext() as ctx:
            ctx.prec = _PREC
            return self.rate.scaleb(self.buy.decimals - self.sell.decimals)


@dataclass(frozen=True)
class _Crossing:
    top: str
    after: datetime
    until: datetime
    at: datetime | None


class LimitEngine(OrderEngineBase[LimitOrder]):
    """Creates, fills, expires and cancels limit orders."""

    kind: ClassVar[str] = "limit"
    live_statuses: ClassVar[frozenset[str]] = PROVIDER_LIVE_STATUSES
    _thresholds: dict[str, Decimal] | None = None
    """Live orders' `_threshold`s by id (made on first use: engines pickled before it)."""

    def _setup(self) -> None:
        self._heaps: dict[_Pair, list[tuple[Decimal, int, str]]] = {}
        self._tokens: dict[_Pair, tuple[Token, Token]] = {}
        self._pair_live: dict[_Pair, int] = {}
        self._dirty: dict[_Pair, None] = {}
        self._checked: dict[_Pair, tuple[datetime | None, datetime | None]] = {}
        self._crossings: dict[_Pair, _Crossing] = {}
        self._expiries: dict[str, ScheduledEvent] = {}

    # -- requests --------------------------------------------------------------------

    def create(
        self,
        *,
        owner: str,
        recipient: str,
        sell: Token,
        buy: Token,
        amount: int,
        rate: Decimal,
        slippage: Decimal,
        expiry: tuple[int, str] | None,
        now: datetime,
        escrow_now: bool = True,
    ) -> LimitOrder:
        """Create a limit order (escrowed and active, or pending a deposit).

        Raises:
            ValueError: invalid amount, rate, expiry or slippage.
            InsufficientFunds: the owner cannot fund the amount (nothing is recorded).
        """
        now = ensure_utc(now)
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            raise ValueError(f"amount must be a positive int of base units, got {amount!r}")
        if not rate.is_finite() or rate <= 0:
            raise ValueError(f"rate must be a positive number, got {rate}")
        order = LimitOrder(
            order_id=self.ids.new(self.kind),
            owner=owner,
            recipient=recipient,
            sell=sell,
            buy=buy,
            slippage=slippage,
            created_at=now,
            status="pending",
            seq=self._next_seq(),
            amount=amount,
            rate=rate,
            expiry=None if expiry is None else check_period(expiry, "expiry"),
        )
        return self._open(order, now, escrow_now)

    def _on_start(self, order: LimitOrder, now: datetime) -> None:
        if order.expiry is not None:
            order.expire_at = add_period(now, *order.expiry)
            self._expiries[order.order_id] = self.events.push(
                order.expire_at, LIMIT_EXPIRY, order.order_id
            )
        pair = order.pair
        self._tokens.setdefault(pair, (order.sell, order.buy))
        heapq.heappush(self._heaps.setdefault(pair, []), (order.rate, order.seq, order.order_id))
        self._pair_live[pair] = self._pair_live.get(pair, 0) + 1
        self._dirty[pair] = None

    def cancel(self, order_id: str, now: datetime, owner: str | None = None) -> LimitOrder:
        """Cancel an active or partially filled order and refund its balance.

        Raises:
            UnknownOrder: no such order.
            NotOwner: `owner` given and not the order's owner.
            OrderStateError: the order is not live.
        """
        now = ensure_utc(now)
        order = self._live_order(order_id, owner)
        self._refund(order, now, always_record=True)
        self._retire(order, "cancelled")
        return order

    def process(self, event: ScheduledEvent, now: datetime) -> None:
        """Run a due `limit_expiry` event: refund the balance, status `expired`."""
        if event.kind != LIMIT_EXPIRY:
            raise ValueError(f"the limit engine does not handle {event.kind!r} events")
        if event.at > now:
            raise ValueError(f"event due at {event.at.isoformat()} is not due at {now}")
        order = self._orders.get(event.key)
        if order is None or order.order_id not in self._live:
            return
        if self._expiries.get(order.order_id) is not event:
            return
        self._refund(order, event.at, always_record=True)
        self._retire(order, "expired")

    def _retire(self, order: LimitOrder, status: str) -> None:
        self._close(order, status)
        if self._thresholds is not None:
            self._thresholds.pop(order.order_id, None)
        handle = self._expiries.pop(order.order_id, None)
        if handle is not None:
            self.events.cancel(handle)
        pair = order.pair
        self._pair_live[pair] -= 1
        if self._pair_live[pair] == 0:
            for book in (self._pair_live, self._heaps, self._crossings, self._dirty):
                book.pop(pair, None)

    # -- time ------------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """True when no order can fill: `fill_due` does nothing, `next_crossing` is None."""
        return not self._pair_live and not self._dirty

    def fill_due(self, now: datetime) -> int:
        """Fill what the market allows now, in pairs with a new price point or new order.

        Returns the number of fills made.
        """
        now = ensure_utc(now)
        fills = 0
        for pair in list(self._pair_live):
            sell, buy = self._tokens[pair]
            anchor = (
                self.oracle.step_start(sell.address, now),
                self.oracle.step_start(buy.address, now),
            )
            if pair not in self._dirty and self._checked.get(pair) == anchor:
                continue
            self._checked[pair] = anchor
            fills += self._fill_pair(pair, now)
        self._dirty.clear()
        return fills

    def next_crossing(self, now: datetime, until: datetime) -> datetime | None:
        """Earliest price point in (now, until] where some pair's best order is fillable.

        While a pair holds a new order not yet checked by `fill_due`, the answer is `now`
        itself, so the driver checks it at its creation time whatever its step size.
        """
        if self._dirty:
            return now
        best: datetime | None = None
        for pair in self._pair_live:
            at = self._crossing(pair, now, until)
            if at is not None and (best is None or at < best):
                best = at
        return best

    def _crossing(self, pair: _Pair, now: datetime, until: datetime) -> datetime | None:
        top = self._top(pair)
        if top is None:
            return None
        cached = self._crossings.get(pair)
        after = now
        if cached is not None and cached.top == top.order_id and cached.after <= now:
            if cached.at is not None and now < cached.at:
                return cached.at if cached.at <= until else None
            if cached.at is None:
                if until <= cached.until:
                    return None
                after = max(now, cached.until)  # (cached.after, cached.until] has none
        at = self.oracle.first_ratio_at_least(
            top.sell.address, top.buy.address, self._threshold(top), after, until
        )
        self._crossings[pair] = _Crossing(top.order_id, now, until, at)
        return at

    def _top(self, pair: _Pair) -> LimitOrder | None:
        heap = self._heaps.get(pair)
        while heap and heap[0][2] not in self._live:
            heapq.heappop(heap)
        return self._orders[heap[0][2]] if heap else None

    def _threshold(self, order: LimitOrder) -> Decimal:
        """The oracle ratio usd(sell)/usd(buy) at which the order becomes fillable.

        Worked out once per live order: its rate, its pair's fees and the adverse move
        never change.
        """
        known = self._thresholds
        if known is None:
            known = self._thresholds = {}
        threshold = known.get(order.order_id)
        if threshold is not None:
            return threshold
        pool_fee = self.pools.settings_for(order.sell, order.buy).fee_bps
        with localcontext() as ctx:
            ctx.prec = 40
            keep = Decimal(_BPS - pool_fee) * Decimal(_BPS - self.fees.platform_fee_bps)
            if self.adverse_pct:
                keep = keep * (_HUNDRED - self.adverse_pct) / _HUNDRED
            threshold = known[order.order_id] = order.rate * _BPS * _BPS / keep
        return threshold

    def _oracle_allows(self, order: LimitOrder, now: datetime) -> bool:
        with localcontext() as ctx:
            ctx.prec = _PREC
            sell_usd = self.oracle.usd(order.sell.address, now)
            buy_usd = self.oracle.usd(order.buy.address, now)
            return sell_usd >= self._threshold(order) * buy_usd

    # -- fills -----------------------------------------------------------------------

    def _fill_pair(self, pair: _Pair, now: datetime) -> int:
        fills = 0
        while (order := self._top(pair)) is not None and self._oracle_allows(order, now):
            before = order.fills
            done = self._fill(order, now)
            fills += order.fills - before
            if not done:
                break
        return fills

    def _fill(self, order: LimitOrder, now: datetime) -> bool:
        """Fill what the pool allows; True when the order is done (try the next one)."""
        pool = self.pools.pool(order.sell, order.buy, now)
        sized = self._size(order, pool, now)
        if sized == _DUST:
            self._refund(order, now, always_record=True)
            self._retire(order, "filled" if order.fills else "refunded")
            return True
        if not isinstance(sized, tuple):
            return False
        consumed, swap_in = sized
        with localcontext() as ctx:
            ctx.prec = _PREC
            min_out = int((order.rate_base * swap_in).to_integral_value(rounding=ROUND_CEILING))
        done = execute_swap(
            self.ledger,
            self.pools,
            self.fees,
            payer=order.escrow,
            recipient=order.recipient,
            sell=order.sell,
            buy=order.buy,
            at=now,
            exact_in=True,
            amount_in=swap_in,
            amount_out=min_out,
            adverse_pct=self.adverse_pct,
        )
        keeper = consumed - swap_in
        self.ledger.transfer(order.sell.address, order.escrow, self.keeper_account, keeper)
        order.spent += consumed
        order.received += done.amount_out
        order.fees_paid += keeper
        order.fills += 1
        self._record(
            order,
            "filled",
            now,
            from_amount=consumed,
            to_amount=done.amount_out,
            fee_amount=keeper,
            keeper=KEEPER_WALLET,
            price=human_rate(done.amount_out, order.buy, swap_in, order.sell),
        )
        if order.balance == 0:
            self._retire(order, "filled")
            return True
        order.status = "partially_filled"
        return False

    def _size(self, order: LimitOrder, pool: Pool, now: datetime) -> tuple[int, int] | str | None:
        """(consumed, swapped) of the largest fill at ≥ the rate; `_DUST`; or None (wait).

        The whole balance is tried first; only when it does not fit at the rate is the
        pool's depth at the rate computed.
        """
        balance = order.balance
        first = self._try_size(order, balance, now)
        if first is not None:
            return first
        platform_bps = self.fees.platform_fee_bps
        with localcontext() as ctx:
            ctx.prec = _PREC
            pool_rate = order.rate_base * _BPS / (_BPS - platform_bps)
            if self.adverse_pct:
                pool_rate = pool_rate * _HUNDRED / (_HUNDRED - self.adverse_pct)
        swap_cap = pool.max_in_at_rate(order.sell, pool_rate) * _BPS // (_BPS - platform_bps)
        consumed = min(balance - 1, swap_cap * _BPS // (_BPS - self.keeper_fee_bps))
        for _ in range(_ROUNDING_TRIES):
            if consumed <= 0:
                return None
            sized = self._try_size(order, consumed, now)
            if isinstance(sized, tuple):
                return sized
            consumed -= 1
        return None

    def _try_size(
        self, order: LimitOrder, consumed: int, now: datetime
    ) -> tuple[int, int] | str | None:
        """(consumed, swapped) if `consumed` fills at ≥ the rate, `_DUST`, or None.

        `_DUST`: `consumed` is the whole balance and it would give nothing at all.
        """
        swap_in = consumed - self._keeper_fee(consumed)
        out = self._quote_out(order, swap_in, now)
        with localcontext() as ctx:
            ctx.prec = _PREC
            if out > 0 and Decimal(out) >= order.rate_base * swap_in:
                return consumed, swap_in
        return _DUST if out == 0 and consumed == order.balance else None

    def _quote_out(self, order: LimitOrder, swap_in: int, now: datetime) -> int:
        if swap_in <= 0:
            return 0
        try:
            terms = quote_swap(
                self.pools,
                self.fees,
                order.sell,
                order.buy,
                at=now,
                amount_in=swap_in,
                slippage=Decimal(0),
                adverse_pct=self.adverse_pct,
            )
        except SwapError:
            return 0
        return terms.amount_out
