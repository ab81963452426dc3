"""Provider order records (`bot.api.models`) → journal observations (`bot.journal`).

The journal may not import the API layer, so the engine translates: amounts stay exact
`Decimal`s, identities are canonicalised by the journal, and the raw hash is taken over the
record exactly as parsed (so a repeated observation is recognised as the same).

Whose order a record is (`foreign_wallet`): the spec's records name no wallet; the page
says whose list it is (`toWalletAddress`), and a record may say so itself (`WALLET_FIELDS`,
beyond the spec). A record or page naming another address, or a text that is no address,
is another wallet's order: the tracker and reconciliation ignore it (`ForeignOrders`
counts it and reports each id once). A record naming nothing is taken as the page's; what
keeps such a record from doing harm is that reconciliation links orders to intents only on
evidence the bot produced itself (`engine.reconcile`).
"""

from __future__ import annotations

import hashlib
from typing import Final

from bot.api.models import DcaOrder, LimitOrder, TxDetail
from bot.aptos.address import Address, AddressError
from bot.domain import OrderKind
from bot.journal import FillRecord, OrderObservation, OrderSnapshot

__all__ = ["WALLET_FIELDS", "ForeignOrders", "foreign_wallet", "observation_of"]

WALLET_FIELDS: Final = (
    "toWalletAddress",
    "walletAddress",
    "ownerAddress",
    "userAddress",
    "owner",
    "wallet",
)
"""Fields beyond the spec through which a record may say whose order it is."""
_CLAIM_CHARS: Final = 100  # a claim is provider text: shown shortened


def foreign_wallet(
    order: DcaOrder | LimitOrder, wallet: str, page_wallet: object = None
) -> str | None:
    """Whose order the record (or its page) says it is, when not `wallet`; None: not another's.

    Args:
        order: one record of a getOrders page.
        wallet: our wallet (any spelling of the address).
        page_wallet: the page's `toWalletAddress`, as the provider sent it (None: absent).
    """
    ours = Address.parse(wallet)
    extra = order.model_extra or {}
    for claim in (page_wallet, *(extra.get(name) for name in WALLET_FIELDS)):
        if claim is None or claim == "":
            continue
        text = claim if isinstance(claim, str) else repr(claim)
        try:
            if Address.parse(text) == ours:
                continue
        except AddressError:
            pass
        return text[:_CLAIM_CHARS]
    return None


class ForeignOrders:
    """Records seen listed for another wallet: counted, each order id reported once.

    Memory is bounded: past `remember` ids the oldest are forgotten (one may then be
    reported again).
    """

    def __init__(self, remember: int = 10_000) -> None:
        self.ignored = 0
        """Records ignored so far (every sighting counts)."""
        self._remember = remember
        self._reported: dict[tuple[str, str], None] = {}

    def first_sighting(self, kind: str, order_id: str) -> bool:
        """Count one ignored record; True the first time this order id is seen."""
        self.ignored += 1
        key = (kind, order_id)
        if key in self._reported:
            return False
        if len(self._reported) >= self._remember:
            del self._reported[next(iter(self._reported))]
        self._reported[key] = None
        return True

    @property
    def distinct(self) -> int:
        """How many different order ids are remembered as another wallet's."""
        return len(self._reported)


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
        # untrusted provider values, kept for valuation display only (never for signing)
        from_amount_usd=detail.from_token_amount_usd,
        to_amount_usd=detail.to_token_amount_usd,
        fee_amount_usd=detail.fee_token_amount_usd,
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
