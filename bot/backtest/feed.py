"""Price series → exact NumPy arrays, one `TokenSeries` per token, read without row loops.

The input is the one price-series format of `bot.paper.core.series` (CSV or Parquet:
`timestamp`, `token`, `usdPrice`; `symbol`, `nativePrice`, `source` optional; only the
last two are looked at, for the credit line: `price_origin`) or the journal's
`price_ticks`. A file is read column-wise by `bot.backtest.columns`
(pyarrow batches, exact integer conversions, no float); each token's prices become int64
coefficients with one decimal exponent for the series (Python integers in the rare
series whose range does not fit).

Anything the column reader cannot take whole — an empty or malformed cell, a price ≤ 0,
an unknown token text — sends the file to the paper core's own row reader
(`load_series`), whose rules then apply: a bad row is skipped and counted. Either way a
repeated (token, timestamp) keeps the last row and is counted as a duplicate, exactly as
the paper world replays the file.
"""

from __future__ import annotations

import csv
import dataclasses
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bot.aptos.tokens import token_key
from bot.backtest.columns import Untidy, read_columns
from bot.backtest.paths import ArrayPath
from bot.clock import MICROSECOND, from_micros, to_micros
from bot.paper.core.series import load_series

__all__ = [
    "Feed",
    "Gap",
    "TokenSeries",
    "feed_from_points",
    "load_feed",
    "load_journal_feed",
    "price_origin",
]

_WIDE: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
_INT64_MAX: Final = (1 << 63) - 1
_MEAN: Final = Context(prec=28)

KeyOf = Callable[[str], str]

_ORIGINS: Final = {
    "paper": "simulated (recorded from a paper world)",
    "synthetic": "synthetic (bot series synth)",
    "import": "imported (bot series import)",
}
"""What the report says of prices of each source but the provider ("prices are …")."""
_UNSAID: Final = "of unknown origin (no source column, no native prices)"
_UNKNOWN: Final = "of unknown origin (an unrecognised source value)"


def price_origin(sources: Set[str | None], recorded: bool) -> str | None:
    """None when the provider may be credited; else where the prices came from, one phrase.

    The provider is credited only when every price says `provider`. A price without a
    source (a file or journal written before the column existed) follows the rule of
    before: credited when `recorded` (the journal's ticks; a file with native prices,
    which only the provider's recordings had). Any other source — `paper` (a paper
    world's simulated prices), `synthetic`, `import`, an unknown value — is never
    credited.

    Args:
        sources: the distinct sources of the prices used (None: a price without one).
        recorded: the rule of before for prices without a source.
    """
    phrases = []
    for source in sorted(sources or {None}, key=lambda s: (s is None, s or "")):
        if source == "provider" or (source is None and recorded):
            continue
        phrases.append(_UNSAID if source is None else _ORIGINS.get(source, _UNKNOWN))
    return " and ".join(dict.fromkeys(phrases)) or None


@dataclass(frozen=True)
class Gap:
    """A stretch without ticks: the price at `start` held until `end`."""

    token: str
    start: datetime
    end: datetime


@dataclass(frozen=True)
class TokenSeries:
    """One token's change points: int64 µs times, prices `coefs × 10**exponent` (exact)."""

    token: str
    times_us: npt.NDArray[np.int64]
    coefs: npt.NDArray[Any]
    exponent: int

    def __len__(self) -> int:
        return int(self.times_us.size)

    def path(self) -> ArrayPath:
        """The paper core's price path over these arrays (no copy)."""
        return ArrayPath(self.times_us, self.coefs, self.exponent)

    def price(self, index: int) -> Decimal:
        """The exact price of point `index`."""
        return Decimal(int(self.coefs[index])).scaleb(self.exponent, _WIDE)

    def time(self, index: int) -> datetime:
        """The time of point `index`."""
        return from_micros(int(self.times_us[index]))

    def index_at(self, us: int) -> int:
        """Index of the point in force at `us` (the last at or before it); −1 before any."""
        return int(np.searchsorted(self.times_us, us, "right")) - 1

    def at(self, moment: datetime) -> Decimal | None:
        """The price in force at `moment`; None before the first point."""
        index = self.index_at(to_micros(moment))
        return None if index < 0 else self.price(index)

    def window(self, start: datetime, end: datetime) -> tuple[int, int]:
        """Index range [i, j) of the points with start ≤ time ≤ end."""
        first = int(np.searchsorted(self.times_us, to_micros(start), "left"))
        last = int(np.searchsorted(self.times_us, to_micros(end), "right"))
        return first, max(first, last)

    def mean(self, start: datetime, end: datetime) -> Decimal | None:
        """Mean of the price points within [start, end] (28 significant digits); None if none.

        Summed exactly: the int64 coefficients are split in 32-bit halves so that no
        partial sum can overflow.
        """
        first, last = self.window(start, end)
        if last <= first:
            return None
        part = self.coefs[first:last]
        if part.dtype == object:
            total = int(sum(int(c) for c in part))
        else:
            high = int(np.sum(part >> 32, dtype=np.int64))
            low = int(np.sum(part & 0xFFFFFFFF, dtype=np.int64))
            total = (high << 32) + low
        mean = _MEAN.divide(Decimal(total), Decimal(last - first))
        return mean.scaleb(self.exponent, context=_WIDE)

    def sample(self, start: datetime, end: datetime, n: int) -> list[tuple[datetime, Decimal]]:
        """At most `n` evenly spaced points within [start, end] (first and last included)."""
        first, last = self.window(start, end)
        count = last - first
        if count <= 0 or n <= 0:
            return []
        if count <= n:
            picks = np.arange(first, last)
        else:
            picks = np.unique(np.linspace(first, last - 1, num=n).round().astype(np.int64))
        return [(self.time(int(i)), self.price(int(i))) for i in picks]

    def gaps(self, min_gap: timedelta) -> list[Gap]:
        """Stretches between consecutive points longer than `min_gap`."""
        if self.times_us.size < 2:
            return []
        steps = np.diff(self.times_us)
        where = np.nonzero(steps > min_gap // MICROSECOND)[0]
        return [Gap(self.token, self.time(int(i)), self.time(int(i) + 1)) for i in where]


@dataclass(frozen=True)
class Feed:
    """Every token's series of one source, and what reading it met."""

    series: dict[str, TokenSeries]
    source: str
    rows: int = 0
    skipped: int = 0
    duplicates: int = 0
    notes: list[str] = field(default_factory=list)
    skipped_line: str | None = None
    """The skipped rows in one line, where and why (`bot.skipped_rows.SkippedRows.line`)."""
    recorded: bool = False
    """The rule for prices without a source: the journal's, or a file with native prices."""
    sources: frozenset[str | None] = frozenset()
    """The distinct `source` values of the prices (None: a price without one)."""

    def origin(self) -> str | None:
        """None when the provider may be credited, else where the prices came from."""
        return price_origin(self.sources, self.recorded)

    def first_time(self) -> datetime | None:
        """The earliest point of any token."""
        firsts = [int(s.times_us[0]) for s in self.series.values() if len(s)]
        return from_micros(min(firsts)) if firsts else None

    def last_time(self) -> datetime | None:
        """The latest point of any token."""
        lasts = [int(s.times_us[-1]) for s in self.series.values() if len(s)]
        return from_micros(max(lasts)) if lasts else None

    def gaps(self, min_gap: timedelta) -> list[Gap]:
        """Stretches without ticks longer than `min_gap`, of every token, by time."""
        found = [g for s in self.series.values() for g in s.gaps(min_gap)]
        return sorted(found, key=lambda g: (g.start, g.token))


# --- building series ----------------------------------------------------------------------


def _strip_zeros(coefs: npt.NDArray[Any], exponent: int) -> tuple[npt.NDArray[Any], int]:
    """Divide out the powers of ten every coefficient shares (a smaller, equal series)."""
    while coefs.size and _all_tens(coefs):
        coefs = coefs // 10
        exponent += 1
    return coefs, exponent


def _all_tens(coefs: npt.NDArray[Any], chunk: int = 1 << 16) -> bool:
    """Whether every coefficient is a multiple of 10 (chunk by chunk: no whole-array copy)."""
    return all(not bool(np.any(coefs[i : i + chunk] % 10)) for i in range(0, coefs.size, chunk))


def _series(
    token: str, times: npt.NDArray[np.int64], coefs: npt.NDArray[Any], exponent: int
) -> TokenSeries:
    coefs, exponent = _strip_zeros(coefs, exponent)
    if coefs.dtype == object and coefs.size and max(coefs) <= _INT64_MAX:
        coefs = coefs.astype(np.int64)
    return TokenSeries(token, np.ascontiguousarray(times, dtype=np.int64), coefs, exponent)


def feed_from_points(
    points: Mapping[str, tuple[Sequence[datetime], Sequence[Decimal]]], source: str, **report: Any
) -> Feed:
    """A feed from exact points per token: (strictly increasing times, prices > 0)."""
    series = {}
    for token, (times, prices) in points.items():
        if not prices:
            continue
        exponent = min(int(p.as_tuple().exponent) for p in prices)
        ints = [int(p.scaleb(-exponent, context=_WIDE)) for p in prices]
        big = max(ints) > _INT64_MAX
        coefs = np.array(ints, dtype=object if big else np.int64)
        stamps = np.array([to_micros(t) for t in times], dtype=np.int64)
        series[token] = _series(token, stamps, coefs, exponent)
    return Feed(series, source, **report)


def _from_row_reader(path: Path, key_of: KeyOf) -> Feed:
    """The paper core's exact row reader, then arrays (the slow path, for untidy files)."""
    paths, report = load_series(path, key_of=key_of)
    points = {key: (p.times, p.prices) for key, p in paths.items()}
    note = f"{path}: read row by row ({report.skipped} bad row(s) skipped)"
    line = report.skipped_rows.line() if report.skipped_rows is not None else None
    if not points and line is not None:  # every row bad: an error, not a warning
        raise ValueError(f"no usable row in {line}")
    return feed_from_points(
        points,
        str(path),
        rows=report.rows,
        skipped=report.skipped,
        duplicates=report.duplicates,
        notes=[note],
        skipped_line=line,
        sources=report.sources,
    )


# --- the column-wise reader ---------------------------------------------------------------


def _recorded(path: Path, peek: int = 200) -> bool:
    """Whether the file holds native prices (the rule for rows without a source).

    Before the `source` column, only recordings had native prices; but a paper world's
    recording has them too, hence the column.
    """
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        if "nativePrice" not in parquet.schema_arrow.names or not parquet.num_row_groups:
            return False
        group = parquet.metadata.row_group(0)
        for index in range(group.num_columns):
            chunk = group.column(index)
            stats = chunk.statistics
            if chunk.path_in_schema == "nativePrice" and stats is not None and stats.has_null_count:
                return bool(stats.null_count < group.num_rows)  # the metadata says
        column = parquet.read_row_group(0, columns=["nativePrice"]).column(0)
        return bool(column.null_count < len(column))
    with path.open(newline="", encoding="utf-8-sig") as handle:
        for index, row in enumerate(csv.DictReader(handle)):
            if (row.get("nativePrice") or "").strip():
                return True
            if index >= peek:
                break
    return False


def _from_columns(path: Path, key_of: KeyOf) -> Feed:
    found, rows, duplicates, sources = read_columns(path, key_of)
    series = {
        key: _series(key, times, coefs, exponent) for key, (times, coefs, exponent) in found.items()
    }
    return Feed(series, str(path), rows=rows, duplicates=duplicates, sources=sources)


def load_feed(path: Path, key_of: KeyOf = token_key) -> Feed:
    """Read a series file (Parquet for `.parquet`/`.pq`, CSV otherwise) into arrays.

    `key_of` maps a token text to its key (pass `PaperTokens.key_of` to merge the coin
    type and FA spellings of one token, as the paper world does).

    Raises:
        ValueError: a required column is missing, or a float price column (Parquet).
        OSError: the file cannot be read.
    """
    try:
        feed = _from_columns(path, key_of)
    except Untidy:
        feed = _from_row_reader(path, key_of)
    return dataclasses.replace(feed, recorded=None in feed.sources and _recorded(path))


def load_journal_feed(
    url: str,
    tokens: Mapping[str, Sequence[str]],
    *,
    until: datetime | None = None,
    start: datetime | None = None,
) -> Feed:
    """The journal's recorded `price_ticks` (before `until`), as one series per token.

    `tokens` maps each wanted token key to all its identities (coin type, FA address):
    ticks recorded under any of them are merged; at one time the last identity wins.
    The feed's `sources` are those of the ticks a run from `start` uses: each token's
    tick in force at `start` and every later one (all of them without `start`).
    """
    from bot.journal import Journal

    points: dict[str, tuple[list[datetime], list[Decimal]]] = {}
    sources: set[str | None] = set()
    rows = duplicates = 0
    with Journal.open(url) as journal:
        for key, identities in tokens.items():
            merged: dict[datetime, tuple[Decimal, str | None]] = {}
            for identity in dict.fromkeys(identities):
                for tick in journal.price_ticks(identity, None, until):
                    rows += 1
                    duplicates += tick.timestamp in merged
                    merged[tick.timestamp] = (tick.usd_price, tick.source)
            if merged:
                moments = sorted(merged)
                points[key] = (moments, [merged[m][0] for m in moments])
                used = moments if start is None else moments[_in_force(moments, start) :]
                sources.update(merged[m][1] for m in used)
    return feed_from_points(
        points,
        "journal",
        rows=rows,
        duplicates=duplicates,
        recorded=True,
        sources=frozenset(sources),
    )


def _in_force(moments: Sequence[datetime], start: datetime) -> int:
    """Index of the last of the sorted `moments` at or before `start` (0 if none is)."""
    return max(0, bisect_right(moments, start) - 1)
