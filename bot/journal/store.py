"""`Journal`: the only writer of the journal database.

Every write method runs one short transaction and commits before it returns: when
`record_intent` returns, the intent is on disk (SQLite: WAL, `synchronous=FULL`). Write
transactions start with `BEGIN IMMEDIATE`, so two writers queue on SQLite's lock (up to
the busy timeout) instead of failing half-way.

One writer: the daemon opens the journal as the writer. Another process (`bot orders`,
`bot journal export`) opens it with `readonly=True`: it may read everything and write
only to the command queue (`enqueue_command`), which the daemon polls (`take_command`).

Times are never read from a wall clock here: every write takes `at=` (aware UTC) from the
caller's clock. Addresses and tokens are stored in canonical text. Amounts are exact
(`bot.journal.types`) and never compared in SQL.

Callers get frozen dataclass views, never ORM objects.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal, Inexact, InvalidOperation, localcontext
from types import TracebackType
from typing import Any, Final, Literal, Self, TextIO, TypeVar

from sqlalchemy import Engine, Text, TypeDecorator, delete, select, type_coerce
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session, col
from sqlmodel import select as sm_select

from bot.aptos.address import Address, AddressError
from bot.aptos.tokens import TokenLookupError, token_key
from bot.journal.codec import decode_json, encode_json
from bot.journal.db import make_engine, sqlite_file, write_engine
from bot.journal.migrate import engine_revision, head_revision, upgrade_engine
from bot.journal.models import (
    Command,
    Fill,
    Intent,
    IntentTransition,
    Order,
    OrderTransition,
    PriceTick,
    StrategyState,
    TransactionRecord,
    journal_metadata,
)
from bot.journal.types import decimal_text, utc_text

__all__ = [
    "EXPORT_TABLES",
    "INTENT_FINAL_STATES",
    "INTENT_KINDS",
    "INTENT_MOVES",
    "INTENT_STATES",
    "ORDER_KINDS",
    "TX_FINAL_STATES",
    "TX_STATES",
    "CommandView",
    "FillRecord",
    "FillView",
    "IntentTransitionView",
    "IntentView",
    "Journal",
    "JournalError",
    "OrderChange",
    "OrderObservation",
    "OrderSnapshot",
    "OrderTransitionView",
    "OrderView",
    "PriceTickRow",
    "TransactionView",
]

ORDER_KINDS: Final = frozenset({"dca", "limit"})
INTENT_KINDS: Final = frozenset(
    {"create_dca", "create_limit", "cancel_dca", "cancel_limit", "swap"}
)
INTENT_STATES: Final = ("planned", "sent", "confirmed", "failed", "unknown", "reconciled")
INTENT_MOVES: Final[Mapping[str, frozenset[str]]] = {
    # planned → failed: refused or broken before anything was sent.
    "planned": frozenset({"sent", "failed"}),
    "sent": frozenset({"confirmed", "failed", "unknown"}),
    "unknown": frozenset({"reconciled", "failed", "confirmed"}),
    "confirmed": frozenset(),
    "failed": frozenset(),
    "reconciled": frozenset(),
}
INTENT_FINAL_STATES: Final = frozenset(s for s, moves in INTENT_MOVES.items() if not moves)
TX_STATES: Final = ("signed", "submitted", "unknown", "committed", "failed", "expired")
TX_FINAL_STATES: Final = frozenset({"committed", "failed", "expired"})
COMMAND_STATES: Final = ("queued", "taken", "done", "failed")
EXPORT_TABLES: Final = (
    "intents",
    "intent_transitions",
    "orders",
    "order_transitions",
    "fills",
    "transactions",
    "price_ticks",
    "strategy_state",
    "commands",
)
_TX_HASH_RE: Final = re.compile(r"^0x[0-9a-f]{64}$")
_T = TypeVar("_T")


class JournalError(Exception):
    """A refused or failed journal operation (illegal move, conflict, closed, read-only…)."""


# --- views and inputs -------------------------------------------------------------------


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


_IDENTITY_FIELDS: Final = ("wallet", "from_token", "to_token")
_MUTABLE_FIELDS: Final = (
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


@dataclass(frozen=True)
class PriceTickRow:
    """One price of one token at one time."""

    timestamp: datetime
    token: str
    usd_price: Decimal
    symbol: str | None = None
    native_price: Decimal | None = None


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


# --- canonical identities ---------------------------------------------------------------


def _wallet(text: str) -> str:
    try:
        return str(Address.parse(text))
    except AddressError as exc:
        raise JournalError(f"wallet: {exc}") from None


def _token(text: str, what: str = "token") -> str:
    try:
        return token_key(text)
    except TokenLookupError as exc:
        raise JournalError(f"{what}: {exc}") from None


def _tx_hash(text: str) -> str:
    canonical = text.strip().lower()
    if not canonical.startswith("0x"):
        canonical = "0x" + canonical
    if not _TX_HASH_RE.match(canonical):
        raise JournalError(f"not a transaction hash (0x + 64 hex digits): {text!r}")
    return canonical


def _aware(moment: datetime, what: str = "at") -> datetime:
    try:
        utc_text(moment)
    except (TypeError, ValueError) as exc:
        raise JournalError(f"{what}: {exc}") from None
    return moment.astimezone(UTC)


def _exact(value: Decimal | None, what: str) -> Decimal | None:
    if value is None:
        return None
    try:
        decimal_text(value)
    except (TypeError, ValueError) as exc:
        raise JournalError(f"{what}: {exc}") from None
    return value


def _json(value: Any, what: str) -> str:
    try:
        return encode_json(value)
    except ValueError as exc:
        raise JournalError(f"{what}: {exc}") from None


def _id(value: int | None) -> int:
    if value is None:  # pragma: no cover - a flushed row always has an id
        raise JournalError("row has no id (not flushed)")
    return value


def _canonical_snapshot(snap: OrderSnapshot) -> dict[str, Any]:
    if snap.kind not in ORDER_KINDS:
        raise JournalError(f"order kind must be dca or limit, got {snap.kind!r}")
    if not snap.order_id.strip():
        raise JournalError("order id is empty")
    if not snap.status.strip():
        raise JournalError(f"order {snap.order_id}: status is empty")
    values: dict[str, Any] = {
        "kind": snap.kind,
        "order_id": snap.order_id,
        "status": snap.status,
        "wallet": _wallet(snap.wallet),
        "from_token": _token(snap.from_token, "from_token"),
        "to_token": _token(snap.to_token, "to_token"),
    }
    for name in _MUTABLE_FIELDS:
        value = getattr(snap, name)
        if isinstance(value, datetime):
            value = _aware(value, name)
        elif name.startswith(("amount", "to_amount")) or name.endswith("rate"):
            value = _exact(value, name)
        values[name] = value
    if values["amount_total"] is None:
        raise JournalError(f"order {snap.order_id}: amount_total is required")
    return values


# --- row → view -------------------------------------------------------------------------


def _intent_view(row: Intent, *, existing: bool = False) -> IntentView:
    action = decode_json(row.action_json)
    return IntentView(
        id=_id(row.id),
        strategy=row.strategy,
        wallet=row.wallet,
        kind=row.kind,
        idempotency_key=row.idempotency_key,
        action=action if isinstance(action, dict) else {"value": action},
        created_at=row.created_at,
        state=row.state,
        updated_at=row.updated_at,
        order_id=row.order_id,
        tx_hash=row.tx_hash,
        error=row.error,
        existing=existing,
    )


def _order_view(row: Order) -> OrderView:
    return OrderView(
        kind=row.kind,
        order_id=row.order_id,
        wallet=row.wallet,
        from_token=row.from_token,
        to_token=row.to_token,
        status=row.status,
        amount_total=row.amount_total,
        strategy=row.strategy,
        intent_id=row.intent_id,
        amount_spent=row.amount_spent,
        amount_balance=row.amount_balance,
        to_amount_received=row.to_amount_received,
        rate=row.rate,
        min_rate=row.min_rate,
        max_rate=row.max_rate,
        interval_value=row.interval_value,
        interval_period=row.interval_period,
        orders_total=row.orders_total,
        orders_completed=row.orders_completed,
        expire_at=row.expire_at,
        provider_created_at=row.provider_created_at,
        row_id=_id(row.id),
        created_at=row.created_at,
        updated_at=row.updated_at,
        last_seen_at=row.last_seen_at,
        last_raw_hash=row.last_raw_hash,
    )


def _fill_view(row: Fill) -> FillView:
    return FillView(
        tx_id=row.tx_id,
        type=row.type,
        tx_number=row.tx_number,
        from_amount=row.from_amount,
        to_amount=row.to_amount,
        fee_amount=row.fee_amount,
        time=row.time,
        keeper=row.keeper,
        price_to_per_from=row.price_to_per_from,
        recorded_at=row.recorded_at,
    )


def _tx_view(row: TransactionRecord) -> TransactionView:
    return TransactionView(
        hash=row.hash,
        sender=row.sender,
        sequence_number=row.sequence_number,
        payload_summary=row.payload_summary,
        state=row.state,
        intent_id=row.intent_id,
        gas_used=row.gas_used,
        vm_status=row.vm_status,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _command_view(row: Command) -> CommandView:
    payload = decode_json(row.payload_json)
    return CommandView(
        id=_id(row.id),
        kind=row.kind,
        payload=payload if isinstance(payload, dict) else {"value": payload},
        state=row.state,
        created_at=row.created_at,
        updated_at=row.updated_at,
        result=row.result,
    )


# --- the store --------------------------------------------------------------------------


class Journal:
    """The journal store. Open with `Journal.open(url)`; close with `close()` or `with`."""

    def __init__(self, engine: Engine, *, readonly: bool = False) -> None:
        """Wrap an engine whose database is already at `head` (prefer `Journal.open`)."""
        self._engine: Engine | None = engine
        self._writer = write_engine(engine)
        self.readonly = readonly

    # -- lifecycle --

    @classmethod
    def open(cls, url: str | URL, *, migrate: bool = True, readonly: bool = False) -> Journal:
        """Open the journal at `url`.

        Args:
            url: a SQLAlchemy URL (`[journal].url`, default `sqlite:///data/bot.db`).
            migrate: upgrade the schema to `head` first (the writer does; ignored when
                `readonly`).
            readonly: a second process (`bot orders`, export): reads, plus
                `enqueue_command`. The database must exist and be at `head`.

        Raises:
            JournalError: read-only and the database is missing or not at `head`, or not
                migrating and the schema is not at `head`.
        """
        if readonly:
            path = sqlite_file(url)
            if path is not None and not path.exists():
                raise JournalError(f"no journal at {path} (run `bot journal migrate`)")
        engine = make_engine(url)
        try:
            if migrate and not readonly:
                upgrade_engine(engine)
            else:
                _require_head(engine, url)
        except JournalError:
            engine.dispose()
            raise
        except SQLAlchemyError as exc:
            engine.dispose()
            raise JournalError(f"cannot open journal: {exc}") from exc
        return cls(engine, readonly=readonly)

    def close(self) -> None:
        """Release the database connections. Further calls raise `JournalError`."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def engine(self) -> Engine:
        """The underlying engine (tests and benchmarks; never write through it)."""
        if self._engine is None:
            raise JournalError("journal is closed")
        return self._engine

    @contextmanager
    def _reading(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    @contextmanager
    def _writing(self, *, queue_only: bool = False) -> Iterator[Session]:
        if self.readonly and not queue_only:
            raise JournalError("journal opened read-only: writes go through the command queue")
        self.engine  # noqa: B018 - raises when closed
        with Session(self._writer, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except SQLAlchemyError as exc:
                session.rollback()
                raise JournalError(f"journal write failed: {exc}") from exc
            except BaseException:
                session.rollback()
                raise

    # -- intents --

    def record_intent(
        self,
        strategy: str,
        wallet: str,
        kind: str,
        idempotency_key: str,
        action: Mapping[str, Any],
        *,
        at: datetime,
    ) -> IntentView:
        """Record what a strategy asked for, durably, in state `planned`.

        When (strategy, idempotency_key) is already recorded, the stored intent is returned
        untouched with `existing=True` (the new `action` is not compared or stored).

        Raises:
            JournalError: unknown kind, bad wallet, an action that is not exact JSON.
        """
        if kind not in INTENT_KINDS:
            raise JournalError(f"intent kind {kind!r} is not one of {sorted(INTENT_KINDS)}")
        if not idempotency_key:
            raise JournalError("idempotency key is empty")
        canonical_wallet = _wallet(wallet)
        action_json = _json(dict(action), "action")
        moment = _aware(at)
        with self._writing() as session:
            found = session.exec(
                sm_select(Intent).where(
                    Intent.strategy == strategy, Intent.idempotency_key == idempotency_key
                )
            ).first()
            if found is not None:
                return _intent_view(found, existing=True)
            row = Intent(
                strategy=strategy,
                wallet=canonical_wallet,
                kind=kind,
                idempotency_key=idempotency_key,
                action_json=action_json,
                created_at=moment,
                state="planned",
                updated_at=moment,
            )
            session.add(row)
            session.flush()
            session.add(
                IntentTransition(intent_id=_id(row.id), from_state=None, state="planned", at=moment)
            )
            return _intent_view(row)

    def set_intent_state(
        self,
        intent_id: int,
        state: str,
        *,
        at: datetime,
        detail: str | None = None,
        order_id: str | None = None,
        tx_hash: str | None = None,
        error: str | None = None,
    ) -> IntentView:
        """Move an intent along its state machine and log the move.

        planned → sent | failed; sent → confirmed | failed | unknown;
        unknown → reconciled | failed | confirmed; confirmed, failed, reconciled are final.
        `order_id`, `tx_hash`, `error` are stored when given (never cleared).

        Raises:
            JournalError: unknown intent, or an illegal move (naming both states).
        """
        moment = _aware(at)
        canonical_hash = _tx_hash(tx_hash) if tx_hash is not None else None
        with self._writing() as session:
            row = session.get(Intent, intent_id)
            if row is None:
                raise JournalError(f"no intent {intent_id}")
            if state not in INTENT_MOVES.get(row.state, frozenset()):
                raise JournalError(
                    f"intent {intent_id}: illegal move {row.state} → {state}"
                    + (" (final state)" if row.state in INTENT_FINAL_STATES else "")
                )
            session.add(
                IntentTransition(
                    intent_id=intent_id, from_state=row.state, state=state, at=moment, detail=detail
                )
            )
            row.state = state
            row.updated_at = moment
            if order_id is not None:
                row.order_id = order_id
            if canonical_hash is not None:
                row.tx_hash = canonical_hash
            if error is not None:
                row.error = error
            session.add(row)
            session.flush()
            return _intent_view(row)

    def intent(self, intent_id: int) -> IntentView | None:
        """One intent by id."""
        with self._reading() as session:
            row = session.get(Intent, intent_id)
            return None if row is None else _intent_view(row)

    def intent_by_key(self, strategy: str, idempotency_key: str) -> IntentView | None:
        """One intent by its strategy and idempotency key."""
        with self._reading() as session:
            row = session.exec(
                sm_select(Intent).where(
                    Intent.strategy == strategy, Intent.idempotency_key == idempotency_key
                )
            ).first()
            return None if row is None else _intent_view(row)

    def intents(
        self, states: Iterable[str] | None = None, strategy: str | None = None
    ) -> list[IntentView]:
        """Intents (oldest first), optionally only in `states` / of one strategy."""
        query = sm_select(Intent)
        if states is not None:
            query = query.where(col(Intent.state).in_(list(states)))
        if strategy is not None:
            query = query.where(Intent.strategy == strategy)
        with self._reading() as session:
            return [_intent_view(r) for r in session.exec(query.order_by(col(Intent.id)))]

    def intent_history(self, intent_id: int) -> list[IntentTransitionView]:
        """Every state an intent went through, in order."""
        query = (
            sm_select(IntentTransition)
            .where(IntentTransition.intent_id == intent_id)
            .order_by(col(IntentTransition.id))
        )
        with self._reading() as session:
            return [
                IntentTransitionView(r.intent_id, r.from_state, r.state, r.at, r.detail)
                for r in session.exec(query)
            ]

    def spent_today(
        self,
        strategy: str | None,
        wallet: str,
        token: str,
        day: date,
        *,
        states: Iterable[str] = ("confirmed",),
    ) -> Decimal:
        """Sum of `spend_amount` of the intents created on UTC `day` that spend `token`.

        Contract: an intent's action carries `"spend_token"` (coin type or FA address, any
        spelling) and `"spend_amount"` (a `Decimal`, int or decimal string, human units).
        Intents without them spend nothing. Only intents in `states` count (default:
        confirmed; a risk check may pass `("sent", "unknown", "confirmed")` to count money
        that may be in flight). `strategy=None` sums over every strategy.
        """
        start = datetime.combine(day, time(0), tzinfo=UTC)
        query = sm_select(Intent).where(
            Intent.wallet == _wallet(wallet),
            col(Intent.state).in_(list(states)),
            col(Intent.created_at) >= start,
            col(Intent.created_at) < start + timedelta(days=1),
        )
        if strategy is not None:
            query = query.where(Intent.strategy == strategy)
        wanted = _token(token)
        amounts: list[Decimal] = []
        with self._reading() as session:
            for row in session.exec(query):
                action = decode_json(row.action_json)
                if not isinstance(action, dict):
                    continue
                spend_token, amount = action.get("spend_token"), action.get("spend_amount")
                if not isinstance(spend_token, str) or amount is None:
                    continue
                try:
                    same = token_key(spend_token) == wanted
                except TokenLookupError:
                    continue
                if same:
                    amounts.append(_spend_amount(amount, _id(row.id)))
        return _exact_sum(amounts)

    # -- orders --

    def upsert_order(
        self,
        snapshot: OrderSnapshot,
        *,
        observed_at: datetime,
        source: str,
        raw_hash: str | None = None,
    ) -> OrderChange:
        """Store one observation of an order; append a transition when its status changed.

        Inserting records `None → status`. A repeated observation records nothing new.
        An observation older than the last stored one is ignored (`stale=True`). A `None`
        field never erases a stored value.

        Raises:
            JournalError: bad kind/identities, or an observation whose wallet or tokens
                differ from the stored order's.
        """
        return self.observe_orders(
            [OrderObservation(snapshot, raw_hash)], observed_at=observed_at, source=source
        )[0]

    def observe_orders(
        self, observations: Iterable[OrderObservation], *, observed_at: datetime, source: str
    ) -> list[OrderChange]:
        """`upsert_order` plus `add_fill` for many orders in one transaction (one poll).

        All or nothing: one refused observation rolls the whole batch back.
        """
        moment = _aware(observed_at, "observed_at")
        if not source:
            raise JournalError("observation source is empty")
        prepared = [
            (_canonical_snapshot(o.snapshot), o.raw_hash, [_canonical_fill(f) for f in o.fills])
            for o in observations
        ]
        with self._writing() as session:
            return _observe(session, prepared, moment, source)

    def add_fill(self, kind: str, order_id: str, fill: FillRecord, *, at: datetime) -> bool:
        """Record one fill of a stored order; False when (tx_id, tx_number) is already there.

        Raises:
            JournalError: the order is not in the journal.
        """
        values = _canonical_fill(fill)
        moment = _aware(at)
        with self._writing() as session:
            row = _find_order(session, kind, order_id)
            if row is None:
                raise JournalError(f"no {kind} order {order_id} in the journal")
            row_id = _id(row.id)
            key = (row_id, values["tx_id"], values["tx_number"])
            if key in _fill_keys(session, [row_id]):
                return False
            session.add(Fill(order_row_id=row_id, recorded_at=moment, **values))
            return True

    def order(self, kind: str, order_id: str) -> OrderView | None:
        """One stored order."""
        with self._reading() as session:
            row = _find_order(session, kind, order_id)
            return None if row is None else _order_view(row)

    def orders(
        self,
        *,
        status: Iterable[str] | None = None,
        exclude_status: Iterable[str] | None = None,
        strategy: str | None = None,
        kind: str | None = None,
        wallet: str | None = None,
    ) -> list[OrderView]:
        """Stored orders (oldest first), filtered by status, strategy, kind and wallet."""
        query = sm_select(Order)
        if status is not None:
            query = query.where(col(Order.status).in_(list(status)))
        if exclude_status is not None:
            query = query.where(col(Order.status).not_in(list(exclude_status)))
        if strategy is not None:
            query = query.where(Order.strategy == strategy)
        if kind is not None:
            query = query.where(Order.kind == kind)
        if wallet is not None:
            query = query.where(Order.wallet == _wallet(wallet))
        with self._reading() as session:
            return [_order_view(r) for r in session.exec(query.order_by(col(Order.id)))]

    def transitions(self, kind: str, order_id: str) -> list[OrderTransitionView]:
        """Every recorded status change of an order, oldest first."""
        with self._reading() as session:
            row = _find_order(session, kind, order_id)
            if row is None:
                return []
            query = (
                sm_select(OrderTransition)
                .where(OrderTransition.order_row_id == _id(row.id))
                .order_by(col(OrderTransition.id))
            )
            return [
                OrderTransitionView(t.from_status, t.to_status, t.observed_at, t.source, t.raw_hash)
                for t in session.exec(query)
            ]

    def fills(self, kind: str, order_id: str) -> list[FillView]:
        """Every recorded fill of an order, in recording order."""
        with self._reading() as session:
            row = _find_order(session, kind, order_id)
            if row is None:
                return []
            query = sm_select(Fill).where(Fill.order_row_id == _id(row.id)).order_by(col(Fill.id))
            return [_fill_view(f) for f in session.exec(query)]

    # -- transactions --

    def record_transaction(
        self,
        hash: str,
        sender: str,
        sequence_number: int,
        payload_summary: str,
        *,
        at: datetime,
        intent_id: int | None = None,
        state: str = "signed",
    ) -> TransactionView:
        """Record a signed transaction. Call this BEFORE its bytes are sent.

        Recording the same hash again with the same sender and sequence number returns the
        stored record unchanged.

        Raises:
            JournalError: malformed hash/sender, unknown state, or the hash already
                recorded for another sender/sequence number.
        """
        canonical = _tx_hash(hash)
        canonical_sender = _wallet(sender)
        if state not in TX_STATES:
            raise JournalError(f"transaction state {state!r} is not one of {TX_STATES}")
        if isinstance(sequence_number, bool) or not isinstance(sequence_number, int):
            raise JournalError("sequence number must be an int")
        moment = _aware(at)
        with self._writing() as session:
            found = session.exec(
                sm_select(TransactionRecord).where(TransactionRecord.hash == canonical)
            ).first()
            if found is not None:
                if (found.sender, found.sequence_number) != (canonical_sender, sequence_number):
                    raise JournalError(
                        f"transaction {canonical} already recorded for "
                        f"{found.sender} #{found.sequence_number}"
                    )
                return _tx_view(found)
            row = TransactionRecord(
                hash=canonical,
                intent_id=intent_id,
                sender=canonical_sender,
                sequence_number=sequence_number,
                payload_summary=payload_summary,
                state=state,
                created_at=moment,
                updated_at=moment,
            )
            session.add(row)
            session.flush()
            return _tx_view(row)

    def update_transaction(
        self,
        hash: str,
        state: str,
        *,
        at: datetime,
        gas_used: int | None = None,
        vm_status: str | None = None,
    ) -> TransactionView:
        """Record what became of a transaction.

        committed, failed and expired are final: a final record may be repeated (to add
        gas or vm_status) but not moved to another state.

        Raises:
            JournalError: unknown hash or state, or a move out of a final state.
        """
        canonical = _tx_hash(hash)
        if state not in TX_STATES:
            raise JournalError(f"transaction state {state!r} is not one of {TX_STATES}")
        moment = _aware(at)
        with self._writing() as session:
            row = session.exec(
                sm_select(TransactionRecord).where(TransactionRecord.hash == canonical)
            ).first()
            if row is None:
                raise JournalError(f"no transaction {canonical} in the journal")
            if row.state in TX_FINAL_STATES and state != row.state:
                raise JournalError(
                    f"transaction {canonical}: illegal move {row.state} → {state} (final state)"
                )
            row.state = state
            row.updated_at = moment
            if gas_used is not None:
                row.gas_used = gas_used
            if vm_status is not None:
                row.vm_status = vm_status
            session.add(row)
            session.flush()
            return _tx_view(row)

    def transaction(self, hash: str) -> TransactionView | None:
        """One transaction by hash."""
        canonical = _tx_hash(hash)
        with self._reading() as session:
            row = session.exec(
                sm_select(TransactionRecord).where(TransactionRecord.hash == canonical)
            ).first()
            return None if row is None else _tx_view(row)

    def transactions(
        self, intent_id: int | None = None, states: Iterable[str] | None = None
    ) -> list[TransactionView]:
        """Recorded transactions (oldest first), optionally of one intent / in `states`."""
        query = sm_select(TransactionRecord)
        if intent_id is not None:
            query = query.where(TransactionRecord.intent_id == intent_id)
        if states is not None:
            query = query.where(col(TransactionRecord.state).in_(list(states)))
        with self._reading() as session:
            return [_tx_view(r) for r in session.exec(query.order_by(col(TransactionRecord.id)))]

    # -- price ticks --

    def add_price_ticks(self, rows: Iterable[PriceTickRow]) -> tuple[int, int]:
        """Store prices; a (token, timestamp) already stored is skipped.

        Returns:
            (inserted, duplicates skipped).
        """
        prepared = []
        for tick in rows:
            usd = _exact(tick.usd_price, "usd_price")
            assert usd is not None
            prepared.append(
                PriceTick(
                    timestamp=_aware(tick.timestamp, "timestamp"),
                    token=_token(tick.token),
                    symbol=tick.symbol,
                    usd_price=usd,
                    native_price=_exact(tick.native_price, "native_price"),
                )
            )
        inserted = skipped = 0
        with self._writing() as session:
            for tick_row in prepared:
                exists = session.exec(
                    sm_select(col(PriceTick.id)).where(
                        PriceTick.token == tick_row.token, PriceTick.timestamp == tick_row.timestamp
                    )
                ).first()
                if exists is not None:
                    skipped += 1
                    continue
                session.add(tick_row)
                session.flush()
                inserted += 1
        return inserted, skipped

    def price_ticks(
        self, token: str, since: datetime | None = None, until: datetime | None = None
    ) -> list[PriceTickRow]:
        """Prices of one token with `since <= timestamp < until`, oldest first."""
        query = sm_select(PriceTick).where(PriceTick.token == _token(token))
        if since is not None:
            query = query.where(col(PriceTick.timestamp) >= _aware(since, "since"))
        if until is not None:
            query = query.where(col(PriceTick.timestamp) < _aware(until, "until"))
        with self._reading() as session:
            return [
                PriceTickRow(r.timestamp, r.token, r.usd_price, r.symbol, r.native_price)
                for r in session.exec(query.order_by(col(PriceTick.timestamp)))
            ]

    def prune_price_ticks(self, before: datetime) -> int:
        """Delete every price older than `before`; returns how many were deleted."""
        moment = _aware(before, "before")
        with self._writing() as session:
            result = session.exec(delete(PriceTick).where(col(PriceTick.timestamp) < moment))
            return int(result.rowcount)

    # -- strategy state --

    def get_state(self, strategy: str, key: str, default: Any = None) -> Any:
        """A strategy's stored value (Decimals and datetimes come back as such), or default."""
        with self._reading() as session:
            row = session.get(StrategyState, (strategy, key))
            return default if row is None else decode_json(row.value_json)

    def set_state(self, strategy: str, key: str, value: Any, *, at: datetime) -> None:
        """Store a JSON value for (strategy, key).

        `Decimal`s are stored tagged (`{"$decimal": "1.5"}`) and read back exactly; floats
        are refused (see `bot.journal.codec`).
        """
        value_json = _json(value, f"state {strategy}.{key}")
        moment = _aware(at)
        with self._writing() as session:
            row = session.get(StrategyState, (strategy, key))
            if row is None:
                row = StrategyState(
                    strategy=strategy, key=key, value_json=value_json, updated_at=moment
                )
            else:
                row.value_json = value_json
                row.updated_at = moment
            session.add(row)

    def delete_state(self, strategy: str, key: str) -> bool:
        """Forget one key; True when it existed."""
        with self._writing() as session:
            row = session.get(StrategyState, (strategy, key))
            if row is None:
                return False
            session.delete(row)
            return True

    def state_keys(self, strategy: str) -> list[str]:
        """The keys a strategy has stored, sorted."""
        query = (
            sm_select(StrategyState)
            .where(StrategyState.strategy == strategy)
            .order_by(col(StrategyState.key))
        )
        with self._reading() as session:
            return [r.key for r in session.exec(query)]

    # -- commands --

    def enqueue_command(self, kind: str, payload: Mapping[str, Any], *, at: datetime) -> int:
        """Queue a request for the daemon (allowed on a read-only journal); returns its id."""
        if not kind:
            raise JournalError("command kind is empty")
        payload_json = _json(dict(payload), "command payload")
        moment = _aware(at)
        with self._writing(queue_only=True) as session:
            row = Command(
                created_at=moment,
                kind=kind,
                payload_json=payload_json,
                state="queued",
                updated_at=moment,
            )
            session.add(row)
            session.flush()
            return _id(row.id)

    def take_command(self, *, at: datetime) -> CommandView | None:
        """Take the oldest queued command (marks it `taken`), or None.

        Atomic: the write transaction holds SQLite's write lock from its start, so two
        takers never get the same command.
        """
        moment = _aware(at)
        with self._writing() as session:
            row = session.exec(
                sm_select(Command)
                .where(Command.state == "queued")
                .order_by(col(Command.id))
                .limit(1)
                .with_for_update(skip_locked=True)
            ).first()
            if row is None:
                return None
            row.state = "taken"
            row.updated_at = moment
            session.add(row)
            session.flush()
            return _command_view(row)

    def finish_command(
        self, command_id: int, ok: bool, result: str | None = None, *, at: datetime
    ) -> CommandView:
        """Mark a taken command `done` (ok) or `failed`, with a result text.

        Raises:
            JournalError: unknown command, or one that is not `taken`.
        """
        moment = _aware(at)
        with self._writing() as session:
            row = session.get(Command, command_id)
            if row is None:
                raise JournalError(f"no command {command_id}")
            if row.state != "taken":
                raise JournalError(f"command {command_id} is {row.state}, not taken")
            row.state = "done" if ok else "failed"
            row.result = result
            row.updated_at = moment
            session.add(row)
            session.flush()
            return _command_view(row)

    def command(self, command_id: int) -> CommandView | None:
        """One command by id."""
        with self._reading() as session:
            row = session.get(Command, command_id)
            return None if row is None else _command_view(row)

    def commands(self, states: Iterable[str] | None = None) -> list[CommandView]:
        """Commands (oldest first), optionally only in `states`."""
        query = sm_select(Command)
        if states is not None:
            query = query.where(col(Command.state).in_(list(states)))
        with self._reading() as session:
            return [_command_view(r) for r in session.exec(query.order_by(col(Command.id)))]

    # -- export --

    def export(
        self,
        format: Literal["csv", "json"],
        out: TextIO,
        tables: Iterable[str] | None = None,
    ) -> dict[str, int]:
        """Write tables with their stored values (exact text) to `out`.

        CSV: per table a line `# table <name>`, a header line, the rows, a blank line;
        NULL is an empty field. JSON: `{"<table>": [{column: value, …}, …], …}`; TEXT
        columns are strings, integer columns numbers, NULL is null.

        Returns:
            rows written per table.

        Raises:
            JournalError: an unknown format or table name.
        """
        names = list(EXPORT_TABLES if tables is None else tables)
        unknown = [n for n in names if n not in EXPORT_TABLES]
        if unknown:
            raise JournalError(f"unknown tables {unknown}; known: {', '.join(EXPORT_TABLES)}")
        if format not in ("csv", "json"):
            raise JournalError(f"export format must be csv or json, got {format!r}")
        counts: dict[str, int] = {}
        data: dict[str, list[dict[str, Any]]] = {}
        writer = csv.writer(out, lineterminator="\n")
        with self.engine.connect() as conn:
            for name in names:
                table = journal_metadata.tables[name]
                columns = [
                    type_coerce(c, Text()).label(c.name) if isinstance(c.type, TypeDecorator) else c
                    for c in table.columns
                ]
                query = select(*columns).order_by(*table.primary_key.columns)
                rows = conn.execute(query).all()
                counts[name] = len(rows)
                header = [c.name for c in table.columns]
                if format == "csv":
                    out.write(f"# table {name}\n")
                    writer.writerow(header)
                    for row in rows:
                        writer.writerow(["" if v is None else v for v in row])
                    out.write("\n")
                else:
                    data[name] = [dict(zip(header, row, strict=True)) for row in rows]
        if format == "json":
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.write("\n")
        return counts


# --- helpers that run inside a write transaction ----------------------------------------


def _spend_amount(value: object, intent_id: int) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        raise JournalError(f"intent {intent_id}: spend_amount {value!r} is not exact")
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise JournalError(f"intent {intent_id}: spend_amount {value!r} is not a number") from None
    if not amount.is_finite():
        raise JournalError(f"intent {intent_id}: spend_amount {value!r} is not finite")
    return amount


def _exact_sum(amounts: Sequence[Decimal]) -> Decimal:
    """Sum without rounding (the default 28-digit context would round large sums)."""
    if not amounts:
        return Decimal(0)
    highest = max(a.adjusted() for a in amounts) + len(str(len(amounts))) + 1
    lowest = min(int(a.as_tuple().exponent) for a in amounts)
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, highest - lowest + 2)
        ctx.traps[Inexact] = True
        return sum(amounts, Decimal(0))


def _require_head(engine: Engine, url: str | URL) -> None:
    current = engine_revision(engine)
    head = head_revision()
    if current != head:
        raise JournalError(
            f"journal at {url} is at revision {current or 'none (empty)'}, this bot needs "
            f"{head}: run `bot journal migrate`"
        )


def _find_order(session: Session, kind: str, order_id: str) -> Order | None:
    return session.exec(
        sm_select(Order).where(Order.kind == kind, Order.order_id == order_id)
    ).first()


def _canonical_fill(fill: FillRecord) -> dict[str, Any]:
    if not fill.tx_id:
        raise JournalError("fill tx_id is empty")
    return {
        "tx_id": fill.tx_id,
        "tx_number": fill.tx_number,
        "type": fill.type,
        "from_amount": _exact(fill.from_amount, "from_amount"),
        "to_amount": _exact(fill.to_amount, "to_amount"),
        "fee_amount": _exact(fill.fee_amount, "fee_amount"),
        "time": None if fill.time is None else _aware(fill.time, "time"),
        "keeper": None if fill.keeper is None else _wallet(fill.keeper),
        "price_to_per_from": _exact(fill.price_to_per_from, "price_to_per_from"),
    }


_CHUNK: Final = 500
"""Rows per `IN (…)` query (well under SQLite's bound-parameter limit)."""


def _chunks(items: Sequence[_T]) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _load_orders(session: Session, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Order]:
    by_kind: dict[str, list[str]] = {}
    for kind, order_id in keys:
        by_kind.setdefault(kind, []).append(order_id)
    found: dict[tuple[str, str], Order] = {}
    for kind, ids in by_kind.items():
        for chunk in _chunks(sorted(set(ids))):
            query = sm_select(Order).where(Order.kind == kind, col(Order.order_id).in_(chunk))
            for row in session.exec(query):
                found[(row.kind, row.order_id)] = row
    return found


def _transition_keys(
    session: Session, row_ids: Sequence[int]
) -> set[tuple[int, str | None, str, str | None]]:
    keys: set[tuple[int, str | None, str, str | None]] = set()
    for chunk in _chunks(sorted(set(row_ids))):
        query = sm_select(OrderTransition).where(col(OrderTransition.order_row_id).in_(chunk))
        keys.update(
            (t.order_row_id, t.from_status, t.to_status, t.raw_hash) for t in session.exec(query)
        )
    return keys


def _fill_keys(session: Session, row_ids: Sequence[int]) -> set[tuple[int, str, int | None]]:
    # Compared in Python: NULL tx_numbers are distinct to the UNIQUE constraint.
    keys: set[tuple[int, str, int | None]] = set()
    for chunk in _chunks(sorted(set(row_ids))):
        query = sm_select(Fill).where(col(Fill.order_row_id).in_(chunk))
        keys.update((f.order_row_id, f.tx_id, f.tx_number) for f in session.exec(query))
    return keys


@dataclass
class _Step:
    """One observation's effect, completed once the new rows have ids."""

    row: Order
    created: bool
    from_status: str | None
    to_status: str
    raw_hash: str | None
    changed: tuple[str, ...]
    fills: list[dict[str, Any]]
    stale: bool = False
    transition: bool = False
    fills_added: int = 0


def _apply(row: Order, values: dict[str, Any], at: datetime, raw_hash: str | None) -> _Step:
    for name in _IDENTITY_FIELDS:
        if getattr(row, name) != values[name]:
            raise JournalError(
                f"{row.kind} order {row.order_id}: {name} {values[name]} differs from the "
                f"recorded {getattr(row, name)}"
            )
    if at < row.last_seen_at:
        return _Step(row, False, row.status, row.status, raw_hash, (), [], stale=True)
    changed: list[str] = []
    for name in _MUTABLE_FIELDS:
        new = values[name]
        if new is not None and getattr(row, name) != new:
            setattr(row, name, new)
            changed.append(name)
    from_status = row.status
    if values["status"] != from_status:
        row.status = values["status"]
        changed.append("status")
    if changed:
        row.updated_at = at
    if row.last_seen_at != at:
        row.last_seen_at = at
    if raw_hash is not None and row.last_raw_hash != raw_hash:
        row.last_raw_hash = raw_hash
    return _Step(row, False, from_status, row.status, raw_hash, tuple(changed), [])


def _observe(
    session: Session,
    prepared: Sequence[tuple[dict[str, Any], str | None, list[dict[str, Any]]]],
    at: datetime,
    source: str,
) -> list[OrderChange]:
    """Apply observations in bulk: load known rows, update, insert, then log and fill."""
    with session.no_autoflush:
        known = _load_orders(session, ((v["kind"], v["order_id"]) for v, _, _ in prepared))
        steps: list[_Step] = []
        for values, raw_hash, fills in prepared:
            key = (values["kind"], values["order_id"])
            row = known.get(key)
            if row is None:
                row = Order(
                    created_at=at, updated_at=at, last_seen_at=at, last_raw_hash=raw_hash, **values
                )
                session.add(row)
                known[key] = row
                changed = tuple(k for k, v in values.items() if v is not None)
                step = _Step(row, True, None, row.status, raw_hash, changed, [])
            else:
                step = _apply(row, values, at, raw_hash)
            if not step.stale:
                step.fills = fills
            steps.append(step)
    session.flush()  # new rows get their ids
    moving = [s for s in steps if s.from_status != s.to_status or s.created]
    seen_transitions = _transition_keys(session, [_id(s.row.id) for s in moving if not s.created])
    seen_fills = _fill_keys(session, [_id(s.row.id) for s in steps if s.fills and not s.created])
    for step in steps:
        row_id = _id(step.row.id)
        if step.created or step.from_status != step.to_status:
            transition_key = (row_id, step.from_status, step.to_status, step.raw_hash)
            if transition_key not in seen_transitions:
                seen_transitions.add(transition_key)
                session.add(
                    OrderTransition(
                        order_row_id=row_id,
                        from_status=step.from_status,
                        to_status=step.to_status,
                        observed_at=at,
                        source=source,
                        raw_hash=step.raw_hash,
                    )
                )
                step.transition = True
        for fill in step.fills:
            fill_key = (row_id, fill["tx_id"], fill["tx_number"])
            if fill_key not in seen_fills:
                seen_fills.add(fill_key)
                session.add(Fill(order_row_id=row_id, recorded_at=at, **fill))
                step.fills_added += 1
    return [
        OrderChange(
            kind=s.row.kind,
            order_id=s.row.order_id,
            row_id=_id(s.row.id),
            created=s.created,
            from_status=s.from_status,
            to_status=s.to_status,
            transition_recorded=s.transition,
            changed_fields=s.changed,
            fills_added=s.fills_added,
            stale=s.stale,
        )
        for s in steps
    ]
