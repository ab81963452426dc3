"""The one price-series format: what the recorder writes and the paper world replays.

Columns: `timestamp` (UTC: ISO-8601 with `Z` or an offset, or integer epoch seconds; in
Parquet also a timestamp column), `token` (coin type or FA address), `usdPrice` (exact
decimal text) required; `symbol`, `nativePrice`, `source` (where the price came from: one
of `price_sources.PRICE_SOURCES`) optional. CSV, or Parquet (with the
optional `pyarrow` dependency: `pip install 'aptos-dca-bot[parquet]'`). In Parquet, prices
are stored as text so they stay exact; a float price column is refused.

Reading tolerates what recordings contain: rows in any order, a repeated (token,
timestamp) keeps the last row (counted as a duplicate), a bad row is skipped and counted.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bot.aptos.tokens import token_key
from bot.clock import ensure_utc, from_micros
from bot.money import format_decimal
from bot.paper.core.price_sources import add_source_column, check_source, read_source
from bot.paper.core.prices import PricePath, check_price
from bot.paper.core.series_cells import BAD_CELL, parse_price, parse_time, unusable
from bot.skipped_rows import SkippedRows

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "REQUIRED_COLUMNS",
    "SeriesBlock",
    "SeriesReport",
    "SeriesRow",
    "append_series",
    "append_series_csv",
    "append_series_parquet",
    "latest_times",
    "load_series",
    "load_series_csv",
    "load_series_parquet",
    "write_series",
    "write_series_blocks",
    "write_series_csv",
    "write_series_parquet",
]

REQUIRED_COLUMNS: Final = ("timestamp", "token", "usdPrice")
_COLUMNS: Final = ("timestamp", "token", "symbol", "usdPrice", "nativePrice", "source")


@dataclass(frozen=True)
class SeriesReport:
    """What a load read: data rows, bad rows skipped, duplicates replaced."""

    rows: int
    skipped: int
    duplicates: int
    sources: frozenset[str | None] = field(default=frozenset(), compare=False)
    """The distinct `source` values of the rows read (None: a row without one)."""
    skipped_rows: SkippedRows | None = field(default=None, compare=False)
    """Where and why rows were skipped (`line()`: the one summary line to show)."""


@dataclass(frozen=True)
class SeriesRow:
    """One price observation."""

    timestamp: datetime
    token: str
    usd_price: Decimal
    symbol: str | None = None
    native_price: Decimal | None = None
    source: str | None = None
    """One of `price_sources.PRICE_SOURCES`; None: unknown."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "timestamp", ensure_utc(self.timestamp))
        object.__setattr__(self, "token", token_key(self.token))
        check_price(self.usd_price)
        if self.native_price is not None:
            check_price(self.native_price)
        check_source(self.source)


def _paths(
    records: Iterator[tuple[int, dict[str, Any] | None]],
    key_of: Callable[[str], str],
    skipped: SkippedRows,
) -> tuple[dict[str, PricePath], SeriesReport]:
    """Price paths of the readable `(position, record)`s; the others counted in `skipped`."""
    points: dict[str, dict[datetime, Decimal]] = {}
    sources: set[str | None] = set()
    duplicates = 0
    for position, record in records:
        skipped.rows += 1
        if record is None:
            skipped.skip(position, "unreadable line (check the quoting)")
            continue
        try:
            moment = parse_time(record.get("timestamp") or "")
            key = key_of(str(record.get("token") or ""))
            price = parse_price(record.get("usdPrice") or "")
        except BAD_CELL:
            skipped.skip(position, unusable(record, key_of))
            continue
        series = points.setdefault(key, {})
        duplicates += moment in series
        series[moment] = price
        sources.add(read_source(record.get("source")))
    paths = {
        key: PricePath(sorted(series), [series[t] for t in sorted(series)])
        for key, series in points.items()
    }
    report = SeriesReport(
        skipped.rows, skipped.skipped, duplicates, frozenset(sources), skipped_rows=skipped
    )
    return paths, report


def load_series_csv(
    path: Path, key_of: Callable[[str], str] = token_key
) -> tuple[dict[str, PricePath], SeriesReport]:
    """Read a CSV series: one `PricePath` per token key.

    `key_of` maps the token text to its key: pass `PaperTokens.key_of` to merge the coin
    type and FA spellings of one token (the default keeps them apart).

    Raises:
        ValueError: the header lacks a required column.
    """
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: missing column(s): {', '.join(missing)}")

        def records() -> Iterator[tuple[int, dict[str, Any] | None]]:
            while True:
                try:
                    record = next(reader)
                except StopIteration:
                    return
                except csv.Error:
                    yield reader.line_num, None
                else:
                    yield reader.line_num, record

        return _paths(records(), key_of, SkippedRows(str(path)))


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(
            "Parquet needs pyarrow: pip install 'aptos-dca-bot[parquet]' (or use CSV)"
        ) from None
    return pa, pq


def load_series_parquet(
    path: Path, key_of: Callable[[str], str] = token_key
) -> tuple[dict[str, PricePath], SeriesReport]:
    """Read a Parquet series (same columns as CSV; prices as text or decimal, not float).

    Raises:
        ValueError: missing column, a float price column, or pyarrow not installed.
    """
    pa, pq = _pyarrow()
    table = pq.read_table(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: missing column(s): {', '.join(missing)}")
    if pa.types.is_floating(table.schema.field("usdPrice").type):
        raise ValueError(f"{path}: usdPrice is a float column; store prices as text or decimal")
    wanted = [c for c in _COLUMNS if c in table.column_names]
    numbered = enumerate(table.select(wanted).to_pylist(), start=1)
    return _paths(numbered, key_of, SkippedRows(str(path), unit="row"))


def load_series(
    path: Path, key_of: Callable[[str], str] = token_key
) -> tuple[dict[str, PricePath], SeriesReport]:
    """Read a series file: Parquet for `.parquet`/`.pq`, CSV otherwise."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return load_series_parquet(path, key_of)
    return load_series_csv(path, key_of)


def _cells(row: SeriesRow) -> tuple[str, str, str, str, str, str]:
    native = "" if row.native_price is None else format_decimal(row.native_price)
    stamp = row.timestamp.isoformat().replace("+00:00", "Z")
    usd = format_decimal(row.usd_price)
    return stamp, row.token, row.symbol or "", usd, native, row.source or ""


def write_series_csv(path: Path, rows: Iterable[SeriesRow]) -> int:
    """Write rows as CSV; returns how many were written."""
    written = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(_COLUMNS)
        for row in rows:
            writer.writerow(_cells(row))
            written += 1
    return written


def write_series_parquet(path: Path, rows: Iterable[SeriesRow]) -> int:
    """Write rows as Parquet (timestamps as UTC timestamps, prices as exact text)."""
    pa, pq = _pyarrow()
    items = list(rows)
    table = pa.table(
        {
            "timestamp": pa.array([r.timestamp for r in items], type=pa.timestamp("us", tz="UTC")),
            "token": [r.token for r in items],
            "symbol": [r.symbol for r in items],
            "usdPrice": [format_decimal(r.usd_price) for r in items],
            "nativePrice": [
                None if r.native_price is None else format_decimal(r.native_price) for r in items
            ],
            "source": pa.array([r.source for r in items], type=pa.string()),
        }
    )
    pq.write_table(table, path)
    return len(items)


def write_series(path: Path, rows: Iterable[SeriesRow]) -> int:
    """Write a series file: Parquet for `.parquet`/`.pq`, CSV otherwise."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return write_series_parquet(path, rows)
    return write_series_csv(path, rows)


# --- Appending and columnar writing (the recorder, imports and synthetic series) ---------


def _price_text(value: object) -> str:
    """Exact text of a price, checked: a finite `Decimal` > 0."""
    value = check_price(value)
    text = str(value)  # plain unless it has an exponent: then format_decimal's way
    if "E" in text:
        return format_decimal(value)
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass(frozen=True)
class SeriesBlock:
    """One token's prices as parallel columns: long series without a row object per tick.

    `times_us` are integer microseconds since the POSIX epoch (UTC); any sequence of ints,
    a NumPy int64 array included. `source` is every row's source (`PRICE_SOURCES`), unless
    `row_sources` gives one per row (an imported file with its own `source` column).
    """

    token: str
    times_us: Sequence[int] | npt.NDArray[np.int64]
    usd_prices: Sequence[Decimal]
    symbol: str | None = None
    source: str | None = None
    row_sources: Sequence[str | None] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "token", token_key(self.token))
        if len(self.times_us) != len(self.usd_prices):
            raise ValueError(f"{len(self.times_us)} times but {len(self.usd_prices)} prices")
        check_source(self.source)
        if self.row_sources is not None:
            if len(self.row_sources) != len(self.times_us):
                raise ValueError(f"{len(self.times_us)} times but {len(self.row_sources)} sources")
            for value in set(self.row_sources):
                check_source(value)

    def sources(self) -> Sequence[str | None]:
        """Each row's source."""
        if self.row_sources is not None:
            return self.row_sources
        return [self.source] * len(self.times_us)

    def rows(self) -> list[SeriesRow]:
        """The block as rows (for appending to an existing file)."""
        return [
            SeriesRow(
                from_micros(int(us)),
                self.token,
                price,
                self.symbol,
                source=source,
            )
            for us, price, source in zip(
                self.times_us, self.usd_prices, self.sources(), strict=True
            )
        ]


def _block_columns(
    blocks: Sequence[SeriesBlock],
) -> tuple[Any, Any, list[str], list[str | None] | None]:
    """(times µs, block index, price texts, row sources) of all rows, ordered by time.

    The sort is stable (same time: the blocks' order). Row sources are None when every
    block has one source for all its rows (then the block index says it).
    """
    import numpy as np

    times = np.concatenate(
        [np.asarray(b.times_us, dtype=np.int64) for b in blocks] or [np.empty(0, np.int64)]
    )
    owner = np.repeat(np.arange(len(blocks), dtype=np.int32), [len(b.times_us) for b in blocks])
    prices = [_price_text(p) for b in blocks for p in b.usd_prices]
    sources = None
    if any(b.row_sources is not None for b in blocks):
        sources = [source for b in blocks for source in b.sources()]
    if len(times) > 1 and bool(np.any(times[1:] < times[:-1])):
        order = np.argsort(times, kind="stable")  # same time: the blocks' order
        times, owner = times[order], owner[order]
        picks = order.tolist()
        prices = [prices[i] for i in picks]
        if sources is not None:
            sources = [sources[i] for i in picks]
    return times, owner, prices, sources


def _parquet_schema(pa: Any) -> Any:
    """The schema this module writes (and normalises appended files to)."""
    return pa.schema(
        [
            ("timestamp", pa.timestamp("us", tz="UTC")),
            ("token", pa.string()),
            ("symbol", pa.string()),
            ("usdPrice", pa.string()),
            ("nativePrice", pa.string()),
            ("source", pa.string()),
        ]
    )


def write_series_blocks(path: Path, blocks: Sequence[SeriesBlock]) -> int:
    """Write columnar blocks as a new series file (CSV or Parquet by suffix), rows by time.

    The fast writer for long series: no row object per tick (a year of minutes, 525,600
    rows, takes about half a second beyond formatting the prices); returns the row count.
    """
    import numpy as np

    times, owner, prices, row_sources = _block_columns(blocks)
    tokens = [b.token for b in blocks]
    symbols = [b.symbol for b in blocks]
    sources = [b.source for b in blocks]
    if path.suffix.lower() in (".parquet", ".pq"):
        pa, pq = _pyarrow()

        def repeated(values: list[str | None]) -> Any:
            dictionary = pa.array(values, type=pa.string())
            return pa.DictionaryArray.from_arrays(pa.array(owner), dictionary).cast(pa.string())

        table = pa.table(
            {
                "timestamp": pa.array(times, type=pa.timestamp("us", tz="UTC")),
                "token": repeated(list(tokens)),
                "symbol": repeated(symbols),
                "usdPrice": pa.array(prices, type=pa.string()),
                "nativePrice": pa.nulls(len(times), type=pa.string()),
                "source": (
                    repeated(sources)
                    if row_sources is None
                    else pa.array(row_sources, type=pa.string())
                ),
            },
            schema=_parquet_schema(pa),
        )
        # Prices are nearly all distinct: a dictionary for them only costs memory and time.
        pq.write_table(table, path, use_dictionary=["token", "symbol", "source"])
        return len(times)
    whole_seconds = not bool(np.any(times % 1_000_000))
    stamps = np.datetime_as_string(
        times.astype("datetime64[us]"), unit="s" if whole_seconds else "us"
    )
    labels = [(token, symbol or "") for token, symbol in zip(tokens, symbols, strict=True)]
    cells = [source or "" for source in sources]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(_COLUMNS)
        if row_sources is None:
            writer.writerows(
                (f"{stamp}Z", *labels[index], price, "", cells[index])
                for stamp, index, price in zip(stamps.tolist(), owner.tolist(), prices, strict=True)
            )
        else:
            writer.writerows(
                (f"{stamp}Z", *labels[index], price, "", source or "")
                for stamp, index, price, source in zip(
                    stamps.tolist(), owner.tolist(), prices, row_sources, strict=True
                )
            )
    return len(times)


def _csv_header(path: Path) -> list[str] | None:
    """The header of an existing, non-empty CSV file; None when absent or empty."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return next(csv.reader(handle), None)


def _mend_last_line(path: Path, width: int) -> None:
    """End an unterminated last line; remove it when it is torn (fewer cells than `width`).

    A row cut short by a crash mid-append could otherwise read as a valid row with a
    truncated price; a complete last row merely lacking its newline is kept.
    """
    with path.open("rb+") as handle:
        size = handle.seek(0, 2)
        handle.seek(size - 1)
        if handle.read(1) in (b"\n", b"\r"):
            return
        start = max(0, size - 65_536)
        handle.seek(start)
        tail = handle.read()
        cut = tail.rfind(b"\n")
        last = tail[cut + 1 :].decode("utf-8", errors="replace")
        if cut >= 0 and len(next(csv.reader([last]), [])) < width:
            handle.truncate(start + cut + 1)
        else:
            handle.write(b"\n")


def append_series_csv(path: Path, rows: Iterable[SeriesRow]) -> int:
    """Append rows to a CSV series (created with a header when absent or empty).

    An existing file keeps its own column order; columns it lacks are not written (but
    a file without a `source` column gains one, empty in its old rows, when a new row
    has a source), and columns of its own that this format lacks are left empty. A last
    line without its newline is ended, or removed when it has fewer cells than the
    header (a torn write).

    Raises:
        ValueError: the existing header lacks a required column.
    """
    items = list(rows)
    header = _csv_header(path)
    if header is None:
        return write_series_csv(path, items)
    header = [name.strip() for name in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ValueError(f"{path}: cannot append, missing column(s): {', '.join(missing)}")
    _mend_last_line(path, len(header))
    if "source" not in header and any(row.source is not None for row in items):
        header = add_source_column(path, header)
    with path.open("a", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, restval="", extrasaction="ignore")
        for row in items:
            writer.writerow(dict(zip(_COLUMNS, _cells(row), strict=True)))
    return len(items)


def append_series_parquet(path: Path, rows: Iterable[SeriesRow]) -> int:
    """Append rows to a Parquet series: the file is rewritten, then atomically replaced.

    Parquet files cannot grow in place; the old rows are copied as Arrow data (no
    per-row Python work), so the file on disk is always complete, even after a crash.

    Raises:
        ValueError: the existing file cannot be converted to this module's columns.
    """
    pa, pq = _pyarrow()
    schema = _parquet_schema(pa)
    items = list(rows)
    new = pa.table(
        {
            "timestamp": pa.array([r.timestamp for r in items], type=pa.timestamp("us", tz="UTC")),
            "token": pa.array([r.token for r in items], type=pa.string()),
            "symbol": pa.array([r.symbol for r in items], type=pa.string()),
            "usdPrice": pa.array([_price_text(r.usd_price) for r in items], type=pa.string()),
            "nativePrice": pa.array(
                [None if r.native_price is None else _price_text(r.native_price) for r in items],
                type=pa.string(),
            ),
            "source": pa.array([r.source for r in items], type=pa.string()),
        },
        schema=schema,
    )
    if path.exists():
        old = pq.read_table(path)
        try:
            for name in schema.names:
                if name not in old.column_names:
                    old = old.append_column(name, pa.nulls(old.num_rows, type=pa.string()))
            old = old.select(schema.names).cast(schema)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, KeyError) as exc:
            raise ValueError(f"{path}: cannot append to this Parquet file: {exc}") from None
        new = pa.concat_tables([old, new])
    partial = path.with_name(f".{path.name}.partial")
    pq.write_table(new, partial, use_dictionary=["token", "symbol", "source"])
    os.replace(partial, path)
    return len(items)


def append_series(path: Path, rows: Iterable[SeriesRow]) -> int:
    """Append rows to a series file (Parquet for `.parquet`/`.pq`, CSV otherwise)."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return append_series_parquet(path, rows)
    return append_series_csv(path, rows)


def _csv_pairs(path: Path) -> Iterator[tuple[object, object]]:
    """(timestamp, token) cells of a CSV series; stops quietly at a torn last line."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = [name.strip() for name in next(reader, None) or ()]
        if "timestamp" not in header or "token" not in header:
            return
        at, of = header.index("timestamp"), header.index("token")
        width = max(at, of)
        try:
            for cells in reader:
                if len(cells) > width:
                    yield cells[at], cells[of]
        except csv.Error:
            return  # a line cut by a crash mid-append: what was read is what there is


def _parquet_pairs(path: Path) -> Iterable[tuple[object, object]]:
    """(timestamp, token) of a Parquet series; one row per token when times are typed."""
    pa, pq = _pyarrow()
    table = pq.read_table(path, columns=["timestamp", "token"])
    times = "timestamp"
    if pa.types.is_timestamp(table.schema.field("timestamp").type):
        table = table.group_by("token").aggregate([("timestamp", "max")])
        times = "timestamp_max"
    return zip(table.column(times).to_pylist(), table.column("token").to_pylist(), strict=True)


def latest_times(path: Path, key_of: Callable[[str], str] = token_key) -> dict[str, datetime]:
    """The latest timestamp of each token in a series file ({} when there is no file).

    Reads only the timestamp and token columns; unreadable rows are ignored.
    """
    if not path.exists() or path.stat().st_size == 0:
        return {}
    parquet = path.suffix.lower() in (".parquet", ".pq")
    pairs = _parquet_pairs(path) if parquet else _csv_pairs(path)
    keys: dict[str, str | None] = {}
    latest: dict[str, datetime] = {}
    for stamp, token in pairs:
        text = str(token or "")
        if text not in keys:
            try:
                keys[text] = key_of(text)
            except (ValueError, LookupError):
                keys[text] = None
        key = keys[text]
        try:
            moment = parse_time(stamp or "")
        except (ValueError, TypeError, OverflowError):
            continue
        if key is not None and (key not in latest or moment > latest[key]):
            latest[key] = moment
    return latest
