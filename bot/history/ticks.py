"""Storing a long series in the journal's `price_ticks` at once (`bot series import`).

`Journal.add_price_ticks` checks each tick with its own query (right for a poll's few
prices, about 0.4 ms a tick); a year of minutes would take minutes. This hands the block's
columns to `Journal.add_price_block`, which stores them in one bulk transaction on SQLite
(in chunks elsewhere). Each tick keeps its row's source (the block's `source`, or its
`row_sources`).
"""

from __future__ import annotations

from bot.clock import EPOCH, MICROSECOND
from bot.journal import Journal
from bot.paper.core.series import SeriesBlock

__all__ = ["store_block"]


def store_block(journal: Journal, block: SeriesBlock) -> tuple[int, int]:
    """Store one token's series as price ticks; (inserted, duplicates skipped).

    A (token, timestamp) already stored is kept as it was.

    Raises:
        JournalError: read-only or closed journal, or the write failed.
    """
    times = [EPOCH + int(us) * MICROSECOND for us in block.times_us]  # from_micros, inlined
    return journal.add_price_block(
        block.token, block.symbol, times, block.usd_prices, block.sources()
    )
