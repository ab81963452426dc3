"""Retention of recorded prices, so the journal does not grow without bound.

Ticks older than `retention_days` are either downsampled — per token, one tick per
`downsample_seconds` bucket is kept, the first (earliest) of the bucket; buckets are
aligned to the POSIX epoch in UTC (3600: whole hours) — or, when `downsample_seconds`
is None, dropped. Ticks at or after the cutoff are never touched, and running it again
changes nothing more. Series files are not pruned.

The journal has no downsampling method of its own, so this reads and deletes through the
journal's write engine, in `BEGIN IMMEDIATE` transactions of at most 20,000 examined
ticks each (the daemon's own writes never wait long behind a first pass over a big
journal). Each batch is consistent on its own, and the rule is idempotent, so a pass
cut short is completed by the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

from sqlalchemy import delete, literal, select, tuple_
from sqlalchemy.exc import SQLAlchemyError

from bot.clock import EPOCH, ensure_utc
from bot.journal import Journal, JournalError
from bot.journal.db import write_engine
from bot.journal.models import PriceTick

__all__ = ["RetentionReport", "apply_retention"]

_CHUNK: Final = 500  # ids per DELETE (well under SQLite's bound-parameter limit)
_BATCH: Final = 20_000  # old ticks examined per transaction: the write lock is held briefly


@dataclass(frozen=True)
class RetentionReport:
    """What one retention pass did to the ticks older than `cutoff`."""

    mode: Literal["downsample", "drop"]
    cutoff: datetime
    deleted: int
    kept: int
    """Old ticks kept (one per token and bucket); 0 when dropping."""

    def line(self) -> str:
        """One line for the console."""
        stamp = self.cutoff.isoformat().replace("+00:00", "Z")
        if self.mode == "drop":
            return f"retention: dropped {self.deleted} tick(s) older than {stamp}"
        return (
            f"retention: downsampled ticks older than {stamp}: "
            f"{self.deleted} deleted, {self.kept} kept"
        )


def apply_retention(
    journal: Journal,
    now: datetime,
    *,
    retention_days: int | None,
    downsample_seconds: int | None,
) -> RetentionReport | None:
    """Downsample (or drop) the ticks older than `now - retention_days`; None keeps all.

    Raises:
        JournalError: the journal is read-only, closed, or the write failed.
        ValueError: a bucket shorter than one second.
    """
    if retention_days is None:
        return None
    cutoff = ensure_utc(now) - timedelta(days=retention_days)
    if downsample_seconds is None:
        return RetentionReport("drop", cutoff, journal.prune_price_ticks(cutoff), 0)
    if downsample_seconds < 1:
        raise ValueError(f"downsample_seconds must be ≥ 1, got {downsample_seconds}")
    if journal.readonly:
        raise JournalError("journal opened read-only: retention cannot delete ticks")
    bucket = timedelta(seconds=downsample_seconds)
    deleted = kept = 0
    after: tuple[str, datetime, int] | None = None  # where the previous batch stopped
    last: tuple[str, int] | None = None  # (token, bucket) of the last tick kept
    while True:
        batch, doomed, last = _downsample_batch(journal, cutoff, bucket, after, last)
        deleted += len(doomed)
        kept += len(batch) - len(doomed)
        if len(batch) < _BATCH:
            break
        after = batch[-1]
    return RetentionReport("downsample", cutoff, deleted, kept)


def _downsample_batch(
    journal: Journal,
    cutoff: datetime,
    bucket: timedelta,
    after: tuple[str, datetime, int] | None,
    last: tuple[str, int] | None,
) -> tuple[list[tuple[str, datetime, int]], list[int], tuple[str, int] | None]:
    """One transaction: the next `_BATCH` old ticks by (token, time, id), extras deleted.

    Returns the ticks examined, the ids deleted and the (token, bucket) last kept.
    """
    table = PriceTick.__table__  # type: ignore[attr-defined]
    columns = (table.c.token, table.c.timestamp, table.c.id)
    query = select(*columns).where(table.c.timestamp < cutoff)
    if after is not None:  # keyset: strictly after the last tick of the previous batch
        bound = tuple_(*(literal(v, c.type) for v, c in zip(after, columns, strict=True)))
        query = query.where(tuple_(*columns) > bound)
    doomed: list[int] = []
    try:
        with write_engine(journal.engine).begin() as connection:
            batch = [
                (token, moment, tick_id)
                for token, moment, tick_id in connection.execute(
                    query.order_by(table.c.token, table.c.timestamp, table.c.id).limit(_BATCH)
                )
            ]
            for token, moment, tick_id in batch:
                current = (token, (moment - EPOCH) // bucket)
                if current == last:
                    doomed.append(tick_id)
                else:
                    last = current
            for start in range(0, len(doomed), _CHUNK):
                chunk = doomed[start : start + _CHUNK]
                connection.execute(delete(table).where(table.c.id.in_(chunk)))
    except SQLAlchemyError as exc:
        raise JournalError(f"price retention failed: {exc}") from exc
    return batch, doomed, last
