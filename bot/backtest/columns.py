"""The column-wise reader of series files: pyarrow batches → exact int64 arrays.

Timestamps go through Arrow's ISO-8601 cast (a zone is required) or are integer epoch
seconds; a price's decimal text becomes its own digits as an int64 and its number of
fraction digits (`"5.125"` → 5125, 3) — long or exponent-form text goes through an
exact `decimal128` cast instead — and each token's prices are then put on one exponent
(its most fraction digits). Nothing passes through a float. Whatever this reader cannot
take whole raises `Untidy`, and the caller reads the file row by row instead.

A Parquet file is read a column at a time into arrays of its row count (the price
column of a large file on two threads, half of its row groups each); a CSV file in
blocks, joined at the end. Rows are then grouped by token without sorting the whole
file when it is already in time order, and a file of one token keeps no token column.
The optional `source` column is only gathered: its distinct values (for the credit line).
"""

from __future__ import annotations

import csv
import ctypes
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bot.clock import MICROS_PER_SECOND
from bot.paper.core.price_sources import read_source
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
_PARQUET_BUFFER: Final = 1 << 16
# Arrow's CSV reader holds several blocks and their converted columns at once: 4 MiB
# blocks peaked at 53 MiB of Arrow memory on a year of minutes, 256 KiB ones at 16 MiB.
_CSV_BLOCK: Final = 1 << 18
_THREADED_ROWS: Final = 1 << 20
"""A Parquet file with more rows converts its prices (the slow column) on two threads."""
_SOURCE: Final = "source"

Sources = set[str | None]
"""The distinct `source` values of a file's rows (None: a row without one)."""


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def _parquet_rows(path: Path) -> int:
    """A Parquet file's row count (its metadata), once its columns are checked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    _check_columns(path, parquet.schema_arrow.names)
    if pa.types.is_floating(parquet.schema_arrow.field("usdPrice").type):
        raise ValueError(f"{path}: usdPrice is a float column; store prices as text or decimal")
    return int(parquet.metadata.num_rows)


def _parquet_column(path: Path, name: str) -> Iterator[Any]:
    """One column of a Parquet file, batch by batch, streamed in small reads.

    A column at a time: Arrow keeps what it read of a column resident, so reading the
    three columns together holds them all at once (several megabytes more at the peak).
    """
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(
        path,
        read_dictionary=[name] if name in ("token", _SOURCE) else None,
        pre_buffer=False,
        buffer_size=_PARQUET_BUFFER,
    )
    for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, columns=[name], use_threads=False):
        yield batch.column(0)


def _csv_batches(path: Path) -> Iterator[Any]:
    """A CSV file's record batches (required columns, and `source` when the file has it)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    header = _header(path)
    _check_columns(path, header)
    wanted = [*REQUIRED_COLUMNS, *([_SOURCE] if _SOURCE in header else [])]
    options = pacsv.ConvertOptions(
        include_columns=wanted,
        column_types={name: pa.string() for name in wanted},
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


def _source_values(column: Any) -> Sources:
    """The distinct sources of a batch's `source` column (trimmed; empty is None)."""
    import pyarrow.compute as pc

    if hasattr(column, "dictionary"):  # (a dictionary-read Parquet column)
        values = column.dictionary.to_pylist() if column.null_count < len(column) else []
        found = {read_source(v) for v in values}
        return found | ({None} if column.null_count else set())
    return {read_source(v) for v in pc.unique(column).to_pylist()}


def _parquet_sources(path: Path) -> Sources:
    """The distinct sources of a Parquet file's rows: `{None}` without the column."""
    import pyarrow.parquet as pq

    if _SOURCE not in pq.ParquetFile(path).schema_arrow.names:
        return {None}
    found: Sources = set()
    for column in _parquet_column(path, _SOURCE):
        found |= _source_values(column)
    return found


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
            return np.asarray(column.to_numpy(), dtype=np.int64) * MICROS_PER_SECOND
        else:
            text = pc.utf8_trim_whitespace(column)
            if bool(pc.all(pc.match_substring_regex(text, r"^-?[0-9]+$")).as_py()):
                seconds = pc.cast(text, pa.int64()).to_numpy()
                return np.asarray(seconds, dtype=np.int64) * MICROS_PER_SECOND
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


class _Keys:
    """Token keys in order of first appearance, and each token text's index among them."""

    def __init__(self, key_of: KeyOf) -> None:
        self.key_of = key_of
        self.keys: list[str] = []
        self._index: dict[str, int] = {}
        self._texts: dict[str, int] = {}

    def index(self, text: str) -> int:
        """The index of the key of a token text (a new key is appended).

        Raises:
            Untidy: the text names no token.
        """
        found = self._texts.get(text)
        if found is None:
            try:
                key = self.key_of(text.strip())
            except (ValueError, LookupError) as exc:
                raise Untidy(str(exc)) from None
            found = self._index.get(key)
            if found is None:
                found = self._index[key] = len(self.keys)
                self.keys.append(key)
            self._texts[text] = found
        return found


def _tokens(column: Any, keys: _Keys) -> npt.NDArray[np.int32]:
    """Per row, the index of its token key (spellings of one token merged)."""
    import pyarrow.compute as pc

    if column.null_count:
        raise Untidy("empty token")
    encoded = column if hasattr(column, "dictionary") else pc.dictionary_encode(column)
    mapping = [keys.index(str(text)) for text in encoded.dictionary.to_pylist()]
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int32)
    return np.asarray(mapping, dtype=np.int32)[indices]


_SCALE_CHUNK: Final = 1 << 16
_POW10: Final = np.array([10**k for k in range(19)], dtype=np.int64)
_LIMITS: Final = np.array([_INT64_MAX // 10**k for k in range(19)], dtype=np.int64)
"""`_LIMITS[k]`: the largest int64 that can be multiplied by 10**k."""


def _one_scale(
    coefs: npt.NDArray[Any], places: npt.NDArray[np.int16]
) -> tuple[npt.NDArray[Any], int]:
    """One token's prices on one exponent (its most fraction digits), exactly, in place.

    A series that would overflow int64 on that scale is carried as Python integers.
    Worked chunk by chunk, so the temporary arrays stay small.
    """
    if not coefs.size:
        return coefs, 0
    most, least = int(places.max()), int(places.min())
    if most == least:
        return coefs, -most
    chunks = [slice(i, i + _SCALE_CHUNK) for i in range(0, coefs.size, _SCALE_CHUNK)]
    if coefs.dtype != object:
        if least >= most - 18 and not any(
            bool(np.any(coefs[part] > _LIMITS[most - places[part]])) for part in chunks
        ):
            for part in chunks:
                coefs[part] *= _POW10[most - places[part]]
            return coefs, -most
        coefs = coefs.astype(object)
    for own in (int(k) for k in np.unique(places) if k != most):
        mask = places == own
        coefs[mask] = coefs[mask] * 10 ** (most - own)
    return coefs, -most


@contextmanager
def _lean_arrow() -> Iterator[None]:
    """Arrow on the system allocator while a file is read.

    Its default allocator keeps freed blocks for reuse; reading a large file batch by
    batch then holds several times the data at its peak. The system allocator returns
    them, so the peak is about the arrays kept. The previous allocator is restored, and
    the C heap trimmed (`_trim_heap`).
    """
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)
        _trim_heap()


def _trim_heap() -> None:
    """Give the C heap's free memory back to the system (glibc's `malloc_trim`).

    The batches of a file, freed one by one among the arrays kept, leave the heap full of
    holes the C library keeps: about 28 MB after a year of minutes read from CSV, held for
    the whole run and under its peak memory. A no-op where the C library has no
    `malloc_trim` (macOS, musl). ctypes is loaded already (NumPy uses it).
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


class _Whole:
    """One column's values for every row of a Parquet file, written batch by batch.

    Python-integer prices (a batch of them) turn the array into an object array.
    """

    def __init__(self, rows: int, dtype: type) -> None:
        self.array: npt.NDArray[Any] = np.empty(rows, dtype=dtype)
        self.filled = 0

    def add(self, values: npt.NDArray[Any]) -> None:
        """The next batch's values."""
        end = self.filled + values.size
        if end > self.array.size:
            raise Untidy("more rows than the file's metadata counts")
        if values.dtype == object and self.array.dtype != object:
            self.array = self.array.astype(object)
        self.array[self.filled : end] = values
        self.filled = end

    def values(self) -> npt.NDArray[Any]:
        """Every row's value."""
        return self.array[: self.filled]


class _TokenColumn(_Whole):
    """The token column: not written at all while every row is of the first token.

    Pages of `np.empty` are touched only when written: unused, it costs no memory.
    """

    def __init__(self, rows: int) -> None:
        super().__init__(rows, np.int32)
        self.one_token = True

    def add(self, values: npt.NDArray[Any]) -> None:
        """The next batch's token indices."""
        if self.one_token and not bool(values.any()):
            self.filled += values.size
            return
        if self.one_token:
            self.one_token = False
            self.array[: self.filled] = 0
        super().add(values)

    def values(self) -> npt.NDArray[Any]:
        """Every row's token index; empty when all rows are of the first token."""
        return np.empty(0, dtype=np.int32) if self.one_token else super().values()


_Arrays = tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]]
"""Every row's (time, price coefficient, fraction digits, token index); token indices
empty when every row is of the first token."""


def _parquet_arrays(path: Path, keys: _Keys) -> _Arrays:
    rows = _parquet_rows(path)
    times = _Whole(rows, np.int64)
    for column in _parquet_column(path, "timestamp"):
        times.add(_times(column))
    prices = _threaded_prices(path, rows) if rows >= _THREADED_ROWS else None
    if prices is None:
        coefs, places = _Whole(rows, np.int64), _Whole(rows, np.int16)
        for column in _parquet_column(path, "usdPrice"):
            batch_coefs, batch_places = _prices(column)
            coefs.add(batch_coefs)
            places.add(batch_places)
        prices = (coefs.values(), places.values())
    tokens = _TokenColumn(rows)
    for column in _parquet_column(path, "token"):
        tokens.add(_tokens(column, keys))
    if not times.filled == prices[0].size == tokens.filled:
        raise Untidy("columns of different lengths")
    return times.values(), prices[0], prices[1], tokens.values()


class _Objects(Exception):
    """A batch of prices beyond int64: the threaded conversion gives way."""


def _threaded_prices(
    path: Path, rows: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int16]] | None:
    """Price coefficients and fraction digits, half of the row groups on each of two threads.

    Each thread writes its own rows of the two arrays (Arrow's reading and conversions
    let go of the interpreter). None when it cannot be split (one row group) or when a
    price is beyond int64: the caller then converts the column in one pass.
    """
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    counts = [int(metadata.row_group(i).num_rows) for i in range(metadata.num_row_groups)]
    if len(counts) < 2 or sum(counts) != rows:
        return None
    half = min(range(1, len(counts)), key=lambda i: abs(2 * sum(counts[:i]) - rows))
    middle = sum(counts[:half])
    spans = [(list(range(half)), 0, middle), (list(range(half, len(counts))), middle, rows)]
    coefs = np.empty(rows, dtype=np.int64)
    places = np.empty(rows, dtype=np.int16)

    def fill(span: tuple[list[int], int, int]) -> None:
        groups, start, end = span
        parquet = pq.ParquetFile(path, pre_buffer=False, buffer_size=_PARQUET_BUFFER)
        batches = parquet.iter_batches(
            batch_size=_BATCH_ROWS, columns=["usdPrice"], row_groups=groups, use_threads=False
        )
        for batch in batches:
            batch_coefs, batch_places = _prices(batch.column(0))
            if batch_coefs.dtype == object:
                raise _Objects
            stop = start + batch_coefs.size
            if stop > end:
                raise Untidy("more rows than the file's metadata counts")
            coefs[start:stop] = batch_coefs
            places[start:stop] = batch_places
            start = stop
        if start != end:
            raise Untidy("fewer rows than the file's metadata counts")

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(fill, spans))
    except _Objects:
        return None
    return coefs, places


def _csv_arrays(path: Path, keys: _Keys, sources: Sources) -> _Arrays:
    parts: list[tuple[npt.NDArray[Any], ...]] = []
    for batch in _csv_batches(path):
        names = batch.schema.names
        sources.update(_source_values(batch.column(_SOURCE)) if _SOURCE in names else {None})
        batch_coefs, batch_places = _prices(batch.column("usdPrice"))
        batch_times = _times(batch.column("timestamp"))
        parts.append((batch_times, batch_coefs, batch_places, _tokens(batch.column("token"), keys)))
    if not parts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.empty(0, dtype=np.int16), np.empty(0, dtype=np.int32)
    if any(part[1].dtype == object for part in parts):  # Python-integer prices somewhere
        parts = [(t, c.astype(object), p, k) for t, c, p, k in parts]
    # A column at a time, its parts freed before the next is joined (a smaller peak).
    columns = [list(column) for column in zip(*parts, strict=True)]
    del parts
    times, coefs, places, tokens = (_join(columns, i) for i in range(4))
    if not bool(tokens.any()):
        tokens = tokens[:0]  # one token
    return times, coefs, places, tokens


def _join(columns: list[list[npt.NDArray[Any]]], index: int) -> npt.NDArray[Any]:
    """The parts of column `index` joined into one array; the parts are let go."""
    joined = np.concatenate(columns[index])
    columns[index] = []
    return joined


def read_columns(
    path: Path, key_of: KeyOf
) -> tuple[dict[str, Arrays], int, int, frozenset[str | None]]:
    """Each token's points in time order (by key; spellings merged by `key_of`).

    A repeated (token, time) keeps the file's last row. Also returns the rows read,
    the duplicates dropped and the distinct `source` values of the rows (None: a row
    without one; `{None}` for a file without the column).

    Raises:
        Untidy: a cell this reader cannot take (the row reader must).
        ValueError: a required column is missing, or a float price column (Parquet).
    """
    keys = _Keys(key_of)
    sources: Sources = set()
    with _lean_arrow():
        if _is_parquet(path):
            times, coefs, places, tokens = _parquet_arrays(path, keys)
            if times.size:
                sources = _parquet_sources(path)
        else:
            times, coefs, places, tokens = _csv_arrays(path, keys, sources)
    rows = times.size
    if not rows:
        return {}, 0, 0, frozenset()
    found: dict[str, Arrays] = {}
    kept = 0
    for key, rows_of in zip(keys.keys, _groups(tokens, rows, len(keys.keys)), strict=True):
        token_times, token_coefs, token_places = times[rows_of], coefs[rows_of], places[rows_of]
        if not bool(np.all(token_times[1:] >= token_times[:-1])):
            order = np.argsort(token_times, kind="stable")  # a repeated time keeps file order
            token_times, token_coefs = token_times[order], token_coefs[order]
            token_places = token_places[order]
        repeated = token_times[1:] == token_times[:-1]
        if bool(repeated.any()):  # of a repeated (token, time), the last row wins
            keep = np.append(~repeated, True)
            token_times, token_coefs = token_times[keep], token_coefs[keep]
            token_places = token_places[keep]
        kept += token_times.size
        scaled, exponent = _one_scale(token_coefs, token_places)
        found[key] = (token_times, scaled, exponent)
    return found, rows, rows - kept, frozenset(sources)


def _groups(
    tokens: npt.NDArray[np.int32], rows: int, count: int
) -> Sequence[slice | npt.NDArray[np.intp]]:
    """Each token's rows in file order: a slice when they are together, else their indices.

    `tokens` is empty when every row is of the one token.
    """
    if not tokens.size:  # (a key named only by an unused dictionary entry has no rows)
        return [slice(0, rows)] + [slice(rows, rows)] * (count - 1)
    bounds = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(tokens, minlength=count), out=bounds[1:])
    edges = [(int(bounds[i]), int(bounds[i + 1])) for i in range(count)]
    if bool(np.all(tokens[1:] >= tokens[:-1])):  # already token by token
        return [slice(low, high) for low, high in edges]
    # A stable sort by token (a radix sort on small integers): each token's rows in
    # file order; a file in time order (the recorder's, the synthesiser's) is done.
    order = np.argsort(tokens.astype(np.int16) if count <= 1 << 15 else tokens, kind="stable")
    return [order[low:high] for low, high in edges]
