"""`copy_journal`: move a journal to another database (SQLite ↔ PostgreSQL), exactly.

Every table of the schema, parents before children, in primary-key order and in batches;
each batch is one committed transaction on the destination. The values are copied as the
database stores them (the exact text of amounts and times, integers as integers), never
through `Decimal` or `datetime` and back, so the copy is the same text, byte for byte.

Resumable: a copy that was interrupted (Ctrl-C, a dropped connection) is simply run
again. A table keyed by `id` continues after the destination's highest id; a table keyed
otherwise (`strategy_state`, a few rows a strategy) copies the keys the destination
lacks. Both journals must be at the schema this bot knows (`head`): the source is opened
read-only and is never written; the destination is created or migrated first.

At the end every table is verified row by row (both sides read in key order and
compared), and its row count and a SHA-256 digest of its canonical rows are reported: the
digest of the same table in the source and the destination is the same. A destination
that held other rows (another journal's) fails the verification, naming the table and
the first row that differs. Stop the daemon first: rows written to the source during the
copy may be missed (run the copy again once it is stopped).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Column, Connection, Engine, MetaData, Table, func, select
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from bot.journal.db import journal_name, write_engine
from bot.journal.errors import JournalError
from bot.journal.models import journal_metadata

__all__ = ["BATCH_ROWS", "CopyMismatch", "TableCopy", "copy_journal", "verify_tables"]

BATCH_ROWS: Final = 5000
"""Rows per committed batch (and per read of the verification)."""

Progress = Callable[[str, int], None]
"""Called after each committed batch with the table and the rows it held."""


class CopyMismatch(JournalError):
    """The destination does not hold exactly the source's rows (named in the message)."""


@dataclass(frozen=True)
class TableCopy:
    """One table of a copy: rows copied by this run, rows in it now, and its digest."""

    table: str
    copied: int
    rows: int
    digest: str


def _tables() -> list[Table]:
    return list(journal_metadata.sorted_tables)  # parents before children


def _key(table: Table) -> list[Any]:
    return list(table.primary_key.columns)


def _by_id(table: Table) -> bool:
    key = _key(table)
    return len(key) == 1 and key[0].name == "id"


def _raw(table: Table) -> Table:
    """The table with plain column types: values are read and bound as stored."""
    columns = [Column(c.name, _plain_type(c), primary_key=c.primary_key) for c in table.columns]
    return Table(table.name, MetaData(), *columns)


def _plain_type(column: Any) -> Any:
    # The journal's TypeDecorators (DecimalText, BigIntText, UtcDateTime) store TEXT: copy
    # their text as it is; every other column keeps its own type (INTEGER, VARCHAR).
    impl = getattr(column.type, "impl_instance", None)
    return impl if impl is not None else column.type


def _canonical(row: Sequence[Any]) -> str:
    return json.dumps(list(row), ensure_ascii=False, separators=(",", ":"), default=repr)


def _batches(conn: Connection, table: Table, after: Any, size: int) -> Iterator[list[Any]]:
    """Rows of an id-keyed table after id `after` (None: all), `size` at a time."""
    last = after
    while True:
        query = select(table).order_by(table.c.id).limit(size)
        if last is not None:
            query = query.where(table.c.id > last)
        rows = [tuple(row) for row in conn.execute(query)]
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def _all_sorted(conn: Connection, table: Table) -> list[tuple[Any, ...]]:
    key = [c.name for c in _key(table)]
    positions = [list(table.columns.keys()).index(name) for name in key]
    rows = [tuple(row) for row in conn.execute(select(table))]
    return sorted(rows, key=lambda row: tuple(row[p] for p in positions))


def _copy_table(
    source: Engine, destination: Engine, table: Table, size: int, progress: Progress | None
) -> int:
    copied = 0
    writer = write_engine(destination)
    if _by_id(table):
        with destination.connect() as conn:
            after = conn.execute(select(func.max(table.c.id))).scalar()
        with source.connect() as reading:
            for rows in _batches(reading, table, after, size):
                _insert(writer, table, rows)
                copied += len(rows)
                if progress is not None:
                    progress(table.name, len(rows))
        _sync_sequence(destination, table)
        return copied
    key = _key(table)
    positions = [list(table.columns.keys()).index(c.name) for c in key]
    with destination.connect() as conn:
        present = {tuple(row) for row in conn.execute(select(*key))}
    with source.connect() as reading:
        rows_in = _all_sorted(reading, table)
    missing = [r for r in rows_in if tuple(r[p] for p in positions) not in present]
    for start in range(0, len(missing), size):
        rows = missing[start : start + size]
        _insert(writer, table, rows)
        copied += len(rows)
        if progress is not None:
            progress(table.name, len(rows))
    return copied


def _insert(writer: Engine, table: Table, rows: list[tuple[Any, ...]]) -> None:
    """One committed batch."""
    names = table.c.keys()
    with writer.begin() as conn:
        conn.execute(table.insert(), [dict(zip(names, row, strict=True)) for row in rows])


def _sync_sequence(engine: Engine, table: Table) -> None:
    """PostgreSQL: move the id sequence past the copied ids (explicit ids do not)."""
    if engine.dialect.name != "postgresql":
        return
    with write_engine(engine).begin() as conn:
        highest = conn.execute(select(func.max(table.c.id))).scalar()
        conn.execute(
            select(
                func.setval(
                    func.pg_get_serial_sequence(table.name, "id"),
                    highest if highest is not None else 1,
                    highest is not None,
                )
            )
        )


def _rows(engine: Engine, table: Table, size: int) -> Iterator[tuple[Any, ...]]:
    with engine.connect() as conn:
        if _by_id(table):
            for rows in _batches(conn, table, None, size):
                yield from rows
        else:
            yield from _all_sorted(conn, table)


def verify_tables(
    source: Engine, destination: Engine, *, size: int = BATCH_ROWS
) -> list[tuple[str, int, str]]:
    """(table, rows, digest) of every table, after comparing both sides row by row.

    Raises:
        CopyMismatch: a row differs, or one side holds a row the other lacks.
    """
    checked: list[tuple[str, int, str]] = []
    for model_table in _tables():
        table = _raw(model_table)
        digest = hashlib.sha256()
        count = 0
        left, right = _rows(source, table, size), _rows(destination, table, size)
        while True:
            a, b = next(left, None), next(right, None)
            if a is None and b is None:
                break
            if a != b:
                if b is None:
                    problem = f"the destination lacks row {_canonical(a or ())[:200]}"
                elif a is None:
                    problem = f"the destination holds a row the source lacks: {_canonical(b)[:200]}"
                else:
                    problem = f"row {_canonical(a)[:200]} differs in the destination"
                raise CopyMismatch(f"{table.name}: {problem}")
            count += 1
            digest.update(_canonical(a or ()).encode("utf-8") + b"\n")
        checked.append((table.name, count, digest.hexdigest()))
    return checked


def copy_journal(
    source: Engine,
    destination: Engine,
    *,
    size: int = BATCH_ROWS,
    progress: Progress | None = None,
) -> list[TableCopy]:
    """Copy every table from `source` to `destination`, then verify them (module docstring).

    Both engines' databases must already be at `head` (open them with `Journal.open`:
    the source read-only, the destination as the writer).

    Raises:
        CopyMismatch: the verification found a difference.
        JournalError: a batch could not be written (what was committed stays; run again).
    """
    if size < 1:
        raise JournalError(f"batch size must be at least 1, got {size}")
    copied: dict[str, int] = {}

    try:
        for model_table in _tables():
            copied[model_table.name] = _copy_table(
                source, destination, _raw(model_table), size, progress
            )
    except SQLAlchemyError as exc:
        raise JournalError(
            f"copying to {_name(destination.url)} failed: "
            f"{str(getattr(exc, 'orig', exc)).strip().splitlines()[0]} "
            "(what was copied stays: run the copy again to continue)"
        ) from exc
    return [
        TableCopy(name, copied.get(name, 0), rows, digest)
        for name, rows, digest in verify_tables(source, destination, size=size)
    ]


def _name(url: URL) -> str:
    return journal_name(url)
