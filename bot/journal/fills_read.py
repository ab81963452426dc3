"""Lean bulk reads for reports: every fill of the orders, and a token's prices, at once.

The ORM reads (`Journal.fills`, `Journal.price_ticks`) build a mapped object per row and
run a query per order: fine for one order, seconds for a year of fills (100,000) or of
15-minute prices (35,000 a token). These read the same rows with one plain SQL query
each, take the stored text as it is and parse it with the journal's own parsers
(`bot.journal.text`: exact `Decimal`s, aware UTC times), giving named tuples of the
views' fields (`FillRow`) or plain columns. Read-only; a read-only journal may use them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final, TypeVar

from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.models import Fill, Order, PriceTick
from bot.journal.rows import FillRow
from bot.journal.text import parse_decimal_text
from bot.journal.types import BigIntText, DecimalText, UtcDateTime
from bot.journal.views import OrderView

__all__ = ["fills_by_order_row", "order_views", "price_columns"]

_FILL_TABLE: Final = Fill.__tablename__
_ORDER_TABLE: Final = Order.__tablename__
_BATCH: Final = 5000  # rows fetched from the driver at a time
_SHARED: Final = 4096  # distinct texts a column remembers (`_shared`)

_T = TypeVar("_T")
_PRICE_TABLE: Final = PriceTick.__tablename__


def _stored_time(text: str) -> datetime:
    """A stored time (`YYYY-MM-DDTHH:MM:SS.ffffff+00:00`) as aware UTC."""
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is UTC:
        return parsed
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _each_row(
    journal: JournalBase, sql: str, parameters: tuple[Any, ...]
) -> Iterator[tuple[Any, ...]]:
    """The rows of one read query as the SQLite driver gives them (stored text).

    Fetched a batch at a time: a year of rows is never all held as text at once.
    """
    with journal.engine.connect() as connection:
        cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(sql, parameters)
            while batch := cursor.fetchmany(_BATCH):
                yield from batch
        finally:
            cursor.close()


def _rows(journal: JournalBase, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """All the rows of one read query (stored text)."""
    return list(_each_row(journal, sql, parameters))


def _shared(read: Callable[[str], _T]) -> Callable[[str | None], _T | None]:
    """`read` of a stored text, equal texts giving the one (immutable) value.

    Fills repeat most of their values (a DCA's slice amount and fee, its keeper, the poll
    that recorded them): one object each instead of one per fill, and no parse again.
    The memory of texts seen is bounded (`_SHARED`).
    """
    seen: dict[str, _T] = {}

    def value(text: str | None) -> _T | None:
        if text is None:
            return None
        found = seen.get(text)
        if found is None:
            if len(seen) >= _SHARED:
                seen.clear()
            found = seen[text] = read(text)
        return found

    return value


def order_views(journal: JournalBase) -> list[OrderView]:
    """Every stored order (oldest first), as `Journal.orders()` gives them, in one query.

    The same views, read from the stored text: a year of orders without the ORM.
    """
    table = Order.__table__  # type: ignore[attr-defined]
    names = [f.name for f in fields(OrderView)]
    columns = ["id" if name == "row_id" else name for name in names]
    readers = [_reader(table.c[column].type) for column in columns]
    sql = f"SELECT {', '.join(columns)} FROM {_ORDER_TABLE} ORDER BY id"  # noqa: S608
    return [
        OrderView(
            **{
                name: value if value is None or read is None else read(value)
                for name, read, value in zip(names, readers, row, strict=True)
            }
        )
        for row in _rows(journal, sql, ())
    ]


def _reader(kind: object) -> Callable[[Any], Any] | None:
    """How a stored value of a column of type `kind` is read (None: as SQLite gives it)."""
    if isinstance(kind, DecimalText):
        return parse_decimal_text
    if isinstance(kind, UtcDateTime):
        return _stored_time
    if isinstance(kind, BigIntText):
        return int
    return None


def fills_by_order_row(
    journal: JournalBase, *, strategy: str | None = None
) -> dict[int, list[FillRow]]:
    """Every recorded fill, by its order's row id (`OrderView.row_id`), in recording order.

    `strategy`: only the fills of that strategy's orders. One query for all of them; each
    fill a `FillRow` (`FillView`'s fields as a named tuple).
    """
    selected = ", ".join(f"f.{name}" for name in FillRow._fields)
    sql = f"SELECT f.order_row_id, {selected} FROM {_FILL_TABLE} f"  # noqa: S608 - fixed names
    parameters: tuple[str, ...] = ()
    if strategy is not None:
        sql += " JOIN orders o ON o.id = f.order_row_id WHERE o.strategy = ?"
        parameters = (strategy,)
    found: dict[int, list[FillRow]] = {}
    text = _shared(str)
    amount = _shared(parse_decimal_text)
    recorded = _shared(_stored_time)
    # FillRow's fields in order; amounts and times parsed as the ORM parses them.
    for row in _each_row(journal, sql + " ORDER BY f.id", parameters):
        fill = FillRow(
            row[1],
            text(row[2]),  # type: ignore[arg-type]  # NOT NULL
            row[3],
            amount(row[4]),
            amount(row[5]),
            amount(row[6]),
            None if row[7] is None else _stored_time(row[7]),
            text(row[8]),
            amount(row[9]),
            amount(row[10]),
            amount(row[11]),
            amount(row[12]),
            recorded(row[13]),  # type: ignore[arg-type]  # NOT NULL
        )
        fills = found.get(row[0])
        if fills is None:
            fills = found[row[0]] = []
        fills.append(fill)
    return found


def price_columns(
    journal: JournalBase, tokens: Iterable[str]
) -> dict[str, tuple[list[datetime], list[Decimal]]]:
    """Each token's recorded USD prices, oldest first: token → (times, prices).

    One query a token; a token without prices is absent.
    """
    found: dict[str, tuple[list[datetime], list[Decimal]]] = {}
    sql = (
        f"SELECT timestamp, usd_price FROM {_PRICE_TABLE} "  # noqa: S608 - fixed names
        "WHERE token = ? ORDER BY timestamp"
    )
    for key in sorted({canon.token(token) for token in tokens}):
        times: list[datetime] = []
        prices: list[Decimal] = []
        usd = _shared(parse_decimal_text)  # a price repeats often: one object, one parse
        for stamp, price in _each_row(journal, sql, (key,)):
            times.append(_stored_time(stamp))
            prices.append(usd(price))  # type: ignore[arg-type]  # NOT NULL
        if times:
            found[key] = (times, prices)
    return found
