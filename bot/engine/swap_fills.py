"""What a confirmed swap sold and received, from its committed transaction.

The provider's quote is untrusted and never used here. The amounts come from the chain:
the sender's balance changes of its own committed transaction, as the journal holds them
(`TransactionView.balance_changes`, written when the transaction's fate was recorded).
The gas fee is not inside them: the bot's nodes (the paper node, and the signer's policy
by default) report balance changes without it, and the gas is counted on its own
(`gas_used × gas_unit_price`).

When the node reported no balance changes, the fill is the intent's own numbers as the
signer held the transaction to them (the journaled payload summary): the exact side and
the on-chain bound of the other (`min_out` of an exact-in swap, the most it may sell of an
exact-out one), recorded with `source = "bounds"`: a bound, not a measurement.

Both the executor (a swap it saw commit) and the reconciler (a swap it confirms after a
crash) record the fill through `record_fill`; the journal keeps the first per intent.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Protocol

from bot.aptos.tokens import Token, TokenBook
from bot.journal.views import SwapFillRecord, TransactionView
from bot.logging import get_logger
from bot.money import from_base_units

__all__ = ["SwapFillLedger", "record_fill", "swap_fill"]

_log = get_logger("swap_fills")


class SwapFillLedger(Protocol):
    """The journal as the keeper of swap fills."""

    def transactions(self, intent_id: int | None = None) -> list[TransactionView]:
        """Recorded transactions (oldest first) of one intent."""
        ...

    def record_swap_fill(self, fill: SwapFillRecord, *, at: datetime) -> bool:
        """Record a swap fill once per intent (False: already there)."""
        ...


def swap_fill(
    intent_id: int, tx: TransactionView, tokens: TokenBook, *, at: datetime
) -> SwapFillRecord | None:
    """The fill of a swap whose transaction `tx` committed; None when it cannot be told.

    None: `tx` did not commit, or its journaled summary does not name two known tokens.
    `at` dates the fill when the journal does not hold the ledger's commit time.
    """
    if tx.state != "committed":
        return None
    summary = _summary(tx.payload_summary)
    sell = tokens.get(str(summary.get("sell") or ""))
    buy = tokens.get(str(summary.get("buy") or ""))
    if sell is None or buy is None or sell == buy:
        return None
    time = tx.committed_at or at
    measured = _measured(tx, sell, buy)
    if measured is not None:
        sold, bought, source = measured[0], measured[1], "chain"
    else:
        try:
            sold, bought = int(summary["sell_amount"]), int(summary["min_out"])
        except (KeyError, TypeError, ValueError):
            return None
        source = "bounds"
    return SwapFillRecord(
        intent_id=intent_id,
        tx_hash=tx.hash,
        sold_token=sell.address,
        sold_amount=from_base_units(sold, sell.decimals),
        bought_token=buy.address,
        bought_amount=from_base_units(bought, buy.decimals),
        source=source,
        time=time,
    )


def record_fill(
    journal: SwapFillLedger, intent_id: int, tokens: TokenBook, *, at: datetime
) -> SwapFillRecord | None:
    """Record the fill of swap intent `intent_id` from its committed transaction, if any.

    Returns the fill recorded now or earlier (None: no committed transaction, or its
    tokens are unknown: logged).
    """
    for tx in journal.transactions(intent_id=intent_id):
        fill = swap_fill(intent_id, tx, tokens, at=at)
        if fill is None:
            continue
        journal.record_swap_fill(fill, at=at)
        if fill.source != "chain":
            _log.warning(
                "swap_fill.bounds",
                intent=intent_id,
                tx_hash=tx.hash,
                detail="the node reported no balance changes: the intent's bounds are recorded",
            )
        return fill
    _log.warning("swap_fill.missing", intent=intent_id)
    return None


def _measured(tx: TransactionView, sell: Token, buy: Token) -> tuple[int, int] | None:
    """(sold, bought) base units from the sender's balance changes; None: not usable."""
    deltas = tx.balance_changes
    if deltas is None:
        return None
    sold = -sum(deltas.get(key, 0) for key in sell.keys)
    bought = sum(deltas.get(key, 0) for key in buy.keys)
    if sold < 0 or bought < 0 or (sold == 0 and bought == 0):
        _log.warning("swap_fill.odd_changes", tx_hash=tx.hash, sold=sold, bought=bought)
        return None
    return sold, bought


def _summary(text: str) -> dict[str, Any]:
    """The signer's intent summary journaled with the transaction ({} when absent)."""
    try:
        found = json.loads(text).get("intent")
    except (ValueError, AttributeError):
        return {}
    return found if isinstance(found, dict) else {}
