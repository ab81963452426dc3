"""Swap fills: what each confirmed swap intent sold and received, recorded once.

A swap has no provider order and so no `txDetails`: its amounts come from the chain — the
balance changes of its committed transaction (`source` `chain`) — or, when the node
reported none, from the intent's exact side and its on-chain bound (`bounds`: not a
measurement). The executor records the fill when its swap commits, the reconciler when it
confirms a swap after a crash; the first record of an intent wins.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from sqlmodel import col
from sqlmodel import select as sm_select

from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.errors import JournalError
from bot.journal.models import Intent, SwapFill
from bot.journal.views import SwapFillRecord, SwapFillView

__all__ = ["SWAP_FILL_SOURCES", "SwapFillsMixin"]

SWAP_FILL_SOURCES: Final = ("chain", "bounds")


class SwapFillsMixin(JournalBase):
    """Recording and reading swap fills."""

    def record_swap_fill(self, fill: SwapFillRecord, *, at: datetime) -> bool:
        """Record what a swap intent sold and received; False when it is already recorded.

        Raises:
            JournalError: no such intent, not a swap, a bad token, hash or amount, or an
                unknown source.
        """
        if fill.source not in SWAP_FILL_SOURCES:
            raise JournalError(
                f"swap fill source {fill.source!r} is not one of {SWAP_FILL_SOURCES}"
            )
        sold = canon.exact(fill.sold_amount, "sold_amount")
        bought = canon.exact(fill.bought_amount, "bought_amount")
        if sold is None or bought is None or sold < 0 or bought < 0:
            raise JournalError(f"swap fill of intent {fill.intent_id}: amounts must be >= 0")
        row = SwapFill(
            intent_id=fill.intent_id,
            tx_hash=canon.tx_hash(fill.tx_hash),
            sold_token=canon.token(fill.sold_token, "sold_token"),
            sold_amount=sold,
            bought_token=canon.token(fill.bought_token, "bought_token"),
            bought_amount=bought,
            source=fill.source,
            time=canon.aware(fill.time, "time"),
            recorded_at=canon.aware(at),
        )
        with self._writing() as session:
            intent = session.get(Intent, fill.intent_id)
            if intent is None or not self._visible(intent.wallet) or intent.kind != "swap":
                raise JournalError(f"intent {fill.intent_id} is not a swap in the journal")
            found = session.exec(
                sm_select(SwapFill).where(SwapFill.intent_id == fill.intent_id)
            ).first()
            if found is not None:
                return False
            session.add(row)
            return True

    def swap_fills(self, strategy: str | None = None) -> list[SwapFillView]:
        """Recorded swap fills (in recording order), optionally of one strategy."""
        query = (
            sm_select(SwapFill, Intent)
            .join(Intent, col(Intent.id) == col(SwapFill.intent_id))
            .where(*self._scoped(Intent.wallet))
        )
        if strategy is not None:
            query = query.where(Intent.strategy == strategy)
        with self._reading() as session:
            return [
                SwapFillView(
                    intent_id=row.intent_id,
                    tx_hash=row.tx_hash,
                    sold_token=row.sold_token,
                    sold_amount=row.sold_amount,
                    bought_token=row.bought_token,
                    bought_amount=row.bought_amount,
                    source=row.source,
                    time=row.time,
                    strategy=intent.strategy,
                    wallet=intent.wallet,
                    recorded_at=row.recorded_at,
                )
                for row, intent in session.exec(query.order_by(col(SwapFill.id)))
            ]
