"""The column-wise reader of series files: pyarrow batches → exact int64 arrays.

Timestamps go through Arrow's ISO-8601 cast (a zone is required) or are integer epoch
seconds; a price's decimal text becomes its own digits as an int64 and its number of
fraction digits (`"5.125"` → 5125, 3) — long or exponent-form text goes through an
exact `decimal128` cast instead — and each token's prices are then put on one exponent
(its most fraction digits). Nothing passes through a float. Whatever this reader cannot
take whole raises `Untidy`, and the caller reads the file row by row instead.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bot.paper.core.series import REQUIRED_COLUMNS

__all__ = ["Untidy", "read_columns"]

_INT64_MAX: Final = (1 << 63) - 1

KeyOf = Callable[[str], str]
Arrays = tuple[npt.NDArray[np.int64], npt.NDArray[Any], int]
"""One token's (times µs, price coefficients, exponent)."""


class Untidy(Exception):
    """The file needs the row reader."""


def _header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return next(csv.reader(handle), [])


_BATCH_ROWS: Final = 1 << 13
_CSV_BLOCK: Final = 1 << 22


def _batches(path: Path) -> Iterator[Any]:
    """The file's record batches (required columns only): a bounded amount in memory."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if path.suffix.lower() in (".parquet", ".pq"):
        parquet = pq.ParquetFile(path, read_dictionary=["token"], pre_buffer=False)
        _check_columns(path, parquet.schema_arrow.names)
        if pa.types.is_floating(parquet.schema_arrow.field("usdPrice").type):
            raise ValueError(f"{path}: usdPrice is a float column; store prices as text or decimal")
        yield from parquet.iter_batches(
            batch_size=_BATCH_ROWS, columns=list(REQUIRED_COLUMNS), use_threads=False
        )
        return
    _check_columns(path, _header(path))
    options = pacsv.ConvertOptions(
        include_columns=list(REQUIRED_COLUMNS),
        column_types={name: pa.string() for name in REQUIRED_COLUMNS},
        strings_can_be_null=True,
    )
    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=_CSV_BLOCK, use_threads=False),
            convert_options=options,
        )
        yield from reader
    except pa.ArrowInvalid as exc:
        raise Untidy(str(exc)) from None


def _row_count(path: Path) -> int | None:
    """The number of rows of a Parquet file (its metadata); None for CSV."""
    if path.suffix.lower() not in (".parquet", ".pq"):
        return None
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)


def _check_columns(path: Path, names: Iterable[str]) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in set(names)]
    if missing:
        raise ValueError(f"{path}: missing column(s): {', '.join(missing)}")


def _times(column: Any) -> npt.NDArray[np.int64]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count:
        raise Untidy("empty timestamp")
    kind = column.type
    try:
        if pa.types.is_timestamp(kind):
            if kind.tz is None:
                raise Untidy("naive timestamps")
            stamps = pc.cast(column, pa.timestamp("us", tz="UTC"))
        elif pa.types.is_integer(kind):
            return np.asarray(column.to_numpy(), dtype=np.int64) * 1_000_000
        else:
            text = pc.utf8_trim_whitespace(column)
            if bool(pc.all(pc.match_substring_regex(text, r"^-?[0-9]+$")).as_py()):
                seconds = pc.cast(text, pa.int64()).to_numpy()
                return np.asarray(seconds, dtype=np.int64) * 1_000_000
            stamps = pc.cast(text, pa.timestamp("us", tz="UTC"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise Untidy(str(exc)) from None
    return np.asarray(pc.cast(stamps, pa.int64()).to_numpy(), dtype=np.int64)


def _decimal_coefs(array: Any) -> Coefs:
    """Unscaled integers of a decimal128 array (no nulls), and its scale per row.

    int64 when every value fits, else Python integers (an object array), exactly.
    """
    words = 2 * (array.offset + len(array))
    values = np.frombuffer(array.buffers()[1], dtype=np.int64, count=words)
    low = values[2 * array.offset :: 2]
    high = values[2 * array.offset + 1 :: 2]
    places = np.full(len(array), int(array.type.scale), dtype=np.int16)
    if bool(np.all(high == (low >> 63))):
        return low.copy(), places
    unsigned = low.view(np.uint64).astype(object)
    return high.astype(object) * (1 << 64) + unsigned, places


Coefs = tuple[npt.NDArray[Any], npt.NDArray[np.int16]]
"""Per row: the price's unscaled integer and its number of fraction digits."""


def _text_coefs(text: Any) -> Coefs:
    """Decimal text → each price's own digits as an integer, and its fraction digits.

    `"5.125"` → (5125, 3); no float is involved. Arrow refuses (ArrowInvalid) text that
    is not plain decimal digits or has more than 18 of them.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    dot = pc.find_substring(text, ".")
    length = pc.utf8_length(text)
    places = pc.if_else(pc.less(dot, 0), 0, pc.subtract(pc.subtract(length, dot), 1))
    digits = pc.cast(pc.replace_substring(text, ".", "", max_replacements=1), pa.int64())
    return (
        np.asarray(digits.to_numpy(), dtype=np.int64),
        np.asarray(places.to_numpy(), dtype=np.int16),
    )


def _decimal_text_coefs(text: Any) -> Coefs:
    """Long or exponent-form decimal text, through an exact decimal128 cast."""
    import pyarrow as pa
    import pyarrow.compute as pc

    dot = pc.find_substring(text, ".")
    length = pc.utf8_length(text)
    places = pc.if_else(pc.less(dot, 0), 0, pc.subtract(pc.subtract(length, dot), 1))
    scale = int(pc.max(places).as_py() or 0)
    if scale > 30:
        raise Untidy("more than 30 fraction digits")
    return _decimal_coefs(pc.cast(text, pa.decimal128(38, scale)))


def _prices(column: Any) -> Coefs:
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count:
        raise Untidy("empty price")
    kind = column.type
    try:
        if pa.types.is_decimal(kind):
            if not pa.types.is_decimal128(kind):
                raise Untidy("decimal256 prices")
            coefs, places = _decimal_coefs(column)
        else:
            text = column if pa.types.is_string(kind) else column.cast(pa.string())
            try:
                coefs, places = _text_coefs(text)
            except pa.ArrowInvalid:  # long, exponent form or padded: the exact cast
                try:
                    coefs, places = _decimal_text_coefs(text)
                except pa.ArrowInvalid:
                    coefs, places = _decimal_text_coefs(pc.utf8_trim_whitespace(text))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise Untidy(str(exc)) from None
    if coefs.size and not bool(np.all(coefs > 0)):
        raise Untidy("a price ≤ 0")
    return coefs, places


def _tokens(column: Any, key_of: KeyOf, keys: list[str]) -> npt.NDArray[np.int32]:
    """Per row, the index of its token key in `keys` (extended; spellings merged)."""
    import pyarrow.compute as pc

    if column.null_count:
        raise Untidy("empty token")
    encoded = column if hasattr(column, "dictionary") else pc.dictionary_encode(column)
    mapping = []
    for text in encoded.dictionary.to_pylist():
        try:
            key = key_of(str(text).strip())
        except (ValueError, LookupError) as exc:
            raise Untidy(str(exc)) from None
        if key not in keys:
            keys.append(key)
        mapping.append(keys.index(key))
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int32)
    return np.asarray(mapping, dtype=np.int32)[indices]


def _one_scale(
    coefs: npt.NDArray[Any], places: npt.NDArray[np.int16]
) -> tuple[npt.NDArray[Any], int]:
    """One token's prices on one exponent (its most fraction digits), exactly, in place.

    A series that would overflow int64 on that scale is carried as Python integers.
    """
    if not coefs.size:
        return coefs, 0
    most = int(places.max())
    shifts = [int(k) for k in np.unique(places) if k != most]
    if coefs.dtype != object:
        fits = True
        for own in shifts:
            mask = places == own
            factor = 10 ** (most - own)
            if factor > _INT64_MAX or int(coefs[mask].max()) > _INT64_MAX // factor:
                fits = False
                break
        if fits:
            for own in shifts:
                mask = places == own
                coefs[mask] *= 10 ** (most - own)
            return coefs, -most
        coefs = coefs.astype(object)
    for own in shifts:
        mask = places == own
        coefs[mask] = coefs[mask] * 10 ** (most - own)
    return coefs, -most


@contextmanager
def _lean_arrow() -> Iterator[None]:
    """Arrow on the system allocator while a file is read.

    Its default allocator keeps freed blocks for reuse; reading a large file batch by
    batch then holds several times the data at its peak. The system allocator returns
    them, so the peak is about the arrays kept. The previous allocator is restored.
    """
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


class _Columns:
    """The converted columns, batch by batch.

    Written into arrays of the file's row count when it is known (Parquet), so the
    whole is never held twice; else kept in parts and joined at the end.
    """

    def __init__(self, rows: int | None) -> None:
        self.rows = rows
        self.filled = 0
        self.parts: list[tuple[npt.NDArray[Any], ...]] = []
        if rows is not None:
            self.whole: tuple[npt.NDArray[Any], ...] = (
                np.empty(rows, dtype=np.int64),
                np.empty(rows, dtype=np.int64),
                np.empty(rows, dtype=np.int16),
                np.empty(rows, dtype=np.int32),
            )

    def add(self, *columns: npt.NDArray[Any]) -> None:
        """One batch's (times, coefficients, places, tokens)."""
        size = columns[0].size
        if self.rows is not None and columns[1].dtype == object:
            self.parts = [tuple(c[: self.filled] for c in self.whole)]
            self.rows = None  # Python-integer prices: keep parts from here on
        if self.rows is None:
            self.parts.append(columns)
        else:
            for target, column in zip(self.whole, columns, strict=True):
                target[self.filled : self.filled + size] = column
        self.filled += size

    def arrays(self) -> tuple[npt.NDArray[Any], ...]:
        """(times, coefficients, places, tokens) of every row read."""
        if self.rows is not None:
            return tuple(c[: self.filled] for c in self.whole)
        if any(part[1].dtype == object for part in self.parts):
            self.parts = [(t, c.astype(object), p, k) for t, c, p, k in self.parts]
        joined = tuple(np.concatenate(column) for column in zip(*self.parts, strict=True))
        self.parts = []
        return joined


def read_columns(path: Path, key_of: KeyOf) -> tuple[dict[str, Arrays], int, int]:
    """Each token's points in time order (by key; spellings merged by `key_of`).

    A repeated (token, time) keeps the file's last row. Also returns the rows read
    and the duplicates dropped.

    Raises:
        Untidy: a cell this reader cannot take (the row reader must).
        ValueError: a required column is missing, or a float price column (Parquet).
    """
    keys: list[str] = []
    columns = _Columns(_row_count(path))
    with _lean_arrow():
        for batch in _batches(path):
            coefs, places = _prices(batch.column("usdPrice"))
            columns.add(
                _times(batch.column("timestamp")),
                coefs,
                places,
                _tokens(batch.column("token"), key_of, keys),
            )
    rows = columns.filled
    if not rows:
        return {}, 0, 0
    times, coefs, places, tokens = columns.arrays()
    del columns
    if not _ordered(tokens, times):
        order = _order(tokens, times, len(keys))
        times, coefs, places, tokens = times[order], coefs[order], places[order], tokens[order]
        del order
    kept = rows
    repeated = (tokens[1:] == tokens[:-1]) & (times[1:] == times[:-1])
    if bool(repeated.any()):  # of a repeated (token, time), the last row wins
        keep = np.append(~repeated, True)
        kept = int(keep.sum())
        times, coefs, places, tokens = times[keep], coefs[keep], places[keep], tokens[keep]
    bounds = np.searchsorted(tokens, np.arange(len(keys) + 1))
    found: dict[str, Arrays] = {}
    for i, key in enumerate(keys):
        part = slice(int(bounds[i]), int(bounds[i + 1]))
        scaled, exponent = _one_scale(coefs[part], places[part])
        found[key] = (times[part], scaled, exponent)
    return found, rows, rows - kept


def _order(
    tokens: npt.NDArray[np.int32], times: npt.NDArray[np.int64], count: int
) -> npt.NDArray[np.intp]:
    """Row order by (token, time), stable (a repeated time keeps the file's order)."""
    if count <= 1 << 15:
        # Files in time order (the recorder's, the synthesiser's) need only a stable
        # sort by token: a radix sort on small integers.
        order = np.argsort(tokens.astype(np.int16), kind="stable")
        grouped_tokens, grouped_times = tokens[order], times[order]
        if _ordered(grouped_tokens, grouped_times):
            return order
    return np.lexsort((times, tokens))


def _ordered(tokens: npt.NDArray[np.int32], times: npt.NDArray[np.int64]) -> bool:
    """Whether rows already go token by token, each token's times not decreasing."""
    later = tokens[1:] > tokens[:-1]
    same = tokens[1:] == tokens[:-1]
    return bool(np.all(later | (same & (times[1:] >= times[:-1]))))
