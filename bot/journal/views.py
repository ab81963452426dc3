"""What callers hand the journal and what they get back: frozen dataclasses, never ORM rows.

Amounts are exact `Decimal`s in human units; times are aware UTC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

__all__ = [
    "CommandView",
    "FillRecord",
    "FillView",
    "IntentTransitionView",
    "IntentView",
    "OrderChange",
    "OrderObservation",
    "OrderSnapshot",
    "OrderTransitionView",
    "OrderView",
    "PriceTickRow",
    "SwapFillRecord",
    "SwapFillView",
    "TransactionView",
]


@dataclass(frozen=True)
class IntentView:
    """One intent and its current state. `existing` is True when `record_intent` found it."""

    id: int
    strategy: str
    wallet: str
    kind: str
    idempotency_key: str
    action: Mapping[str, Any]
    created_at: datetime
    state: str
    updated_at: datetime
    order_id: str | None = None
    tx_hash: str | None = None
    error: str | None = None
    existing: bool = False


@dataclass(frozen=True)
class IntentTransitionView:
    """One row of an intent's state log."""

    intent_id: int
    from_state: str | None
    state: str
    at: datetime
    detail: str | None


@dataclass(frozen=True)
class OrderSnapshot:
    """What one observation says about a provider order (the columns of `orders`).

    `None` means "not known from this observation": it never erases a stored value.
    Amounts are human-unit `Decimal`s as `bot.api` reports them; times are aware UTC.
    """

    kind: str
    order_id: str
    wallet: str
    from_token: str
    to_token: str
    status: str
    amount_total: Decimal
    strategy: str | None = None
    intent_id: int | None = None
    amount_spent: Decimal | None = None
    amount_balance: Decimal | None = None
    to_amount_received: Decimal | None = None
    rate: Decimal | None = None
    min_rate: Decimal | None = None
    max_rate: Decimal | None = None
    interval_value: int | None = None
    interval_period: str | None = None
    orders_total: int | None = None
    orders_completed: int | None = None
    expire_at: datetime | None = None
    provider_created_at: datetime | None = None


# What identifies an order beyond (kind, order_id): an observation may never change it.
ORDER_IDENTITY_FIELDS: Final = ("wallet", "from_token", "to_token")
# What an observation updates when it knows it (`None` never erases a stored value).
ORDER_MUTABLE_FIELDS: Final = (
    "strategy",
    "intent_id",
    "amount_total",
    "amount_spent",
    "amount_balance",
    "to_amount_received",
    "rate",
    "min_rate",
    "max_rate",
    "interval_value",
    "interval_period",
    "orders_total",
    "orders_completed",
    "expire_at",
    "provider_created_at",
)


@dataclass(frozen=True, kw_only=True)
class OrderView(OrderSnapshot):
    """A stored order: the snapshot columns plus the journal's own."""

    row_id: int
    created_at: datetime
    updated_at: datetime
    last_seen_at: datetime
    last_raw_hash: str | None = None


@dataclass(frozen=True)
class FillRecord:
    """One `txDetails` record of an order; (tx_id, tx_number) identifies it."""

    tx_id: str
    type: str
    tx_number: int | None = None
    from_amount: Decimal | None = None
    to_amount: Decimal | None = None
    fee_amount: Decimal | None = None
    time: datetime | None = None
    keeper: str | None = None
    price_to_per_from: Decimal | None = None
    from_amount_usd: Decimal | None = None
    """The provider's USD value of `from_amount` (untrusted: valuation display only)."""
    to_amount_usd: Decimal | None = None
    """The provider's USD value of `to_amount` (untrusted: valuation display only)."""
    fee_amount_usd: Decimal | None = None
    """The provider's USD value of `fee_amount` (untrusted: valuation display only)."""


@dataclass(frozen=True, kw_only=True)
class FillView(FillRecord):
    """A stored fill and when the journal learned of it."""

    recorded_at: datetime


@dataclass(frozen=True)
class OrderObservation:
    """One order as seen by one poll: its snapshot, raw record hash and fills."""

    snapshot: OrderSnapshot
    raw_hash: str | None = None
    fills: Sequence[FillRecord] = ()


@dataclass(frozen=True)
class OrderChange:
    """What `upsert_order` did.

    `stale`: the observation was older than the last one stored, so nothing was written.
    `transition_recorded`: a row was appended to `order_transitions`.
    `changed_fields`: columns whose value changed (all known columns on creation).
    """

    kind: str
    order_id: str
    row_id: int
    created: bool
    from_status: str | None
    to_status: str
    transition_recorded: bool
    changed_fields: tuple[str, ...] = ()
    fills_added: int = 0
    stale: bool = False


@dataclass(frozen=True)
class OrderTransitionView:
    """One recorded status change of an order."""

    from_status: str | None
    to_status: str
    observed_at: datetime
    source: str
    raw_hash: str | None


@dataclass(frozen=True)
class TransactionView:
    """One signed transaction and what is known of its fate."""

    hash: str
    sender: str
    sequence_number: int
    payload_summary: str
    state: str
    intent_id: int | None
    gas_used: int | None
    vm_status: str | None
    created_at: datetime
    updated_at: datetime
    gas_unit_price: int | None = None
    """Octas per gas unit, as the committed transaction says (None: not known)."""
    balance_changes: Mapping[str, int] | None = None
    """The sender's balance changes as the node reported them: asset → delta in base
    units (None: not reported)."""
    committed_at: datetime | None = None
    """The ledger's time of the commit (None: not known)."""

    @property
    def gas_fee(self) -> int | None:
        """Octas the transaction paid for gas (`gas_used × gas_unit_price`); None: unknown."""
        if self.gas_used is None or self.gas_unit_price is None:
            return None
        return self.gas_used * self.gas_unit_price


@dataclass(frozen=True)
class SwapFillRecord:
    """What one confirmed swap sold and received (human amounts of canonical tokens).

    `source`: `chain` (the transaction's balance changes) or `bounds` (the node reported
    none: the intent's exact side and its on-chain bound, not a measurement).
    """

    intent_id: int
    tx_hash: str
    sold_token: str
    sold_amount: Decimal
    bought_token: str
    bought_amount: Decimal
    source: str
    time: datetime


@dataclass(frozen=True, kw_only=True)
class SwapFillView(SwapFillRecord):
    """A stored swap fill, with its intent's strategy and wallet, and when it was recorded."""

    strategy: str
    wallet: str
    recorded_at: datetime


@dataclass(frozen=True)
class PriceTickRow:
    """One price of one token at one time."""

    timestamp: datetime
    token: str
    usd_price: Decimal
    symbol: str | None = None
    native_price: Decimal | None = None
    source: str | None = None
    """Where the price came from (`provider`, `paper`, `synthetic`, `import`; the series
    format's `source`); None for ticks recorded before the column existed."""


@dataclass(frozen=True)
class CommandView:
    """One queued request to the daemon."""

    id: int
    kind: str
    payload: Mapping[str, Any]
    state: str
    created_at: datetime
    updated_at: datetime
    result: str | None = None
    wallet: str = ""
    """The wallet whose daemon is to run it (`""`: not named)."""


@dataclass(frozen=True)
class DaemonView:
    """One wallet's daemon as its last heartbeat wrote it to the journal (`daemons`)."""

    wallet: str
    host: str
    pid: int
    mode: str
    state: str
    """starting | running | stopping | stopped."""
    health: str
    """`ok`, or the daemon's problem as it saw it."""
    version: str
    strategies: int
    heartbeat_seconds: int
    started_at: datetime
    beat_at: datetime
    """When the row was written (the wall clock): stale after 3 × `heartbeat_seconds`."""
    last_tick_at: datetime | None = None
    """The latest tick of its strategies (the market clock's time), None before the first."""
