"""One page of fills across orders, newest first (the console's `/fills`).

`fills_page(journal, …)` filters by strategy, order, kind, record type and a window on
the fill's time (its recorded time when the provider gave none), and pages by the fill's
row id: `before_row_id` is the previous page's last `row_id`, so a page stays put while
new fills arrive. Two indexed queries (a count and a page), whatever the journal's size.
A journal opened for one wallet sees that wallet's orders' fills only. Read-only; a
read-only journal may use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_
from sqlmodel import Session, col
from sqlmodel import select as sm_select

from bot.journal.base import JournalBase
from bot.journal.models import Fill, Order
from bot.journal.views import FillView

__all__ = ["FillOfOrder", "FillQuery", "fills_page"]


@dataclass(frozen=True)
class FillQuery:
    """Which fills: each filter None matches all; `start` ≤ time < `end`."""

    strategy: str | None = None
    order_id: str | None = None
    kind: str | None = None
    type: str | None = None
    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True)
class FillOfOrder:
    """One fill with what it belongs to: its order's kind, id, strategy and tokens."""

    row_id: int
    kind: str
    order_id: str
    strategy: str | None
    from_token: str
    to_token: str
    fill: FillView


def _filters(journal: JournalBase, query: FillQuery) -> list[Any]:
    wallet = journal.wallet  # a journal opened for one wallet sees its own
    found: list[Any] = [] if wallet is None else [Order.wallet == wallet]
    if query.strategy is not None:
        found.append(Order.strategy == query.strategy)
    if query.order_id is not None:
        found.append(Order.order_id == query.order_id)
    if query.kind is not None:
        found.append(Order.kind == query.kind)
    if query.type is not None:
        found.append(Fill.type == query.type)
    timed, untimed = col(Fill.time).is_not(None), col(Fill.time).is_(None)
    if query.start is not None:
        found.append(
            or_(
                and_(timed, col(Fill.time) >= query.start),
                and_(untimed, col(Fill.recorded_at) >= query.start),
            )
        )
    if query.end is not None:
        found.append(
            or_(
                and_(timed, col(Fill.time) < query.end),
                and_(untimed, col(Fill.recorded_at) < query.end),
            )
        )
    return found


def fills_page(
    journal: JournalBase, query: FillQuery, *, before_row_id: int | None = None, limit: int = 50
) -> tuple[list[FillOfOrder], int]:
    """The newest `limit` fills matching `query` (below `before_row_id`), and how many match."""
    filters = _filters(journal, query)
    joined = col(Fill.order_row_id) == col(Order.id)
    with Session(journal.engine) as session:
        counted = sm_select(func.count()).select_from(Fill).join(Order, joined).where(*filters)
        total = int(session.exec(counted).one())
        if before_row_id is not None:
            filters.append(col(Fill.id) < before_row_id)
        rows = session.exec(
            sm_select(Fill, Order)
            .join(Order, joined)
            .where(*filters)
            .order_by(col(Fill.id).desc())
            .limit(limit)
        ).all()
        found = [
            FillOfOrder(
                row_id=int(fill.id or 0),
                kind=order.kind,
                order_id=order.order_id,
                strategy=order.strategy,
                from_token=order.from_token,
                to_token=order.to_token,
                fill=FillView(
                    tx_id=fill.tx_id,
                    type=fill.type,
                    tx_number=fill.tx_number,
                    from_amount=fill.from_amount,
                    to_amount=fill.to_amount,
                    fee_amount=fill.fee_amount,
                    time=fill.time,
                    keeper=fill.keeper,
                    price_to_per_from=fill.price_to_per_from,
                    from_amount_usd=fill.from_amount_usd,
                    to_amount_usd=fill.to_amount_usd,
                    fee_amount_usd=fill.fee_amount_usd,
                    recorded_at=fill.recorded_at,
                ),
            )
            for fill, order in rows
        ]
        return found, total
