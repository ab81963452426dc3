"""The journal's tables (SQLModel, `table=True`).

Every amount is `DecimalText`, every base-unit integer `BigIntText`, every time
`UtcDateTime` (see `bot.journal.types`); addresses and token identities are stored only in
canonical text (`bot.aptos.address` / `bot.aptos.tokens.token_key`). Statuses are open
strings: a status the provider invents tomorrow is stored as it comes.

These classes are the schema of the newest migration (`head`); the store keeps them inside
`bot.journal`, callers get frozen views (`bot.journal.views`).

Append-only tables: `order_transitions`, `intent_transitions`, `fills`, `swap_fills`. Current-state
tables (`orders`, `intents.state`, `transactions`, `commands`) are caches of what the logs
say, updated only by `bot.journal.store.Journal`; `daemons` is each wallet's last heartbeat.

Every row belongs to one wallet (since `0006`): `intents.wallet`, `orders.wallet`,
`transactions.sender`, `strategy_state.wallet`, `commands.wallet`, `daemons.wallet`; the
log tables through their intent or order. `price_ticks` are market data, shared.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Index, MetaData, UniqueConstraint
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from bot.journal.types import BigIntText, DecimalText, UtcDateTime

__all__ = [
    "NAMING_CONVENTION",
    "UNNAMED_WALLET",
    "Command",
    "DaemonRecord",
    "Fill",
    "Intent",
    "IntentTransition",
    "JournalModel",
    "Order",
    "OrderTransition",
    "PriceTick",
    "StrategyState",
    "SwapFill",
    "TransactionRecord",
    "journal_metadata",
]

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Every constraint has a name, so SQLite batch migrations can drop or alter it."""

journal_metadata = MetaData(naming_convention=NAMING_CONVENTION)
"""The journal's own metadata (not the global `SQLModel.metadata`)."""

UNNAMED_WALLET = ""
"""The `wallet` of strategy state and commands written by a journal opened for no wallet
(and of rows of before `0006` with no evidence of theirs): the first daemon that opens the
journal for its wallet claims them (`Journal.claim_unnamed`)."""


class JournalModel(SQLModel, registry=registry(metadata=journal_metadata)):
    """Base of the journal tables: registers them in `journal_metadata`."""


class Intent(JournalModel, table=True):
    """What a strategy asked for. Immutable except `state` and its outcome columns."""

    __tablename__ = "intents"
    __table_args__ = (
        UniqueConstraint("wallet", "strategy", "idempotency_key"),  # since 0006 with wallet
        Index("ix_intents_state", "state"),  # since 0002
    )

    id: int | None = Field(default=None, primary_key=True)
    strategy: str
    wallet: str
    kind: str
    """create_dca | create_limit | cancel_dca | cancel_limit | swap."""
    idempotency_key: str
    action_json: str
    """Canonical JSON of the action (`bot.journal.codec`)."""
    created_at: datetime = Field(sa_type=UtcDateTime)
    state: str
    """Cache of the last `intent_transitions` row: planned, sent, confirmed, …"""
    updated_at: datetime = Field(sa_type=UtcDateTime)
    order_id: str | None = None
    tx_hash: str | None = None
    error: str | None = None


class IntentTransition(JournalModel, table=True):
    """Append-only log of an intent's states: the truth `intents.state` caches."""

    __tablename__ = "intent_transitions"

    id: int | None = Field(default=None, primary_key=True)
    intent_id: int = Field(foreign_key="intents.id", index=True)
    from_state: str | None = None
    state: str
    at: datetime = Field(sa_type=UtcDateTime)
    detail: str | None = None


class Order(JournalModel, table=True):
    """The current view of one provider order (DCA or limit)."""

    __tablename__ = "orders"
    __table_args__ = (
        UniqueConstraint("kind", "order_id"),
        Index("ix_orders_status", "status"),  # since 0002
        Index("ix_orders_wallet_kind", "wallet", "kind"),  # since 0006
        Index("ix_orders_wallet_id", "wallet", "id"),  # since 0006: a wallet's pages, newest first
    )

    id: int | None = Field(default=None, primary_key=True)
    kind: str
    """dca | limit."""
    order_id: str
    """The provider's order id (`svcTxId`)."""
    intent_id: int | None = Field(default=None, foreign_key="intents.id")
    strategy: str | None = Field(default=None, index=True)
    wallet: str
    from_token: str
    to_token: str
    amount_total: Decimal = Field(sa_type=DecimalText)
    amount_spent: Decimal | None = Field(default=None, sa_type=DecimalText)
    amount_balance: Decimal | None = Field(default=None, sa_type=DecimalText)
    to_amount_received: Decimal | None = Field(default=None, sa_type=DecimalText)
    rate: Decimal | None = Field(default=None, sa_type=DecimalText)
    min_rate: Decimal | None = Field(default=None, sa_type=DecimalText)
    max_rate: Decimal | None = Field(default=None, sa_type=DecimalText)
    interval_value: int | None = None
    interval_period: str | None = None
    orders_total: int | None = None
    orders_completed: int | None = None
    expire_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    status: str
    provider_created_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    last_seen_at: datetime = Field(sa_type=UtcDateTime)
    last_raw_hash: str | None = None


class OrderTransition(JournalModel, table=True):
    """Append-only: one observed status change of an order."""

    __tablename__ = "order_transitions"
    __table_args__ = (Index("ix_order_transitions_order_row_id", "order_row_id"),)

    id: int | None = Field(default=None, primary_key=True)
    order_row_id: int = Field(foreign_key="orders.id")
    from_status: str | None = None
    to_status: str
    observed_at: datetime = Field(sa_type=UtcDateTime)
    source: str
    """poll | create | cancel | reconcile | …"""
    raw_hash: str | None = None


class Fill(JournalModel, table=True):
    """One `txDetails` record of an order, recorded once per (txId, txNumber)."""

    __tablename__ = "fills"
    __table_args__ = (UniqueConstraint("order_row_id", "tx_id", "tx_number"),)

    id: int | None = Field(default=None, primary_key=True)
    order_row_id: int = Field(foreign_key="orders.id")
    tx_id: str
    tx_number: int | None = None
    type: str
    from_amount: Decimal | None = Field(default=None, sa_type=DecimalText)
    to_amount: Decimal | None = Field(default=None, sa_type=DecimalText)
    fee_amount: Decimal | None = Field(default=None, sa_type=DecimalText)
    time: datetime | None = Field(default=None, sa_type=UtcDateTime)
    keeper: str | None = None
    price_to_per_from: Decimal | None = Field(default=None, sa_type=DecimalText)
    recorded_at: datetime = Field(sa_type=UtcDateTime)
    # since 0005: the provider's …USD values (untrusted: valuation display only)
    from_amount_usd: Decimal | None = Field(default=None, sa_type=DecimalText)
    to_amount_usd: Decimal | None = Field(default=None, sa_type=DecimalText)
    fee_amount_usd: Decimal | None = Field(default=None, sa_type=DecimalText)


class TransactionRecord(JournalModel, table=True):
    """One signed Aptos transaction, recorded before its bytes are sent."""

    __tablename__ = "transactions"
    __table_args__ = (Index("ix_transactions_sender", "sender"),)  # since 0006

    id: int | None = Field(default=None, primary_key=True)
    hash: str = Field(unique=True)
    intent_id: int | None = Field(default=None, foreign_key="intents.id", index=True)
    sender: str
    sequence_number: int = Field(sa_type=BigIntText)
    payload_summary: str
    state: str
    """signed | submitted | unknown | committed | failed | expired."""
    gas_used: int | None = Field(default=None, sa_type=BigIntText)
    vm_status: str | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    # since 0005: the gas fee is gas_used × gas_unit_price octas
    gas_unit_price: int | None = Field(default=None, sa_type=BigIntText)
    balance_changes: str | None = None
    """Canonical JSON of the sender's balance changes as the node reported them:
    `{asset: delta}` in base units (None: not reported)."""
    committed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    """The ledger's time of the commit (None: not known)."""


class SwapFill(JournalModel, table=True):
    """What one confirmed swap intent sold and received (since 0005), one row per intent."""

    __tablename__ = "swap_fills"
    __table_args__ = (UniqueConstraint("intent_id"),)

    id: int | None = Field(default=None, primary_key=True)
    intent_id: int = Field(foreign_key="intents.id")
    tx_hash: str
    sold_token: str
    sold_amount: Decimal = Field(sa_type=DecimalText)
    bought_token: str
    bought_amount: Decimal = Field(sa_type=DecimalText)
    source: str
    """chain (the transaction's balance changes) | bounds (the intent's exact side and
    its on-chain bound: the node reported no balance changes)."""
    time: datetime = Field(sa_type=UtcDateTime)
    recorded_at: datetime = Field(sa_type=UtcDateTime)


class PriceTick(JournalModel, table=True):
    """One recorded price of one token (the backtest recorder)."""

    __tablename__ = "price_ticks"
    __table_args__ = (
        UniqueConstraint("token", "timestamp"),
        Index("ix_price_ticks_timestamp", "timestamp"),  # since 0002
    )

    id: int | None = Field(default=None, primary_key=True)
    timestamp: datetime = Field(sa_type=UtcDateTime)
    token: str
    symbol: str | None = None
    usd_price: Decimal = Field(sa_type=DecimalText)
    native_price: Decimal | None = Field(default=None, sa_type=DecimalText)
    source: str | None = None  # since 0004: provider, paper, synthetic, import; NULL: older


class StrategyState(JournalModel, table=True):
    """A strategy's own key/value memory (canonical JSON values), per wallet (since 0006)."""

    __tablename__ = "strategy_state"

    strategy: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    value_json: str
    updated_at: datetime = Field(sa_type=UtcDateTime)
    wallet: str = Field(primary_key=True)
    """The wallet whose strategy this is (`UNNAMED_WALLET`: not known yet)."""


class Command(JournalModel, table=True):
    """A request handed to the running daemon by another process (e.g. `cancel`)."""

    __tablename__ = "commands"
    __table_args__ = (
        Index("ix_commands_state", "state"),  # since 0002
        Index("ix_commands_wallet_state", "wallet", "state"),  # since 0006
    )

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = Field(sa_type=UtcDateTime)
    kind: str
    payload_json: str
    state: str
    """queued | taken | done | failed."""
    result: str | None = None
    updated_at: datetime = Field(sa_type=UtcDateTime)
    wallet: str
    """The wallet whose daemon is to run it (since 0006; `UNNAMED_WALLET`: not named)."""


class DaemonRecord(JournalModel, table=True):
    """One wallet's daemon as its last heartbeat described it (since 0006), one row per wallet.

    Upserted by the daemon's heartbeat; `bot status --all` lists them. Times are the wall
    clock's, except `last_tick_at` (the market clock's: simulated in a paper world).
    """

    __tablename__ = "daemons"

    wallet: str = Field(primary_key=True)
    host: str
    pid: int
    mode: str
    state: str
    """starting | running | stopping | stopped."""
    health: str
    """`ok`, or the daemon's problem (`degraded: …`, a watchdog's verdict)."""
    version: str
    strategies: int
    heartbeat_seconds: int
    started_at: datetime = Field(sa_type=UtcDateTime)
    beat_at: datetime = Field(sa_type=UtcDateTime)
    """When this row was written (stale after 3 × `heartbeat_seconds`)."""
    last_tick_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
