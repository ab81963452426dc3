"""Provider orders (DCA and limit): observed snapshots, status transitions and fills.

Observations are canonicalised here and applied in bulk by `bot.journal.observe`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

from sqlalchemy import func
from sqlmodel import Session, col
from sqlmodel import select as sm_select

from bot.domain import OrderKind
from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.errors import JournalError
from bot.journal.models import Fill, Order, OrderTransition
from bot.journal.observe import fill_keys, observe
from bot.journal.views import (
    ORDER_MUTABLE_FIELDS,
    FillRecord,
    FillView,
    OrderChange,
    OrderObservation,
    OrderSnapshot,
    OrderTransitionView,
    OrderView,
)

__all__ = ["ORDER_KINDS", "OrdersMixin"]

ORDER_KINDS: Final = frozenset(OrderKind)


class OrdersMixin(JournalBase):
    """Storing order observations and fills, and reading orders back."""

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

        All or nothing: one refused observation rolls the whole batch back (an order of
        another wallet than the one this journal is opened for is refused).
        """
        moment = canon.aware(observed_at, "observed_at")
        if not source:
            raise JournalError("observation source is empty")
        prepared = [
            (_canonical_snapshot(o.snapshot), o.raw_hash, [_canonical_fill(f) for f in o.fills])
            for o in observations
        ]
        if self.wallet is not None:  # the snapshots' wallets are canonical already
            for values, _, _ in prepared:
                if values["wallet"] != self.wallet:
                    what = f"{values['kind']} order {values['order_id']}"
                    self._require_own(values["wallet"], what)
        with self._writing() as session:
            return observe(session, prepared, moment, source)

    def add_fill(self, kind: str, order_id: str, fill: FillRecord, *, at: datetime) -> bool:
        """Record one fill of a stored order; False when (tx_id, tx_number) is already there.

        Raises:
            JournalError: the order is not in the journal.
        """
        values = _canonical_fill(fill)
        moment = canon.aware(at)
        with self._writing() as session:
            row = self._find_order(session, kind, order_id)
            if row is None:
                raise JournalError(f"no {kind} order {order_id} in the journal")
            row_id = canon.row_id(row.id)
            key = (row_id, values["tx_id"], values["tx_number"])
            if key in fill_keys(session, [row_id]):
                return False
            session.add(Fill(order_row_id=row_id, recorded_at=moment, **values))
            return True

    def order(self, kind: str, order_id: str) -> OrderView | None:
        """One stored order."""
        with self._reading() as session:
            row = self._find_order(session, kind, order_id)
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
        """Stored orders (oldest first), filtered by status, strategy, kind and wallet.

        A journal opened for a wallet lists that wallet's only, whatever `wallet` says.
        """
        query = sm_select(Order).where(*self._scoped(Order.wallet))
        if status is not None:
            query = query.where(col(Order.status).in_(list(status)))
        if exclude_status is not None:
            query = query.where(col(Order.status).not_in(list(exclude_status)))
        if strategy is not None:
            query = query.where(Order.strategy == strategy)
        if kind is not None:
            query = query.where(Order.kind == kind)
        if wallet is not None:
            query = query.where(Order.wallet == canon.wallet(wallet))
        with self._reading() as session:
            return [_order_view(r) for r in session.exec(query.order_by(col(Order.id)))]

    def orders_page(
        self,
        *,
        status: Iterable[str] | None = None,
        strategy: str | None = None,
        kind: str | None = None,
        before_row_id: int | None = None,
        limit: int = 50,
    ) -> tuple[list[OrderView], int]:
        """One page of stored orders, newest first, and how many match the filters.

        `before_row_id`: only orders stored before that row (the previous page's last
        `row_id`), so a page stays put while new orders arrive. Two indexed queries: a
        page of a large journal costs what its rows cost, not the whole table.
        """
        filters: list[Any] = self._scoped(Order.wallet)
        if status is not None:
            filters.append(col(Order.status).in_(list(status)))
        if strategy is not None:
            filters.append(Order.strategy == strategy)
        if kind is not None:
            filters.append(Order.kind == kind)
        with self._reading() as session:
            total = session.exec(sm_select(func.count()).select_from(Order).where(*filters)).one()
            if before_row_id is not None:
                filters.append(col(Order.id) < before_row_id)
            query = sm_select(Order).where(*filters).order_by(col(Order.id).desc()).limit(limit)
            return [_order_view(r) for r in session.exec(query)], int(total)

    def order_index(self, kind: str, wallet: str) -> dict[str, tuple[str, str | None]]:
        """Every stored order of one kind and wallet: order id → (status, last raw hash).

        A light query (three columns), for the tracker to tell changed records from
        unchanged ones without loading whole rows.
        """
        query = sm_select(Order.order_id, Order.status, Order.last_raw_hash).where(
            Order.kind == kind, Order.wallet == canon.wallet(wallet), *self._scoped(Order.wallet)
        )
        with self._reading() as session:
            return {order_id: (status, raw) for order_id, status, raw in session.exec(query)}

    def transitions(self, kind: str, order_id: str) -> list[OrderTransitionView]:
        """Every recorded status change of an order, oldest first."""
        with self._reading() as session:
            row = self._find_order(session, kind, order_id)
            if row is None:
                return []
            query = (
                sm_select(OrderTransition)
                .where(OrderTransition.order_row_id == canon.row_id(row.id))
                .order_by(col(OrderTransition.id))
            )
            return [
                OrderTransitionView(t.from_status, t.to_status, t.observed_at, t.source, t.raw_hash)
                for t in session.exec(query)
            ]

    def fills(self, kind: str, order_id: str) -> list[FillView]:
        """Every recorded fill of an order, in recording order."""
        with self._reading() as session:
            row = self._find_order(session, kind, order_id)
            if row is None:
                return []
            query = (
                sm_select(Fill)
                .where(Fill.order_row_id == canon.row_id(row.id))
                .order_by(col(Fill.id))
            )
            return [_fill_view(f) for f in session.exec(query)]

    def _find_order(self, session: Session, kind: str, order_id: str) -> Order | None:
        query = sm_select(Order).where(
            Order.kind == kind, Order.order_id == order_id, *self._scoped(Order.wallet)
        )
        return session.exec(query).first()

    def fills_by_order(self, strategy: str) -> dict[tuple[str, str], list[FillView]]:
        """The fills of all of a strategy's orders, in one query: (kind, id) → fills.

        For the engine, which hands every tick a strategy's orders with their fills.
        """
        query = (
            sm_select(Order.kind, Order.order_id, Fill)
            .join(Fill, col(Fill.order_row_id) == col(Order.id))
            .where(Order.strategy == strategy, *self._scoped(Order.wallet))
            .order_by(col(Fill.id))
        )
        found: dict[tuple[str, str], list[FillView]] = {}
        with self._reading() as session:
            for kind, order_id, fill in session.exec(query):
                found.setdefault((kind, order_id), []).append(_fill_view(fill))
        return found


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
        "wallet": canon.wallet(snap.wallet),
        "from_token": canon.token(snap.from_token, "from_token"),
        "to_token": canon.token(snap.to_token, "to_token"),
    }
    for name in ORDER_MUTABLE_FIELDS:
        value = getattr(snap, name)
        if isinstance(value, datetime):
            value = canon.aware(value, name)
        elif name.startswith(("amount", "to_amount")) or name.endswith("rate"):
            value = canon.exact(value, name)
        values[name] = value
    if values["amount_total"] is None:
        raise JournalError(f"order {snap.order_id}: amount_total is required")
    return values


def _canonical_fill(fill: FillRecord) -> dict[str, Any]:
    if not fill.tx_id:
        raise JournalError("fill tx_id is empty")
    return {
        "tx_id": fill.tx_id,
        "tx_number": fill.tx_number,
        "type": fill.type,
        "from_amount": canon.exact(fill.from_amount, "from_amount"),
        "to_amount": canon.exact(fill.to_amount, "to_amount"),
        "fee_amount": canon.exact(fill.fee_amount, "fee_amount"),
        "time": None if fill.time is None else canon.aware(fill.time, "time"),
        "keeper": None if fill.keeper is None else canon.wallet(fill.keeper),
        "price_to_per_from": canon.exact(fill.price_to_per_from, "price_to_per_from"),
        "from_amount_usd": _usd(fill.from_amount_usd),
        "to_amount_usd": _usd(fill.to_amount_usd),
        "fee_amount_usd": _usd(fill.fee_amount_usd),
    }


def _usd(value: Decimal | None) -> Decimal | None:
    """The provider's USD value when it is a usable amount, else None.

    Untrusted display data: a negative or unstorable value is dropped, never a reason to
    refuse the fill it came with.
    """
    if value is None or not value.is_finite() or value < 0:
        return None
    try:
        return canon.exact(value, "usd")
    except JournalError:
        return None


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
        row_id=canon.row_id(row.id),
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
        from_amount_usd=row.from_amount_usd,
        to_amount_usd=row.to_amount_usd,
        fee_amount_usd=row.fee_amount_usd,
        recorded_at=row.recorded_at,
    )
