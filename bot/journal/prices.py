"""Price ticks: one USD (and native) price of one token at one time, and where it came from.

Besides the tick-by-tick methods (a poll's few prices), two bulk ones serve the price
history (`bot.history`): `add_price_block` stores a long series at once and
`downsample_price_ticks` thins old ticks, both in few, bounded transactions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from sqlalchemy import delete, func, literal, select, tuple_
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import col
from sqlmodel import select as sm_select

from bot.clock import EPOCH
from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.errors import JournalError
from bot.journal.models import PriceTick
from bot.journal.views import PriceTickRow

__all__ = ["PriceTicksMixin"]

_SOURCE: Final = re.compile(r"[a-z]{1,32}")
"""A tick's source is a short word (the series format's vocabulary: provider, paper, …)."""
_INSERT_CHUNK: Final = 5000  # rows per statement (or per `add_price_ticks` call) of a block
# The dialects whose `INSERT … ON CONFLICT DO NOTHING` stores a block in one transaction.
_BULK_INSERTS: Final[dict[str, Callable[[Any], Any]]] = {
    "sqlite": sqlite_insert,
    "postgresql": postgresql_insert,
}
_DELETE_CHUNK: Final = 500  # ids per DELETE (well under SQLite's bound-parameter limit)
_DOWNSAMPLE_BATCH: Final = 20_000  # old ticks examined per transaction: a brief write lock


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

    def add_price_block(
        self,
        token: str,
        symbol: str | None,
        times: Sequence[datetime],
        prices: Sequence[Decimal],
        sources: Sequence[str | None],
    ) -> tuple[int, int]:
        """Store one token's long series at once; (inserted, duplicates skipped).

        `times`, `prices` and `sources` are parallel columns, one entry a tick. A (token,
        timestamp) already stored is kept as it was. On SQLite and PostgreSQL this is one
        transaction of `INSERT … ON CONFLICT DO NOTHING` on the (token, timestamp) key, each value
        checked by the column's own exact type (a naive time or an inexact price refuses
        the whole block); other databases go through `add_price_ticks` in chunks.

        Raises:
            JournalError: columns of unequal length, a bad token or source, a read-only or
                closed journal, or the write failed (nothing of it is stored on SQLite or
                PostgreSQL).
        """
        if not len(times) == len(prices) == len(sources):
            raise JournalError(
                f"price block: {len(times)} times, {len(prices)} prices, {len(sources)} sources"
            )
        key = canon.token(token)
        for value in set(sources):
            _source(value)
        if self.readonly:
            raise JournalError("journal opened read-only: cannot store price ticks")
        dialect = self.engine.dialect.name
        if dialect not in _BULK_INSERTS:
            return self._add_price_rows(key, symbol, times, prices, sources)
        table = PriceTick.__table__  # type: ignore[attr-defined]
        count = select(func.count()).select_from(table).where(table.c.token == key)
        statement = _BULK_INSERTS[dialect](table).on_conflict_do_nothing(
            index_elements=["token", "timestamp"]
        )
        try:
            with self._writer.begin() as connection:
                before = connection.execute(count).scalar_one()
                for start in range(0, len(times), _INSERT_CHUNK):
                    end = start + _INSERT_CHUNK
                    connection.execute(
                        statement,
                        [
                            {
                                "timestamp": moment,
                                "token": key,
                                "symbol": symbol,
                                "usd_price": price,
                                "native_price": None,
                                "source": source,
                            }
                            for moment, price, source in zip(
                                times[start:end], prices[start:end], sources[start:end], strict=True
                            )
                        ],
                    )
                after = connection.execute(count).scalar_one()
        except SQLAlchemyError as exc:
            raise JournalError(f"storing price ticks failed: {exc}") from exc
        inserted = int(after) - int(before)
        return inserted, len(times) - inserted

    def _add_price_rows(
        self,
        token: str,
        symbol: str | None,
        times: Sequence[datetime],
        prices: Sequence[Decimal],
        sources: Sequence[str | None],
    ) -> tuple[int, int]:
        """`add_price_block` off SQLite: `add_price_ticks` a chunk at a time."""
        inserted = duplicates = 0
        for start in range(0, len(times), _INSERT_CHUNK):
            end = start + _INSERT_CHUNK
            added, skipped = self.add_price_ticks(
                PriceTickRow(moment, token, price, symbol, source=source)
                for moment, price, source in zip(
                    times[start:end], prices[start:end], sources[start:end], strict=True
                )
            )
            inserted, duplicates = inserted + added, duplicates + skipped
        return inserted, duplicates

    def downsample_price_ticks(self, cutoff: datetime, bucket: timedelta) -> tuple[int, int]:
        """Thin the ticks older than `cutoff` to one per token and bucket; (deleted, kept).

        The tick kept is the first (earliest; the lowest id on a tie) of its bucket, and
        buckets are aligned to the POSIX epoch in UTC (one hour: whole hours). Ticks at or
        after `cutoff` are never touched; running it again deletes nothing more. The
        ticks are walked in (token, time, id) order in `BEGIN IMMEDIATE` transactions of at
        most 20,000 examined ticks each, so other writers never wait long; each is
        consistent on its own, so a pass cut short is completed by the next.

        Raises:
            JournalError: a naive cutoff, a bucket that is not positive, a read-only or
                closed journal, or the write failed.
        """
        moment = canon.aware(cutoff, "cutoff")
        if bucket <= timedelta(0):
            raise JournalError(f"bucket: must be positive, got {bucket}")
        if self.readonly:
            raise JournalError("journal opened read-only: retention cannot delete ticks")
        deleted = kept = 0
        after: tuple[str, datetime, int] | None = None  # where the previous batch stopped
        last: tuple[str, int] | None = None  # (token, bucket) of the last tick kept
        while True:
            batch, doomed, last = self._downsample_batch(moment, bucket, after, last)
            deleted += len(doomed)
            kept += len(batch) - len(doomed)
            if len(batch) < _DOWNSAMPLE_BATCH:
                return deleted, kept
            after = batch[-1]

    def _downsample_batch(
        self,
        cutoff: datetime,
        bucket: timedelta,
        after: tuple[str, datetime, int] | None,
        last: tuple[str, int] | None,
    ) -> tuple[list[tuple[str, datetime, int]], list[int], tuple[str, int] | None]:
        """One transaction: the next batch of old ticks by (token, time, id), extras deleted.

        Returns the ticks examined, the ids deleted and the (token, bucket) last kept.
        """
        table = PriceTick.__table__  # type: ignore[attr-defined]
        columns = (table.c.token, table.c.timestamp, table.c.id)
        query = select(*columns).where(table.c.timestamp < cutoff)
        if after is not None:  # keyset: strictly after the last tick of the previous batch
            bound = tuple_(*(literal(v, c.type) for v, c in zip(after, columns, strict=True)))
            query = query.where(tuple_(*columns) > bound)
        doomed: list[int] = []
        self.engine  # noqa: B018 - raises when closed
        try:
            with self._writer.begin() as connection:
                batch = [
                    (token, stamp, tick_id)
                    for token, stamp, tick_id in connection.execute(
                        query.order_by(*columns).limit(_DOWNSAMPLE_BATCH)
                    )
                ]
                for token, stamp, tick_id in batch:
                    current = (token, (stamp - EPOCH) // bucket)
                    if current == last:
                        doomed.append(tick_id)
                    else:
                        last = current
                for start in range(0, len(doomed), _DELETE_CHUNK):
                    chunk = doomed[start : start + _DELETE_CHUNK]
                    connection.execute(delete(table).where(table.c.id.in_(chunk)))
        except SQLAlchemyError as exc:
            raise JournalError(f"price retention failed: {exc}") from exc
        return batch, doomed, last
