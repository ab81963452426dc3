"""Pieces shared by the paper world's DCA and limit-order engines.

Semantic choices common to both engines (the engine modules add their own):

* Amounts are integer base units; rates and prices are human `Decimal`s (units of the
  bought token per unit of the sold token, or the inverse), computed with 40 significant
  digits. No float anywhere; every time is an aware UTC datetime.
* Funding: an order holds its sold token in `escrow_account(order_id)`. With
  `escrow_now=True` the engine moves the funds from the owner at creation (a short owner
  raises `InsufficientFunds` and nothing is recorded). With `escrow_now=False` the order
  is *pending* (not scheduled, not listed, no tx detail): the on-chain deposit moves the
  funds into escrow, then `activate(order_id, now)` checks the escrow holds exactly the
  order's amount and starts the order; its `created_at` becomes the activation time.
  `drop_pending` forgets a pending order whose deposit never landed (refused while its
  escrow holds anything).
* Keeper fee: `keeper_fee_bps` of the amount an execution consumes from escrow
  (`consumed × bps // 10000`, rounded down), moved escrow → `keeper_account` after the
  swap succeeded; nothing is charged for a skipped or failed attempt. The rest is sold
  with `execute_swap`, whose platform fee is part of the swap price (as in a `/swap`
  quote), so `fees_paid` / `fee_amount` show only the keeper fee.
* Execution rate (`price_to_per_from`, average prices, DCA bounds, limit rates): bought
  units per unit handed to the swap (`consumed − keeper fee`, platform fee included).
  `avg_price_buy_per_sell = received / (spent − fees_paid)` in human units.
* `spent` counts sold-token units consumed by executions (keeper fee included),
  `withdrawn` the units refunded to the owner, `balance = funded − spent − withdrawn`
  and always equals the escrow's balance.
* Adverse move (`adverse_pct`, 0 in the paper world; a backtest's slippage): each
  execution is priced that percent worse than the keeper's quote — see the engines.
* Tx details: `tx_number` is 1-based per order; `attempt_number` is the running count
  of execution attempts (filled, attempted, failed) and 0 on created/cancelled records.
  Type `cancelled` marks every refund to the owner (a cancel, a limit expiry, the
  remainder returned at the end of a DCA), with the refunded amount as `from_amount`.
* Listing: `orders_of(wallet)` returns the listed (non-pending) orders whose owner or
  recipient is `wallet`, newest first (by `created_at`, then creation sequence).
* Ids are deterministic: `"0x" + sha256(f"{seed}:{kind}:{n}")` for orders and
  `sha256(f"{seed}:tx:{order_id}:{tx_number}")` for tx details.
"""

from __future__ import annotations

import calendar
import hashlib
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Context, Decimal
from functools import cached_property
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar

from bot.aptos.tokens import Token
from bot.clock import ensure_utc
from bot.domain import TIME_PERIODS, OrderStatus
from bot.paper.core.events import EventQueue
from bot.paper.core.ledger import Ledger, escrow_account
from bot.paper.core.pools import PoolBook, same_token
from bot.paper.core.swaps import FeeSettings

__all__ = [
    "FIXED_PERIODS",
    "KEEPER_WALLET",
    "TX_TYPES",
    "NotOwner",
    "OrderEngineBase",
    "OrderIds",
    "OrderState",
    "OrderStateError",
    "RateOracle",
    "TxDetailRecord",
    "UnknownOrder",
    "add_period",
    "check_period",
    "human_rate",
]

KEEPER_WALLET: Final = "0x" + "ee" * 32
"""The executor wallet shown as `keeperWalletAddress` on limit fills."""
TX_TYPES: Final = ("created", "filled", "attempted", "failed", "cancelled")
_BPS: Final = 10_000
_PREC: Final = 40
_RATE_CONTEXT: Final = Context(prec=_PREC)
FIXED_PERIODS: Final = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
}
"""The periods of a fixed length (`month` is a calendar month: `add_period`)."""


class RateOracle(Protocol):
    """What the order engines need from the price book."""

    def usd(self, token: str, at: datetime) -> Decimal:
        """The internal USD price of a token at a time."""
        ...

    def step_start(self, token: str, at: datetime) -> datetime | None:
        """When the price point in force at `at` began."""
        ...

    def first_ratio_at_least(
        self, num: str, den: str, threshold: Decimal, after: datetime, until: datetime
    ) -> datetime | None:
        """Earliest price change point t, after < t ≤ until, with usd(num)/usd(den) ≥ threshold."""
        ...


class UnknownOrder(LookupError):
    """No order has this id."""


class OrderStateError(ValueError):
    """The order is not in a state that allows the operation."""


class NotOwner(OrderStateError):
    """The caller is not the order's owner."""


@dataclass(frozen=True)
class TxDetailRecord:
    """One `txDetails[]` entry, amounts in base units of the order's tokens."""

    tx_id: str
    tx_number: int
    type: str
    attempt_number: int
    from_amount: int
    to_amount: int
    fee_amount: int
    time: datetime
    keeper: str | None = None
    price_to_per_from: Decimal | None = None
    """Human units of the bought token per sold token (None when nothing was priced)."""


def add_period(t: datetime, value: int, period: str) -> datetime:
    """`t` plus `value` periods.

    minute/hour/day/week are fixed lengths. `month` is a calendar month: the same day of
    the month `value` months later, clamped to that month's last day (Jan 31 + 1 month is
    Feb 28/29), same time of day.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"period value must be a non-negative int, got {value!r}")
    if period == "month":
        index = t.month - 1 + value
        year, month = t.year + index // 12, index % 12 + 1
        day = min(t.day, calendar.monthrange(year, month)[1])
        return t.replace(year=year, month=month, day=day)
    step = FIXED_PERIODS.get(period)
    if step is None:
        raise ValueError(f"unknown time period {period!r} (expected one of {TIME_PERIODS})")
    return t + step * value


def check_period(spec: tuple[int, str], what: str, *, minimum: int = 1) -> tuple[int, str]:
    """Validate an `(value, period)` pair; returns it."""
    value, period = spec
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{what} value must be an int ≥ {minimum}, got {value!r}")
    if period not in TIME_PERIODS:
        raise ValueError(f"{what} period must be one of {TIME_PERIODS}, got {period!r}")
    return value, period


def human_rate(out_amount: int, out_token: Token, in_amount: int, in_token: Token) -> Decimal:
    """Human units of `out_token` per human unit of `in_token` (`in_amount` > 0)."""
    ctx = _RATE_CONTEXT  # passed by position: `_decimal` parses a keyword at a cost
    rate = ctx.divide(Decimal(out_amount), Decimal(in_amount))
    return rate.scaleb(in_token.decimals - out_token.decimals, ctx)


def _hex(text: str) -> str:
    return "0x" + hashlib.sha256(text.encode()).hexdigest()


class OrderIds:
    """Deterministic ids: the same seed and sequence of requests give the same ids."""

    def __init__(self, seed: str | int = "paper") -> None:
        self._seed = seed
        self._counters: dict[str, itertools.count[int]] = {}
        self._tx_prefixes: dict[str, Any] = {}
        self._reserved: set[str] = set()

    def __getstate__(self) -> dict[str, object]:
        """What a snapshot keeps (not the hashes in progress, nor the reserved ids)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_tx_prefixes", "_reserved")}

    def __setstate__(self, state: dict[str, object]) -> None:
        """Restore a pickled `OrderIds`."""
        self.__dict__.update({**state, "_tx_prefixes": {}, "_reserved": set()})

    def reserve(self, ids: Iterable[str]) -> None:
        """Never issue these ids (`new` skips them).

        A journal's orders of an earlier world, or of this one made after the snapshot it
        was restored from.
        """
        self._reserved.update(i.lower() for i in ids)

    def new(self, kind: str) -> str:
        """The next order id of a kind (`dca`, `limit`) not reserved."""
        counter = self._counters.setdefault(kind, itertools.count(1))
        while True:
            order_id = _hex(f"{self._seed}:{kind}:{next(counter)}")
            if order_id not in self._reserved:
                return order_id

    def tx(self, order_id: str, tx_number: int) -> str:
        """The id of an order's `tx_number`-th tx detail.

        `sha256(f"{seed}:tx:{order_id}:{tx_number}")`: the hash of the part before the
        number is kept per order (recent ones), and continued with the number.
        """
        digest = self._tx_prefix(order_id).copy()
        digest.update(str(tx_number).encode())
        hexdigest: str = digest.hexdigest()
        return "0x" + hexdigest

    def txs(self, order_id: str, numbers: range) -> list[str]:
        """`tx(order_id, n)` for each of `numbers` (a run of records made at once)."""
        prefix = self._tx_prefix(order_id)
        found: list[str] = []
        for number in numbers:
            digest = prefix.copy()
            digest.update(str(number).encode())
            found.append("0x" + digest.hexdigest())
        return found

    def _tx_prefix(self, order_id: str) -> Any:
        prefix = self._tx_prefixes.get(order_id)
        if prefix is None:
            if len(self._tx_prefixes) >= 64:
                self._tx_prefixes.clear()
            prefix = hashlib.sha256(f"{self._seed}:tx:{order_id}:".encode())
            self._tx_prefixes[order_id] = prefix
        return prefix


@dataclass(kw_only=True)
class OrderState:
    """Fields shared by DCA and limit orders (all amounts in base units)."""

    order_id: str
    owner: str
    recipient: str
    sell: Token
    buy: Token
    slippage: Decimal
    created_at: datetime
    status: str
    seq: int
    """Creation sequence within the engine (tie-break for newest-first listing)."""
    spent: int = 0
    received: int = 0
    withdrawn: int = 0
    fees_paid: int = 0
    attempts: int = 0
    """Execution attempts so far (filled, attempted and failed records)."""
    details: list[TxDetailRecord] = field(default_factory=list)

    @property
    def funded(self) -> int:
        """The amount escrowed for the order."""
        raise NotImplementedError

    @cached_property
    def escrow(self) -> str:
        """The ledger account holding the order's funds."""
        return escrow_account(self.order_id)

    @property
    def balance(self) -> int:
        """Sold-token units still in escrow: funded − spent − withdrawn."""
        return self.funded - self.spent - self.withdrawn

    @property
    def avg_price_buy_per_sell(self) -> Decimal | None:
        """Average human units bought per unit swapped; None before any fill."""
        swapped = self.spent - self.fees_paid
        if self.received <= 0 or swapped <= 0:
            return None
        return human_rate(self.received, self.buy, swapped, self.sell)

    @property
    def avg_price_sell_per_buy(self) -> Decimal | None:
        """Average human units swapped per unit bought; None before any fill."""
        swapped = self.spent - self.fees_paid
        if self.received <= 0 or swapped <= 0:
            return None
        return human_rate(swapped, self.sell, self.received, self.buy)


OrderT = TypeVar("OrderT", bound=OrderState)


class OrderEngineBase(Generic[OrderT]):
    """Bookkeeping shared by the engines: ids, escrow, pending orders, listing, refunds."""

    kind: ClassVar[str] = "order"
    live_statuses: ClassVar[frozenset[str]] = frozenset({OrderStatus.ACTIVE})
    adverse_pct: Decimal = Decimal(0)  # also the value of engines pickled before it existed

    def __init__(
        self,
        ledger: Ledger,
        pools: PoolBook,
        fees: FeeSettings,
        events: EventQueue,
        oracle: RateOracle,
        ids: OrderIds,
        keeper_fee_bps: int = 5,
        keeper_account: str = "fees:keeper",
        adverse_pct: Decimal = Decimal(0),
    ) -> None:
        if not 0 <= keeper_fee_bps < _BPS:
            raise ValueError("keeper_fee_bps must be in [0, 10000)")
        if not Decimal(0) <= adverse_pct < Decimal(100):
            raise ValueError("adverse_pct must be in [0, 100)")
        self.ledger = ledger
        self.pools = pools
        self.fees = fees
        self.events = events
        self.oracle = oracle
        self.ids = ids
        self.keeper_fee_bps = keeper_fee_bps
        self.keeper_account = keeper_account
        self.adverse_pct = adverse_pct
        """Backtests' slippage: executions priced this percent worse than their quotes."""
        self._orders: dict[str, OrderT] = {}
        self._pending: set[str] = set()
        self._live: set[str] = set()
        self._by_wallet: dict[str, list[str]] = {}
        self._seq = itertools.count(1)
        self._setup()

    def _setup(self) -> None:
        """Engine hook: initialise engine-specific state."""

    # -- queries ---------------------------------------------------------------------

    def get(self, order_id: str) -> OrderT:
        """The order with this id (pending ones included).

        Raises:
            UnknownOrder: no such order.
        """
        order = self._orders.get(order_id)
        if order is None:
            raise UnknownOrder(f"unknown {self.kind} order {order_id!r}")
        return order

    def orders_of(self, wallet: str) -> list[OrderT]:
        """Listed orders owned by or paying out to `wallet`, newest first."""
        found = [self._orders[i] for i in self._by_wallet.get(wallet, [])]
        return sorted(found, key=lambda o: (o.created_at, o.seq), reverse=True)

    @property
    def live_count(self) -> int:
        """How many orders can still execute."""
        return len(self._live)

    # -- pending orders (on-chain deposit style) -------------------------------------

    def activate(self, order_id: str, now: datetime) -> OrderT:
        """Start a pending order once its deposit holds exactly the order's amount.

        Raises:
            UnknownOrder: no such order.
            OrderStateError: not pending, or the escrow does not hold the amount.
        """
        order = self.get(order_id)
        if order_id not in self._pending:
            raise OrderStateError(f"{self.kind} order {order_id} is {order.status}, not pending")
        held = self.ledger.balance(order.escrow, order.sell.address)
        if held != order.funded:
            raise OrderStateError(
                f"escrow of {self.kind} order {order_id} holds {held}, "
                f"expected {order.funded} (base units)"
            )
        self._pending.discard(order_id)
        order.created_at = ensure_utc(now)
        self._start(order, order.created_at)
        return order

    def drop_pending(self, order_id: str) -> None:
        """Forget a pending order whose deposit never landed.

        Raises:
            UnknownOrder: no such order.
            OrderStateError: not pending, or its escrow already holds funds.
        """
        order = self.get(order_id)
        if order_id not in self._pending:
            raise OrderStateError(f"{self.kind} order {order_id} is {order.status}, not pending")
        if self.ledger.balance(order.escrow, order.sell.address):
            raise OrderStateError(f"escrow of {self.kind} order {order_id} holds funds")
        self._pending.discard(order_id)
        del self._orders[order_id]

    # -- helpers for the engines -----------------------------------------------------

    def _next_seq(self) -> int:
        return next(self._seq)

    def _open(self, order: OrderT, now: datetime, escrow_now: bool) -> OrderT:
        """Fund (or park as pending) a freshly built order."""
        if same_token(order.sell, order.buy):
            raise ValueError(f"cannot trade {order.sell.symbol} for itself")
        if not Decimal(0) <= order.slippage <= Decimal(100):
            raise ValueError(f"slippage must be within 0..100 percent, got {order.slippage}")
        if not escrow_now:
            order.status = "pending"
            self._orders[order.order_id] = order
            self._pending.add(order.order_id)
            return order
        self.ledger.transfer(order.sell.address, order.owner, order.escrow, order.funded)
        self._orders[order.order_id] = order
        self._start(order, now)
        return order

    def _start(self, order: OrderT, now: datetime) -> None:
        order.status = "active"
        self._live.add(order.order_id)
        for wallet in dict.fromkeys((order.owner, order.recipient)):
            self._by_wallet.setdefault(wallet, []).append(order.order_id)
        self._record(order, "created", now, from_amount=order.funded)
        self._on_start(order, now)

    def _on_start(self, order: OrderT, now: datetime) -> None:
        """Engine hook: schedule the order once active."""

    def _live_order(self, order_id: str, owner: str | None) -> OrderT:
        order = self.get(order_id)
        if owner is not None and owner != order.owner:
            raise NotOwner(f"{self.kind} order {order_id} does not belong to {owner}")
        if order.order_id not in self._live:
            raise OrderStateError(
                f"{self.kind} order {order_id} is {order.status}; only "
                f"{'/'.join(sorted(self.live_statuses))} orders can be cancelled"
            )
        return order

    def _refund(self, order: OrderT, now: datetime, *, always_record: bool) -> int:
        """Return the balance to the owner (a `cancelled` tx detail); returns the amount."""
        amount = order.balance
        self.ledger.transfer(order.sell.address, order.escrow, order.owner, amount)
        order.withdrawn += amount
        if amount or always_record:
            self._record(order, "cancelled", now, from_amount=amount)
        return amount

    def _close(self, order: OrderT, status: str) -> None:
        order.status = status
        self._live.discard(order.order_id)

    def _record(
        self,
        order: OrderT,
        kind: str,
        now: datetime,
        *,
        from_amount: int = 0,
        to_amount: int = 0,
        fee_amount: int = 0,
        keeper: str | None = None,
        price: Decimal | None = None,
    ) -> TxDetailRecord:
        number = len(order.details) + 1
        attempt = 0
        if kind in ("filled", "attempted", "failed"):
            order.attempts += 1
            attempt = order.attempts
        record = TxDetailRecord(  # by position: a record per execution, keywords cost more
            self.ids.tx(order.order_id, number),  # tx_id
            number,  # tx_number
            kind,  # type
            attempt,  # attempt_number
            from_amount,
            to_amount,
            fee_amount,
            now,  # time
            keeper,
            price,  # price_to_per_from
        )
        order.details.append(record)
        return record

    def _keeper_fee(self, consumed: int) -> int:
        return consumed * self.keeper_fee_bps // _BPS
