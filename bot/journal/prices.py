"""Price ticks: one USD (and native) price of one token at one time, and where it came from."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Final

from sqlalchemy import delete
from sqlmodel import col
from sqlmodel import select as sm_select

from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.errors import JournalError
from bot.journal.models import PriceTick
from bot.journal.views import PriceTickRow

__all__ = ["PriceTicksMixin"]

_SOURCE: Final = re.compile(r"[a-z]{1,32}")
"""A tick's source is a short word (the series format's vocabulary: provider, paper, …)."""


def _source(value: str | None) -> str | None:
    if value is not None and not _SOURCE.fullmatch(value):
        raise JournalError(f"source: not a source name: {value[:40]!r}")
    return value


class PriceTicksMixin(JournalBase):
    """Storing, reading and pruning price ticks."""

    def add_price_ticks(self, rows: Iterable[PriceTickRow]) -> tuple[int, int]:
        """Store prices; a (token, timestamp) already stored is skipped.

        Returns:
            (inserted, duplicates skipped).
        """
        prepared = []
        for tick in rows:
            usd = canon.exact(tick.usd_price, "usd_price")
            if usd is None:
                raise JournalError(f"usd_price: missing for {tick.token}")
            prepared.append(
                PriceTick(
                    timestamp=canon.aware(tick.timestamp, "timestamp"),
                    token=canon.token(tick.token),
                    symbol=tick.symbol,
                    usd_price=usd,
                    native_price=canon.exact(tick.native_price, "native_price"),
                    source=_source(tick.source),
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
        query = sm_select(PriceTick).where(PriceTick.token == canon.token(token))
        if since is not None:
            query = query.where(col(PriceTick.timestamp) >= canon.aware(since, "since"))
        if until is not None:
            query = query.where(col(PriceTick.timestamp) < canon.aware(until, "until"))
        with self._reading() as session:
            return [
                PriceTickRow(r.timestamp, r.token, r.usd_price, r.symbol, r.native_price, r.source)
                for r in session.exec(query.order_by(col(PriceTick.timestamp)))
            ]

    def prune_price_ticks(self, before: datetime) -> int:
        """Delete every price older than `before`; returns how many were deleted."""
        moment = canon.aware(before, "before")
        with self._writing() as session:
            result = session.exec(delete(PriceTick).where(col(PriceTick.timestamp) < moment))
            return int(result.rowcount)
