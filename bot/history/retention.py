"""Retention of recorded prices, so the journal does not grow without bound.

Ticks older than `retention_days` are either downsampled — per token, one tick per
`downsample_seconds` bucket is kept, the first (earliest) of the bucket; buckets are
aligned to the POSIX epoch in UTC (3600: whole hours) — or, when `downsample_seconds`
is None, dropped. Ticks at or after the cutoff are never touched, and running it again
changes nothing more. Series files are not pruned.

The journal does the work (`Journal.downsample_price_ticks`, `prune_price_ticks`): in
`BEGIN IMMEDIATE` transactions of at most 20,000 examined ticks each (the daemon's own
writes never wait long behind a first pass over a big journal). Each batch is consistent
on its own, and the rule is idempotent, so a pass cut short is completed by the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from bot.clock import ensure_utc
from bot.journal import Journal

__all__ = ["RetentionReport", "apply_retention"]


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
    deleted, kept = journal.downsample_price_ticks(cutoff, timedelta(seconds=downsample_seconds))
    return RetentionReport("downsample", cutoff, deleted, kept)
