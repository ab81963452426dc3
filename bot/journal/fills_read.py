"""Lean bulk reads for reports: every fill of the orders, and a token's prices, at once.

The ORM reads (`Journal.fills`, `Journal.price_ticks`) build a mapped object per row and
run a query per order: fine for one order, seconds for a year of fills (100,000) or of
15-minute prices (35,000 a token). These read the same rows with one plain SQL query
each, take the stored text as it is and parse it with the journal's own parsers
(`bot.journal.text`: exact `Decimal`s, aware UTC times), giving named tuples of the
views' fields (`FillRow`) or plain columns. Read-only; a read-only journal may use them.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from itertools import repeat
from operator import floordiv, itemgetter, sub
from typing import Any, Final, TypeVar

from bot.clock import EPOCH, MICROSECOND
from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.models import Fill, Order, PriceTick
from bot.journal.rows import FillRow
from bot.journal.text import parse_decimal_text
from bot.journal.types import BigIntText, DecimalText, UtcDateTime
from bot.journal.views import OrderView

__all__ = [
    "fill_batches",
    "fills_by_order_row",
    "order_fill_counts",
    "order_views",
    "price_micros",
    "writes_watched",
]

_FILL_TABLE: Final = Fill.__tablename__
_ORDER_TABLE: Final = Order.__tablename__
_BATCH: Final = 5000  # rows fetched from the driver at a time
_SHARED: Final = 4096  # distinct texts a column remembers (`_Parsed`)

_T = TypeVar("_T")
_first, _second = itemgetter(0), itemgetter(1)
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
    for batch in _batches(journal, sql, parameters):
        yield from batch


def _batches(
    journal: JournalBase, sql: str, parameters: tuple[Any, ...]
) -> Iterator[Sequence[Any]]:
    """`_each_row`'s rows a batch (`_BATCH`) at a time, for readers that loop over them."""
    if journal.engine.dialect.paramstyle != "qmark":  # psycopg: %s for SQLite's ?
        sql = sql.replace("?", "%s")
    with journal.engine.connect() as connection:
        cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(sql, parameters)
            while batch := cursor.fetchmany(_BATCH):
                yield batch
        finally:
            cursor.close()


def _orders_of(
    journal: JournalBase, strategies: Collection[str | None] | None = None
) -> tuple[list[str], tuple[str, ...]]:
    """The conditions on `orders` (and their values) of the orders a read may see.

    The journal's wallet's only, when it is opened for one (`JournalBase.wallet`); with
    `strategies`, only those stored with one of them.
    """
    conditions: list[str] = []
    parameters: tuple[str, ...] = ()
    if journal.wallet is not None:
        conditions.append("wallet = ?")
        parameters += (journal.wallet,)
    if strategies is not None:
        condition, named = _stored_with(strategies)
        conditions.append(condition)
        parameters += named
    return conditions, parameters


def _where(conditions: list[str]) -> str:
    """A `WHERE` clause of all of `conditions` (none: no clause)."""
    return f" WHERE {' AND '.join(conditions)}" if conditions else ""


@contextmanager
def writes_watched(journal: JournalBase) -> Iterator[Callable[[], bool]]:
    """While open: whether anything that changes a report was written since it opened.

    For a reader that reads in parts, each at its own moment (`bot.app.report_workers`):
    what it read is one state of the journal only if nothing was written meanwhile.
    SQLite: `PRAGMA data_version` on a connection held open, which changes with every
    commit of another connection. PostgreSQL: the last id and the count of the fills and
    of the prices, and every order's row id with its strategy (ids are never reused
    there); an insert that commits late under a lower id together with a removal in the
    same moments would go unseen.
    """
    if journal.engine.dialect.name == "sqlite":
        with journal.engine.connect() as connection:
            cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            try:
                version = cursor.execute("PRAGMA data_version").fetchone()
                yield lambda: cursor.execute("PRAGMA data_version").fetchone() != version
            finally:
                cursor.close()
        return
    marks = _marks(journal)
    yield lambda: _marks(journal) != marks


def _marks(journal: JournalBase) -> tuple[Any, ...]:
    """The last id and count of the fills and the prices; every order's id and strategy."""
    counted = " UNION ALL ".join(
        f"SELECT MAX(id), COUNT(*) FROM {table}"  # noqa: S608 - fixed names
        for table in (_FILL_TABLE, _PRICE_TABLE)
    )
    marks: list[Any] = list(_each_row(journal, counted, ()))
    linked = f"SELECT id, strategy FROM {_ORDER_TABLE} ORDER BY id"  # noqa: S608 - fixed names
    marks.append(hash(tuple(_each_row(journal, linked, ()))))
    return tuple(marks)


def _stored_with(strategies: Collection[str | None]) -> tuple[str, tuple[str, ...]]:
    """An orders' condition: stored with one of `strategies` (None: with none); its values."""
    named = tuple(sorted(name for name in set(strategies) if name is not None))
    either = [f"strategy IN ({', '.join('?' * len(named))})"] if named else []
    if None in strategies:
        either.append("strategy IS NULL")
    return (f"({' OR '.join(either)})" if either else "0 = 1"), named


def order_fill_counts(journal: JournalBase, *, of_type: str) -> list[tuple[Any, ...]]:
    """(strategy, from token, to token, fills of `of_type`) of every order (0: none).

    What a reader weighs its work by, and knows was traded, before it reads any order or
    fill (`bot.app.report_workers`): a count over the fills' own column and the orders'
    few columns, joined here (a join in SQL takes three times as long). The journal's
    wallet's only, when it is opened for one.
    """
    conditions, parameters = _orders_of(journal)
    sql = f"SELECT id, strategy, from_token, to_token FROM {_ORDER_TABLE}"  # noqa: S608 - fixed names
    orders = {row[0]: row[1:] for row in _each_row(journal, sql + _where(conditions), parameters)}
    counts = (
        f"SELECT order_row_id, COUNT(*) FROM {_FILL_TABLE} "  # noqa: S608 - fixed names
        "WHERE type = ? GROUP BY order_row_id"
    )
    counted = dict(_each_row(journal, counts, (of_type,)))
    return [(*order, counted.get(row_id, 0)) for row_id, order in orders.items()]


def order_views(
    journal: JournalBase, *, strategies: Collection[str | None] | None = None
) -> list[OrderView]:
    """Every stored order (oldest first), as `Journal.orders()` gives them, in one query.

    The journal's wallet's only, when it is opened for one (`JournalBase.wallet`);
    `strategies`: only those stored with one of them (None in it: with none).

    The same views, read from the stored text: a year of orders without the ORM.
    """
    table = Order.__table__  # type: ignore[attr-defined]
    names = [f.name for f in fields(OrderView)]
    columns = ["id" if name == "row_id" else name for name in names]
    readers = [_reader(table.c[column].type) for column in columns]
    # Orders observed by one poll share its times, and often their amounts: read once.
    parsed = [(i, _Parsed(read)) for i, read in enumerate(readers) if read is not None]
    conditions, parameters = _orders_of(journal, strategies)
    sql = f"SELECT {', '.join(columns)} FROM {_ORDER_TABLE}"  # noqa: S608 - fixed names
    sql += _where(conditions)
    views = []
    new = object.__new__
    for rows in _batches(journal, sql + " ORDER BY id", parameters):
        for _, seen in parsed:
            seen.bound()
        for row in rows:
            values = list(row)  # the columns in `OrderView`'s field order
            for i, read in parsed:  # only the stored texts that need reading (amounts, times)
                values[i] = read[values[i]]
            # `OrderView(**fields)` sets each field in turn; it checks nothing more.
            view = new(OrderView)
            view.__dict__.update(zip(names, values, strict=True))
            views.append(view)
    return views


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
    found: dict[int, list[FillRow]] = {}
    chosen = None if strategy is None else [strategy]
    for batch in fill_batches(journal, strategies=chosen):
        for row_id, fills in batch.items():
            held = found.get(row_id)
            if held is None:
                found[row_id] = fills
            else:
                held += fills
    return found


def fill_batches(
    journal: JournalBase,
    *,
    strategies: Collection[str | None] | None = None,
    of_type: str | None = None,
) -> Iterator[dict[int, list[FillRow]]]:
    """`fills_by_order_row`'s fills a batch of rows at a time, each batch by order row id.

    In recording order (an order's fills may go on in the next batch). For a reader that
    turns fills into something else at once: it never holds a year of them. `strategies`:
    only the fills of orders stored with one of these strategies (None in it: orders
    linked to none). `of_type`: only the fills of that `type` (the accounting reads the
    executions alone).
    """
    selected = ", ".join(f"f.{name}" for name in FillRow._fields)
    sql = f"SELECT f.order_row_id, {selected} FROM {_FILL_TABLE} f"  # noqa: S608 - fixed names
    orders, parameters = _orders_of(journal, strategies)
    conditions = []
    if orders:
        # `+`: the fills are read in their own (id) order, not looked up order by order
        # through the index and sorted again (a third less time for a year of fills).
        conditions.append(
            f"+f.order_row_id IN (SELECT id FROM {_ORDER_TABLE} "  # noqa: S608 - fixed names
            f"WHERE {' AND '.join(orders)})"
        )
    if of_type is not None:
        conditions.append("f.type = ?")
        parameters += (of_type,)
    sql += _where(conditions)
    text: _Parsed[str] = _Parsed(str)
    amount = _Parsed(parse_decimal_text)
    recorded = _Parsed(_stored_time)
    for rows in _batches(journal, sql + " ORDER BY f.id", parameters):
        for parsed in (text, amount, recorded):
            parsed.bound()
        # A column at a time, then a `FillRow` (its fields in order) of each row's values.
        (row_id, tx_id, kind, number, sold, bought, fee, time, keeper, price, *usd, at) = zip(
            *rows, strict=True
        )
        share = amount.__getitem__
        fills = map(
            tuple.__new__,
            repeat(FillRow),
            zip(
                tx_id,
                map(text.__getitem__, kind),  # NOT NULL
                number,
                map(share, sold),
                _decimals(bought),
                map(share, fee),
                _times(time),
                map(text.__getitem__, keeper),
                map(share, price),
                *(map(share, column) for column in usd),
                map(recorded.__getitem__, at),  # NOT NULL
                strict=True,
            ),
        )
        found: dict[int, list[FillRow]] = {}
        for order, fill in zip(row_id, fills, strict=True):  # in recording order
            held = found.get(order)
            if held is None:
                found[order] = [fill]
            else:
                held.append(fill)
        yield found


def _decimals(texts: Sequence[str | None]) -> Sequence[Decimal | None]:
    """A column of stored amounts that rarely repeat, read (None: None).

    `Decimal` over the whole column first (no call of ours per value); a column with a
    NULL or a text that is no amount goes value by value, so that the error is the same.
    """
    if None not in texts:
        try:
            read = list(map(Decimal, texts))  # type: ignore[arg-type]  # no None: checked
        except (InvalidOperation, TypeError):
            pass
        else:
            if not any(map(Decimal.is_nan, read)):
                return read
    return [None if text is None else parse_decimal_text(text) for text in texts]


def _times(texts: Sequence[str | None]) -> Sequence[datetime | None]:
    """A column of stored times, read as aware UTC (None: None); as `_decimals` does."""
    if None not in texts:
        read = list(map(datetime.fromisoformat, texts))  # type: ignore[arg-type]  # no None
        if all(moment.tzinfo is UTC for moment in read):  # as the journal writes them
            return read
    return [None if text is None else _stored_time(text) for text in texts]


class _Parsed(dict[str | None, _T | None]):
    """Stored texts read by `read`, equal texts giving the one (immutable) value; None: None.

    Fills repeat most of their values (a DCA's slice amount and fee, its keeper, the poll
    that recorded them): one object each instead of one per fill, and no parse again. A
    text seen before costs one dict look-up (`parsed[text]`); `bound` keeps the memory of
    texts seen small (`_SHARED`).
    """

    def __init__(self, read: Callable[[str], _T]) -> None:
        super().__init__({None: None})
        self._read = read

    def __missing__(self, text: str | None) -> _T | None:
        value = self[text] = self._read(text)  # type: ignore[arg-type]  # None is held
        return value

    def bound(self) -> None:
        """Forget the texts seen once there are more than `_SHARED` of them."""
        if len(self) > _SHARED:
            self.clear()
            self[None] = None


def price_micros(journal: JournalBase, token: str) -> tuple[array[int], list[Decimal]]:
    """One token's recorded USD prices, oldest first: (times as µs since the epoch, prices).

    One query. For a price series kept as µs (`PriceSeries.of_micros` of the accounting):
    a year of minute prices without a `datetime` or an `int` object each (an array of
    8-byte integers), worked out a column at a time. Both are empty without prices.
    """
    micros: array[int] = array("q")
    prices: list[Decimal] = []
    for stamps, usd in _price_batches(journal, canon.token(token)):
        moments = list(map(datetime.fromisoformat, stamps))
        if any(moment.tzinfo is not UTC for moment in moments):  # not as the journal writes
            moments = list(map(_stored_time, stamps))
        # `to_micros` of each: (moment - EPOCH) // MICROSECOND
        micros.extend(map(floordiv, map(sub, moments, repeat(EPOCH)), repeat(MICROSECOND)))
        prices += usd
    return micros, prices


def _price_batches(journal: JournalBase, key: str) -> Iterator[tuple[list[str], list[Decimal]]]:
    """The stored prices of the token `key` (canonical), oldest first, a batch at a time.

    Each batch: (its times as stored, its prices).
    """
    sql = (
        f"SELECT timestamp, usd_price FROM {_PRICE_TABLE} "  # noqa: S608 - fixed names
        "WHERE token = ? ORDER BY timestamp"
    )
    usd = _Parsed(parse_decimal_text)  # a price repeats often: one object, one parse
    for rows in _batches(journal, sql, (key,)):
        usd.bound()
        prices: list[Decimal] = list(map(usd.__getitem__, map(_second, rows)))  # type: ignore[arg-type]  # NOT NULL
        yield list(map(_first, rows)), prices
