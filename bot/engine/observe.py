"""Provider order records (`bot.api.models`) → journal observations (`bot.journal`).

The journal may not import the API layer, so the engine translates: amounts stay exact
`Decimal`s, identities are canonicalised by the journal, and the raw hash is taken over the
record exactly as parsed (so a repeated observation is recognised as the same).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from bot.api.models import DcaOrder, LimitOrder, TxDetail
from bot.journal import FillRecord, OrderObservation, OrderSnapshot

__all__ = ["observation_of"]

OrderKind = Literal["dca", "limit"]


def _fill(detail: TxDetail) -> FillRecord:
    return FillRecord(
        tx_id=detail.tx_id,
        type=detail.type,
        tx_number=detail.tx_number,
        from_amount=detail.from_token_amount,
        to_amount=detail.to_token_amount,
        fee_amount=detail.fee_token_amount,
        time=detail.time_utc,
        keeper=detail.keeper_wallet_address,
        price_to_per_from=detail.price_to_token_per_from_token,
    )


def record_hash(order: DcaOrder | LimitOrder) -> str:
    """SHA-256 of the record as parsed (pydantic's serializer: fast, deterministic per shape).

    The same record gives the same hash, so an unchanged order is recognised without
    touching the journal; a provider reordering unknown keys only costs a re-observation.
    """
    return hashlib.sha256(order.model_dump_json(by_alias=True).encode()).hexdigest()


def observation_of(
    kind: OrderKind, order: DcaOrder | LimitOrder, wallet: str, raw_hash: str | None = None
) -> OrderObservation:
    """The journal observation of one order record seen in a getOrders page of `wallet`."""
    common = {
        "kind": kind,
        "order_id": order.order_id,
        "wallet": wallet,
        "from_token": order.from_token.address,
        "to_token": order.to_token.address,
        "status": order.status,
        "amount_spent": order.from_token_amount_spent,
        "amount_balance": order.from_token_amount_balance,
        "to_amount_received": order.to_token_amount_withdrawn,
        "orders_completed": order.number_of_orders_completed,
        "provider_created_at": order.created_at,
    }
    if isinstance(order, DcaOrder):
        snapshot = OrderSnapshot(
            amount_total=order.from_token_amount_total,
            min_rate=order.min_rate_to_token_per_from_token,
            max_rate=order.max_rate_to_token_per_from_token,
            interval_value=order.interval.value if order.interval else None,
            interval_period=order.interval.time_period if order.interval else None,
            orders_total=order.number_of_orders_total,
            **common,  # type: ignore[arg-type]
        )
    else:
        snapshot = OrderSnapshot(
            amount_total=order.from_token_amount,
            rate=order.rate_to_token_per_from_token,
            expire_at=order.expire_at,
            **common,  # type: ignore[arg-type]
        )
    fills = [_fill(d) for d in order.tx_details or ()]
    return OrderObservation(snapshot=snapshot, raw_hash=raw_hash or record_hash(order), fills=fills)
