"""Series from elsewhere: a timestamp,price CSV of one token, or OHLCV with a chosen column.

The file is a CSV with a header (comma-separated). Columns are matched by name, ignoring
case and surrounding spaces:

* the time: `--timestamp-column`, else the first of timestamp, time, date, datetime, ts,
  open_time, unix; ISO-8601 (`Z` or an offset; no offset means UTC) or epoch seconds,
  milliseconds or microseconds (told apart by size: below 10¹¹ seconds, below 10¹⁴
  milliseconds, else microseconds; a fraction is allowed, kept to the microsecond);
* the price: `--column`; else for OHLCV (`--format ohlcv`, or `auto` when the header has
  open, high, low and close) `close`; else for a price file the first of usdPrice, price,
  close, value, or the only other column. Prices are read as exact decimal text (never a
  float) and must be > 0.

Every imported row says `source = import`, unless the file has a `source` column of its
own (a series file of one token, re-imported): then each row keeps its own (`provider`,
`paper`, `synthetic`, `import`; empty means `import`), and a row with another value is
skipped as bad.

A bad row (unreadable time, missing or non-positive price) is skipped and counted; a
repeated timestamp keeps the first row (counted as a duplicate). Header problems (no
time column, no price column) raise `SeriesImportError` naming the column.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from pathlib import Path
from typing import Final, Literal

from bot.clock import from_micros, parse_utc, to_micros
from bot.money import MoneyError, parse_decimal
from bot.paper.core.price_sources import PRICE_SOURCES, read_source
from bot.paper.core.series import SeriesBlock
from bot.skipped_rows import SkippedRows, shown_value

__all__ = [
    "ImportFormat",
    "ImportReport",
    "SeriesImportError",
    "import_price_csv",
    "parse_timestamp",
]

ImportFormat = Literal["auto", "price", "ohlcv"]

_EPOCH_NUMBER: Final = re.compile(r"\d+(\.\d+)?")
_TIME_NAMES: Final = ("timestamp", "time", "date", "datetime", "ts", "open_time", "unix")
_PRICE_NAMES: Final = ("usdprice", "price", "close", "value")
_OHLC: Final = ("open", "high", "low", "close")
_IMPORT: Final = "import"


class SeriesImportError(ValueError):
    """The file cannot be imported as asked (a header problem, an unreadable file)."""


@dataclass(frozen=True)
class ImportReport:
    """What an import read and kept."""

    rows: int
    imported: int
    skipped: int
    duplicates: int
    timestamp_column: str
    price_column: str
    first_problem: str | None = None
    """The first skipped row, as `line N: why` (for the user to fix the file)."""
    first: datetime | None = None
    last: datetime | None = None
    skipped_rows: SkippedRows | None = None
    """Every row not imported (bad, or a repeated time), where and why: `skipped_line()`."""

    def skipped_line(self) -> str | None:
        """The skipped rows in one line (for stderr), or None when every row was imported."""
        return self.skipped_rows.line() if self.skipped_rows is not None else None

    def line(self) -> str:
        """One line for the console."""
        span = ""
        if self.first is not None and self.last is not None:
            span = (
                f" from {self.first.isoformat().replace('+00:00', 'Z')}"
                f" to {self.last.isoformat().replace('+00:00', 'Z')}"
            )
        text = (
            f"imported {self.imported} of {self.rows} row(s){span} "
            f"(time: {self.timestamp_column}, price: {self.price_column}; "
            f"{self.skipped} skipped, {self.duplicates} duplicate(s))"
        )
        return text


def parse_timestamp(text: str) -> datetime:
    """An imported time: ISO-8601 (no offset = UTC) or epoch seconds/ms/µs, as aware UTC.

    Raises:
        ValueError: anything else.
    """
    value = text.strip()
    if _EPOCH_NUMBER.fullmatch(value):
        number = Decimal(value)
        shift = 6 if number < Decimal(10) ** 11 else 3 if number < Decimal(10) ** 14 else 0
        micros = int(number.scaleb(shift).to_integral_value(rounding=ROUND_FLOOR))
        try:
            return from_micros(micros)
        except OverflowError:
            raise ValueError(f"time out of range: {value!r}") from None
    if not value:
        raise ValueError("empty time")
    try:
        return parse_utc(value)
    except ValueError:
        raise ValueError(f"time {shown_value(value)} is not ISO 8601 or epoch seconds") from None


def _row_price(text: str) -> Decimal:
    """A price cell: an exact number > 0 (ValueError naming the cell otherwise)."""
    try:
        price = parse_decimal(text, field="price")
    except MoneyError:
        raise ValueError(f"price {shown_value(text)} is not a number") from None
    if not price > 0 or not price.is_finite():
        raise ValueError(f"price {shown_value(text)} is not > 0")
    return price


def _column(header: list[str], wanted: str, option: str) -> int:
    lowered = [name.strip().lower() for name in header]
    if wanted.strip().lower() in lowered:
        return lowered.index(wanted.strip().lower())
    raise SeriesImportError(
        f"{option} {wanted!r}: no such column (have: {', '.join(h.strip() for h in header)})"
    )


def _first_of(header: list[str], names: tuple[str, ...], skip: int | None = None) -> int | None:
    lowered = [name.strip().lower() for name in header]
    for name in names:
        if name in lowered and lowered.index(name) != skip:
            return lowered.index(name)
    return None


def _row_source(cells: list[str], index: int | None) -> str:
    """A row's source: its own `source` cell (empty: `import`), else `import`.

    Raises:
        ValueError: a source that is not one of the series format's.
    """
    if index is None:
        return _IMPORT
    value = read_source(cells[index] if index < len(cells) else None) or _IMPORT
    if value not in PRICE_SOURCES:
        raise ValueError(f"source {value[:40]!r}: not one of {', '.join(PRICE_SOURCES)}")
    return value


def _choose_columns(
    header: list[str], fmt: ImportFormat, column: str | None, timestamp_column: str | None
) -> tuple[int, int]:
    """(time column, price column) indexes for this header (its `source` column aside)."""
    have = ", ".join(h.strip() for h in header)
    if timestamp_column is not None:
        time_index = _column(header, timestamp_column, "--timestamp-column")
    else:
        found = _first_of(header, _TIME_NAMES)
        if found is None:
            raise SeriesImportError(
                f"no time column (have: {have}); name it with --timestamp-column"
            )
        time_index = found
    lowered = {name.strip().lower() for name in header}
    ohlcv = fmt == "ohlcv" or (fmt == "auto" and all(name in lowered for name in _OHLC))
    if column is not None:
        price_index = _column(header, column, "--column")
    elif ohlcv:
        price_index = _column(header, "close", "--column")
    else:
        found = _first_of(header, _PRICE_NAMES, skip=time_index)
        source = _first_of(header, ("source",))
        others = [i for i in range(len(header)) if i not in (time_index, source)]
        if found is None and len(others) != 1:
            raise SeriesImportError(f"no price column (have: {have}); name it with --column")
        price_index = found if found is not None else others[0]
    if price_index == time_index:
        raise SeriesImportError(f"the time and the price cannot both be {header[time_index]!r}")
    return time_index, price_index


def import_price_csv(
    path: Path,
    token: str,
    *,
    symbol: str | None = None,
    fmt: ImportFormat = "auto",
    column: str | None = None,
    timestamp_column: str | None = None,
) -> tuple[SeriesBlock, ImportReport]:
    """Read one token's prices from a CSV: the series (sorted by time) and what was read.

    Raises:
        SeriesImportError: unreadable file, no header, or a time/price column not found.
    """
    try:
        handle = path.open(newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise SeriesImportError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if not header:
                raise SeriesImportError(f"{path}: empty file (a header line is required)")
            time_index, price_index = _choose_columns(header, fmt, column, timestamp_column)
            source_index = _first_of(header, ("source",))
            if source_index in (time_index, price_index):
                source_index = None
            points: list[tuple[int, Decimal, str, int]] = []
            rows = skipped = 0
            problem: str | None = None
            skips = SkippedRows(str(path))
            for cells in reader:
                if not cells or not any(cell.strip() for cell in cells):
                    continue  # a blank line is not a row
                rows += 1
                try:
                    if max(time_index, price_index) >= len(cells):
                        raise ValueError(f"{len(cells)} cell(s), fewer than the header's")
                    moment = parse_timestamp(cells[time_index])
                    price = _row_price(cells[price_index])
                    source = _row_source(cells, source_index)
                except (ValueError, IndexError, MoneyError, InvalidOperation) as exc:
                    skipped += 1
                    skips.skip(reader.line_num, str(exc))
                    if problem is None:
                        problem = f"line {reader.line_num}: {exc}"
                    continue
                points.append((to_micros(moment), price, source, reader.line_num))
        except csv.Error as exc:
            raise SeriesImportError(f"{path}: line {reader.line_num}: {exc}") from None
        except UnicodeDecodeError:
            raise SeriesImportError(f"{path}: not a UTF-8 text file") from None
    skips.rows = rows
    points.sort(key=lambda point: point[0])  # stable: of equal times, the first row stays
    times: list[int] = []
    prices: list[Decimal] = []
    sources: list[str] = []
    for micros, price, source, line in points:
        if times and times[-1] == micros:
            skips.skip(line, "duplicate time (the first row is kept)")
            continue
        times.append(micros)
        prices.append(price)
        sources.append(source)
    if len(set(sources)) > 1:
        block = SeriesBlock(token, times, prices, symbol, row_sources=sources)
    else:
        block = SeriesBlock(token, times, prices, symbol, source=sources[0] if sources else _IMPORT)
    report = ImportReport(
        rows=rows,
        imported=len(times),
        skipped=skipped,
        duplicates=len(points) - len(times),
        timestamp_column=header[time_index].strip(),
        price_column=header[price_index].strip(),
        first_problem=problem,
        skipped_rows=skips,
        first=from_micros(times[0]) if times else None,
        last=from_micros(times[-1]) if times else None,
    )
    return block, report
