"""Applying order observations in bulk, inside one write transaction.

One poll observes many orders: known rows are loaded with a few `IN (…)` queries, updated
or inserted, then status transitions and fills are appended, each only once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, TypeVar

from sqlmodel import Session, col
from sqlmodel import select as sm_select

from bot.journal import canon
from bot.journal.errors import JournalError
from bot.journal.models import Fill, Order, OrderTransition
from bot.journal.views import ORDER_IDENTITY_FIELDS, ORDER_MUTABLE_FIELDS, OrderChange

__all__ = ["Prepared", "fill_keys", "observe"]

_T = TypeVar("_T")

Prepared = tuple[dict[str, Any], str | None, list[dict[str, Any]]]
"""One canonical observation: snapshot columns, raw record hash, canonical fills."""

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


def fill_keys(session: Session, row_ids: Sequence[int]) -> set[tuple[int, str, int | None]]:
    """The (order row, tx_id, tx_number) of the fills already stored for `row_ids`.

    Compared in Python: NULL tx_numbers are distinct to the UNIQUE constraint.
    """
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
    for name in ORDER_IDENTITY_FIELDS:
        if getattr(row, name) != values[name]:
            raise JournalError(
                f"{row.kind} order {row.order_id}: {name} {values[name]} differs from the "
                f"recorded {getattr(row, name)}"
            )
    if at < row.last_seen_at:
        return _Step(row, False, row.status, row.status, raw_hash, (), [], stale=True)
    changed: list[str] = []
    for name in ORDER_MUTABLE_FIELDS:
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


def observe(
    session: Session,
    prepared: Sequence[Prepared],
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
    seen_fills = fill_keys(
        session, [canon.row_id(s.row.id) for s in steps if s.fills and not s.created]
    )
    for step in steps:
        row_id = canon.row_id(step.row.id)
        # Every change of the stored status is logged, so the log is a chain ending at
        # the current status. A repeated observation changes nothing and logs nothing.
        if step.created or step.from_status != step.to_status:
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
            row_id=canon.row_id(s.row.id),
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
