"""The journal's frozen views as the console's models, exact; paging by cursor.

Pure functions: no I/O. Paging is newest first; a cursor is the text of the last row's
journal id, so a page stays stable while new rows arrive.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Final, Generic, TypeVar

from bot.console.models import (
    FillModel,
    FillOfOrderModel,
    IntentModel,
    IntentTransitionModel,
    OrderModel,
    PriceModel,
    TransactionModel,
    TransitionModel,
)
from bot.journal.fill_pages import FillOfOrder
from bot.journal.views import (
    FillView,
    IntentTransitionView,
    IntentView,
    OrderTransitionView,
    OrderView,
    PriceTickRow,
    TransactionView,
)
from bot.money import format_decimal

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "Page",
    "Symbol",
    "fill_model",
    "fill_of_order_model",
    "intent_model",
    "money",
    "order_model",
    "page",
    "plain",
    "price_model",
    "transaction_model",
    "transition_model",
]

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 500
"""The most rows one page holds (a larger `limit` is refused with 422)."""

Row = TypeVar("Row")
Symbol = Callable[[str], str | None]
"""A token's symbol for people to read, or None (`ConsoleSources.symbol`)."""


def _no_symbol(token: str) -> str | None:
    return None


def money(value: Decimal | None) -> str | None:
    """An exact decimal as text (no exponent), or None."""
    return None if value is None else format_decimal(value)


def plain(value: Any) -> Any:
    """JSON-ready data with every `Decimal` as exact text and times in ISO-8601 UTC."""
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


@dataclass(frozen=True)
class Page(Generic[Row]):
    """One page: its rows, how many match in all, the cursor of the next page."""

    items: list[Row]
    total: int
    next_cursor: str | None


def page(
    rows: Sequence[Row], key: Callable[[Row], int], *, cursor: int | None, limit: int
) -> Page[Row]:
    """Rows newest first (by `key`, descending), those below `cursor`, at most `limit`."""
    ordered = sorted(rows, key=key, reverse=True)
    start = ordered if cursor is None else [r for r in ordered if key(r) < cursor]
    chosen = start[:limit]
    more = len(start) > limit
    return Page(chosen, len(rows), str(key(chosen[-1])) if more and chosen else None)


def order_model(order: OrderView, symbol: Symbol = _no_symbol) -> OrderModel:
    """One stored order (its tokens named by `symbol` beside their exact identities)."""
    return OrderModel(
        kind=order.kind,
        order_id=order.order_id,
        strategy=order.strategy,
        wallet=order.wallet,
        from_token=order.from_token,
        to_token=order.to_token,
        from_symbol=symbol(order.from_token),
        to_symbol=symbol(order.to_token),
        status=order.status,
        amount_total=format_decimal(order.amount_total),
        amount_spent=money(order.amount_spent),
        amount_balance=money(order.amount_balance),
        to_amount_received=money(order.to_amount_received),
        rate=money(order.rate),
        min_rate=money(order.min_rate),
        max_rate=money(order.max_rate),
        interval_value=order.interval_value,
        interval_period=order.interval_period,
        orders_total=order.orders_total,
        orders_completed=order.orders_completed,
        expire_at=order.expire_at,
        provider_created_at=order.provider_created_at,
        intent_id=order.intent_id,
        created_at=order.created_at,
        updated_at=order.updated_at,
        last_seen_at=order.last_seen_at,
    )


def transition_model(t: OrderTransitionView) -> TransitionModel:
    """One status change of an order."""
    return TransitionModel(
        from_status=t.from_status, to_status=t.to_status, observed_at=t.observed_at, source=t.source
    )


def fill_model(fill: FillView) -> FillModel:
    """One fill record of an order."""
    return FillModel(
        tx_id=fill.tx_id,
        type=fill.type,
        tx_number=fill.tx_number,
        from_amount=money(fill.from_amount),
        to_amount=money(fill.to_amount),
        fee_amount=money(fill.fee_amount),
        time=fill.time,
        keeper=fill.keeper,
        price_to_per_from=money(fill.price_to_per_from),
        recorded_at=fill.recorded_at,
    )


def fill_of_order_model(found: FillOfOrder, symbol: Symbol = _no_symbol) -> FillOfOrderModel:
    """One fill with its order's kind, id, strategy and tokens."""
    return FillOfOrderModel(
        **fill_model(found.fill).model_dump(),
        row_id=found.row_id,
        kind=found.kind,
        order_id=found.order_id,
        strategy=found.strategy,
        from_token=found.from_token,
        to_token=found.to_token,
        from_symbol=symbol(found.from_token),
        to_symbol=symbol(found.to_token),
    )


def intent_model(
    intent: IntentView, history: Sequence[IntentTransitionView] | None = None
) -> IntentModel:
    """One intent (with its state history when given)."""
    return IntentModel(
        id=intent.id,
        strategy=intent.strategy,
        wallet=intent.wallet,
        kind=intent.kind,
        idempotency_key=intent.idempotency_key,
        action=plain(intent.action),
        state=intent.state,
        created_at=intent.created_at,
        updated_at=intent.updated_at,
        order_id=intent.order_id,
        tx_hash=intent.tx_hash,
        error=intent.error,
        history=None
        if history is None
        else [
            IntentTransitionModel(from_state=h.from_state, state=h.state, at=h.at, detail=h.detail)
            for h in history
        ],
    )


def transaction_model(tx: TransactionView) -> TransactionModel:
    """One signed transaction."""
    return TransactionModel(
        hash=tx.hash,
        sender=tx.sender,
        sequence_number=tx.sequence_number,
        payload_summary=tx.payload_summary,
        state=tx.state,
        intent_id=tx.intent_id,
        gas_used=tx.gas_used,
        vm_status=tx.vm_status,
        created_at=tx.created_at,
        updated_at=tx.updated_at,
    )


def price_model(tick: PriceTickRow) -> PriceModel:
    """One recorded price."""
    return PriceModel(
        timestamp=tick.timestamp,
        token=tick.token,
        symbol=tick.symbol,
        usd_price=format_decimal(tick.usd_price),
        native_price=money(tick.native_price),
        source=tick.source,
    )
