"""Storing a long series in the journal's `price_ticks` at once (`bot series import`).

`Journal.add_price_ticks` checks each tick with its own query (right for a poll's few
prices, about 0.4 ms a tick); a year of minutes would take minutes. On SQLite this inserts
through the journal's write engine with `INSERT … ON CONFLICT DO NOTHING` on the table's
(token, timestamp) key, in one transaction, through the table's own exact column types;
other databases go through `add_price_ticks` in chunks. Each tick keeps its row's source
(the block's `source`, or its `row_sources`).
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import func, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import SQLAlchemyError

from bot.clock import EPOCH, MICROSECOND
from bot.journal import Journal, JournalError, PriceTickRow
from bot.journal.db import write_engine
from bot.journal.models import PriceTick
from bot.paper.core.series import SeriesBlock

__all__ = ["store_block"]

_CHUNK: Final = 5000


def store_block(journal: Journal, block: SeriesBlock) -> tuple[int, int]:
    """Store one token's series as price ticks; (inserted, duplicates skipped).

    A (token, timestamp) already stored is kept as it was.

    Raises:
        JournalError: read-only or closed journal, or the write failed.
    """
    times = [EPOCH + int(us) * MICROSECOND for us in block.times_us]  # from_micros, inlined
    sources = block.sources()
    if journal.engine.dialect.name != "sqlite":
        inserted = duplicates = 0
        for start in range(0, len(times), _CHUNK):
            added, skipped = journal.add_price_ticks(
                PriceTickRow(moment, block.token, price, block.symbol, source=source)
                for moment, price, source in zip(
                    times[start : start + _CHUNK],
                    block.usd_prices[start : start + _CHUNK],
                    sources[start : start + _CHUNK],
                    strict=True,
                )
            )
            inserted, duplicates = inserted + added, duplicates + skipped
        return inserted, duplicates
    if journal.readonly:
        raise JournalError("journal opened read-only: cannot store price ticks")
    table = PriceTick.__table__  # type: ignore[attr-defined]
    count = select(func.count()).select_from(table).where(table.c.token == block.token)
    statement = sqlite_insert(table).on_conflict_do_nothing(index_elements=["token", "timestamp"])
    try:
        with write_engine(journal.engine).begin() as connection:
            before = connection.execute(count).scalar_one()
            for start in range(0, len(times), _CHUNK):
                connection.execute(
                    statement,
                    [
                        {
                            "timestamp": moment,
                            "token": block.token,
                            "symbol": block.symbol,
                            "usd_price": price,
                            "native_price": None,
                            "source": source,
                        }
                        for moment, price, source in zip(
                            times[start : start + _CHUNK],
                            block.usd_prices[start : start + _CHUNK],
                            sources[start : start + _CHUNK],
                            strict=True,
                        )
                    ],
                )
            after = connection.execute(count).scalar_one()
    except SQLAlchemyError as exc:
        raise JournalError(f"storing price ticks failed: {exc}") from exc
    inserted = int(after) - int(before)
    return inserted, len(times) - inserted
