"""The one price-series format: what the recorder writes and the paper world replays.

Columns: `timestamp` (UTC: ISO-8601 with `Z` or an offset, or integer epoch seconds; in
Parquet also a timestamp column), `token` (coin type or FA address), `usdPrice` (exact
decimal text) required; `symbol`, `nativePrice` optional. CSV, or Parquet (with the
optional `pyarrow` dependency: `pip install 'aptos-dca-bot[parquet]'`). In Parquet, prices
are stored as text so they stay exact; a float price column is refused.

Reading tolerates what recordings contain: rows in any order, a repeated (token,
timestamp) keeps the last row (counted as a duplicate), a bad row is skipped and counted.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from bot.aptos.tokens import token_key
from bot.clock import ensure_utc
from bot.money import format_decimal, parse_decimal
from bot.paper.core.prices import PricePath

__all__ = [
    "REQUIRED_COLUMNS",
    "SeriesReport",
    "SeriesRow",
    "load_series",
    "load_series_csv",
    "load_series_parquet",
    "write_series",
    "write_series_csv",
    "write_series_parquet",
]

REQUIRED_COLUMNS: Final = ("timestamp", "token", "usdPrice")
_COLUMNS: Final = ("timestamp", "token", "symbol", "usdPrice", "nativePrice")
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class SeriesReport:
    """What a load read: data rows, bad rows skipped, duplicates replaced."""

    rows: int
    skipped: int
    duplicates: int


@dataclass(frozen=True)
class SeriesRow:
    """One price observation."""

    timestamp: datetime
    token: str
    usd_price: Decimal
    symbol: str | None = None
    native_price: Decimal | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "timestamp", ensure_utc(self.timestamp))
        object.__setattr__(self, "token", token_key(self.token))
        for price in (self.usd_price, self.native_price):
            if price is None:
                continue
            if not isinstance(price, Decimal):
                raise TypeError(f"a price must be a Decimal, got {type(price).__name__}")
            if not price > 0:
                raise ValueError(f"a price must be positive, got {price}")


def _parse_time(value: object) -> datetime:
    """A timestamp cell: aware datetime, ISO text (naive refused) or epoch seconds."""
    if isinstance(value, datetime):
        return ensure_utc(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _EPOCH + timedelta(seconds=value)
    text = str(value).strip()
    if text.removeprefix("-").isdigit():
        return _EPOCH + timedelta(seconds=int(text))
    return ensure_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))


def _price(value: object) -> Decimal:
    if isinstance(value, float):
        raise TypeError("float price")
    price = parse_decimal(value if isinstance(value, Decimal | int) else str(value))
    if not price > 0:
        raise ValueError("price must be positive")
    return price


def _paths(
    records: Iterator[dict[str, Any] | None], key_of: Callable[[str], str]
) -> tuple[dict[str, PricePath], SeriesReport]:
    points: dict[str, dict[datetime, Decimal]] = {}
    rows = skipped = duplicates = 0
    for record in records:
        rows += 1
        try:
            if record is None:
                raise ValueError("unreadable line")
            moment = _parse_time(record.get("timestamp") or "")
            key = key_of(str(record.get("token") or ""))
            price = _price(record.get("usdPrice") or "")
        except (ValueError, TypeError, LookupError, ArithmeticError):
            skipped += 1
            continue
        series = points.setdefault(key, {})
        duplicates += moment in series
        series[moment] = price
    paths = {
        key: PricePath(sorted(series), [series[t] for t in sorted(series)])
        for key, series in points.items()
    }
    return paths, SeriesReport(rows=rows, skipped=skipped, duplicates=duplicates)


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

        def records() -> Iterator[dict[str, Any] | None]:
            while True:
                try:
                    yield next(reader)
                except StopIteration:
                    return
                except csv.Error:
                    yield None

        return _paths(records(), key_of)


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
    return _paths(iter(table.select(wanted).to_pylist()), key_of)


def load_series(
    path: Path, key_of: Callable[[str], str] = token_key
) -> tuple[dict[str, PricePath], SeriesReport]:
    """Read a series file: Parquet for `.parquet`/`.pq`, CSV otherwise."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return load_series_parquet(path, key_of)
    return load_series_csv(path, key_of)


def _cells(row: SeriesRow) -> tuple[str, str, str, str, str]:
    native = "" if row.native_price is None else format_decimal(row.native_price)
    stamp = row.timestamp.isoformat().replace("+00:00", "Z")
    return stamp, row.token, row.symbol or "", format_decimal(row.usd_price), native


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
        }
    )
    pq.write_table(table, path)
    return len(items)


def write_series(path: Path, rows: Iterable[SeriesRow]) -> int:
    """Write a series file: Parquet for `.parquet`/`.pq`, CSV otherwise."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return write_series_parquet(path, rows)
    return write_series_csv(path, rows)
