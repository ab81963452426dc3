"""The price recorder: one poll of `/prices` for the chosen tokens → journal and/or file.

A poll asks the provider for exactly the chosen tokens, stamps every price with the
injected clock's time when the answer arrived (truncated to whole seconds: the
provider's `/prices` carries no time of its own) and stores each priced token as one
tick in the journal's `price_ticks` and/or a series file. Nothing a poll meets stops the
recorder: a failed request, a token without a price, a bad price or a failed write is
logged and the next poll goes on. A tick whose (token, timestamp) is already stored is
skipped and logged (the journal's unique key; in a file, a tick not after the token's
last one); a poll that comes later than 1.5 × the interval after the last good one is
logged as a gap (nothing is filled in).

Every tick says where it came from (`source`, docs/price-series.md): `provider` when
recorded in live mode from the real provider, `paper` when recorded from a paper world
(`recording_source`); a backtest credits the provider only under `provider` ticks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from bot.api.models import PriceList, PriceRecord
from bot.aptos.tokens import Token, TokenLookupError, token_key
from bot.clock import Clock
from bot.config import Settings
from bot.journal import PriceTickRow
from bot.logging import get_logger
from bot.paper.core.price_sources import check_source
from bot.paper.core.series import SeriesRow, append_series, latest_times

__all__ = [
    "PollReport",
    "PriceRecorder",
    "PriceSource",
    "SeriesFile",
    "TickSink",
    "recording_source",
]

_GAP_FACTOR = 1.5
_SUFFIXES = (".csv", ".parquet", ".pq")


def recording_source(settings: Settings) -> str:
    """The `source` of what a recorder with these settings records.

    `provider` in live mode, unless `[api].base_url` is the paper world's `[paper].url`;
    `paper` otherwise: in paper mode the client's `/prices` is a paper world's own
    (simulated) answer, served or embedded.
    """
    if settings.mode != "live":
        return "paper"
    paper_url = (settings.paper.url or "").rstrip("/")
    return "paper" if paper_url and settings.api.base_url.rstrip("/") == paper_url else "provider"


class PriceSource(Protocol):
    """What the recorder needs of the provider client: `GET /prices` for some tokens."""

    async def get_prices(self, tokens: Sequence[str] | None = None) -> PriceList:
        """Price records of `tokens`."""
        ...


class TickSink(Protocol):
    """What the recorder needs of the journal: storing ticks (`bot.journal.Journal` is one)."""

    def add_price_ticks(self, rows: Iterable[PriceTickRow]) -> tuple[int, int]:
        """Store ticks, skipping a (token, timestamp) already stored: (added, skipped)."""
        ...


class SeriesFile:
    """A series file (CSV or Parquet) the recorder appends to.

    Remembers each token's latest timestamp (read from the file when it opens), and skips
    a tick that is not after it: a duplicate, or a clock that went back.
    """

    def __init__(self, path: Path) -> None:
        """Open `path` for appending (it need not exist yet).

        Raises:
            ValueError: an unknown suffix, Parquet without pyarrow, or an unreadable file.
        """
        if path.suffix.lower() not in _SUFFIXES:
            raise ValueError(f"--out {path}: the file must end in .csv or .parquet")
        if path.suffix.lower() != ".csv":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise ValueError(
                    "Parquet needs pyarrow: pip install 'aptos-dca-bot[parquet]' (or use .csv)"
                ) from None
        self.path = path
        try:
            self.latest: dict[str, datetime] = latest_times(path)
        except OSError as exc:
            raise ValueError(f"--out {path}: cannot read it: {exc.strerror or exc}") from None
        except Exception as exc:  # pyarrow's errors for a file that is not Parquet
            raise ValueError(f"--out {path}: not a readable series file: {exc}") from None

    def append(self, rows: Sequence[SeriesRow]) -> tuple[int, list[SeriesRow]]:
        """Append the rows newer than their token's last one; (written, rows skipped)."""
        fresh: list[SeriesRow] = []
        stale: list[SeriesRow] = []
        for row in rows:
            last = self.latest.get(row.token)
            (fresh if last is None or row.timestamp > last else stale).append(row)
        if fresh:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            append_series(self.path, fresh)
            for row in fresh:
                self.latest[row.token] = row.timestamp
        return len(fresh), stale


@dataclass(frozen=True)
class PollReport:
    """What one poll did."""

    at: datetime
    recorded: int = 0
    """Prices received for the chosen tokens (usable ones)."""
    journal_added: int | None = 0
    """Ticks added to the journal (None: not recording to it)."""
    file_added: int | None = 0
    """Ticks added to the file (None: not recording to one)."""
    duplicates: int = 0
    """Ticks skipped as already stored (journal and file together)."""
    missing: tuple[str, ...] = ()
    """Symbols of chosen tokens the answer had no usable price for."""
    gap_seconds: int | None = None
    """Seconds since the last good poll, when at least one poll was missed."""
    error: str | None = None
    """Why the poll failed (nothing was recorded), or why a write failed."""

    @property
    def ok(self) -> bool:
        """True when the poll got an answer and every write succeeded."""
        return self.error is None

    def line(self) -> str:
        """One line for the console."""
        stamp = self.at.isoformat().replace("+00:00", "Z")
        if self.recorded == 0 and self.error is not None:
            return f"{stamp} poll failed: {self.error}"
        parts = [
            f"{target} +{added}"
            for target, added in (("journal", self.journal_added), ("file", self.file_added))
            if added is not None
        ]
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate(s) skipped")
        if self.missing:
            parts.append(f"no price: {', '.join(self.missing)}")
        if self.gap_seconds is not None:
            parts.append(f"gap of {self.gap_seconds}s")
        if self.error is not None:
            parts.append(f"error: {self.error}")
        return f"{stamp} recorded {self.recorded} price(s) ({'; '.join(parts)})"


class PriceRecorder:
    """Polls `/prices` for chosen tokens and stores the answers; `poll` never raises."""

    def __init__(
        self,
        source: PriceSource,
        clock: Clock,
        tokens: Sequence[Token],
        *,
        every_seconds: int,
        origin: str,
        journal: TickSink | None = None,
        out: SeriesFile | None = None,
    ) -> None:
        """Record `tokens` from `source` into `journal` and/or `out`.

        `origin` is what each tick says of where it came from (`recording_source`):
        `provider` or `paper`.

        Raises:
            ValueError: no token, neither a journal nor a file to record to, or an
                origin that is not a series source.
        """
        if not tokens:
            raise ValueError("no tokens to record")
        if journal is None and out is None:
            raise ValueError("nothing to record to: neither the journal nor a file")
        self.origin = check_source(origin)
        self.source = source
        self.clock = clock
        self.tokens = list(tokens)
        self.every_seconds = every_seconds
        self.journal = journal
        self.out = out
        self._by_key = {key: token for token in self.tokens for key in token.keys}
        self._last_ok: datetime | None = None
        self._log = get_logger("record")
        self.polls = self.failed = self.recorded = 0

    async def poll(self) -> PollReport:
        """Ask for the prices once and store them; every problem is logged, none raised."""
        self.polls += 1
        try:
            listing = await self.source.get_prices([t.address for t in self.tokens])
        except Exception as exc:  # a failed poll never stops the recorder
            self.failed += 1
            error = str(exc) or type(exc).__name__
            self._log.warning("record.poll_failed", error=error)
            return PollReport(self.clock.now().replace(microsecond=0), error=error)
        at = self.clock.now().replace(microsecond=0)
        gap = self._gap(at)
        rows, missing = self._rows(listing.records, at)
        if missing:
            self._log.warning("record.no_price", tokens=list(missing), at=at.isoformat())
        journal_added, file_added, duplicates, errors = self._store(rows)
        self._last_ok = at
        self.recorded += len(rows)
        self._log.debug("record.polled", at=at.isoformat(), recorded=len(rows))
        return PollReport(
            at,
            recorded=len(rows),
            journal_added=journal_added,
            file_added=file_added,
            duplicates=duplicates,
            missing=missing,
            gap_seconds=gap,
            error="; ".join(errors) or None,
        )

    def _gap(self, at: datetime) -> int | None:
        if self._last_ok is None:
            return None
        seconds = int((at - self._last_ok).total_seconds())
        if seconds <= _GAP_FACTOR * self.every_seconds:
            return None
        self._log.warning(
            "record.gap",
            since=self._last_ok.isoformat(),
            at=at.isoformat(),
            seconds=seconds,
            missed_polls=seconds // self.every_seconds - 1,
        )
        return seconds

    def _token_of(self, record: PriceRecord) -> Token | None:
        for name in (record.token_address, record.fa_address):
            if not name:
                continue
            try:
                token = self._by_key.get(token_key(name))
            except TokenLookupError:
                continue
            if token is not None:
                return token
        return None

    def _rows(
        self, records: Sequence[PriceRecord], at: datetime
    ) -> tuple[list[SeriesRow], tuple[str, ...]]:
        """One row per chosen token with a usable price; the symbols of those without."""
        rows: dict[str, SeriesRow] = {}
        for record in records:
            token = self._token_of(record)
            if token is None or token.address in rows or record.usd_price is None:
                continue
            try:
                rows[token.address] = SeriesRow(
                    at,
                    token.address,
                    record.usd_price,
                    record.symbol or token.symbol,
                    _positive_or_none(record.native_price),
                    self.origin,
                )
            except (TypeError, ValueError) as exc:
                self._log.warning("record.bad_price", token=token.symbol, error=str(exc))
        missing = tuple(t.symbol for t in self.tokens if t.address not in rows)
        return list(rows.values()), missing

    def _store(self, rows: list[SeriesRow]) -> tuple[int | None, int | None, int, list[str]]:
        """Write to the journal, then the file: (journal added, file added, dups, errors).

        An added count is None for a target not recorded to.
        """
        journal_added = None if self.journal is None else 0
        file_added = None if self.out is None else 0
        duplicates = 0
        errors: list[str] = []
        skipped: list[str] = []
        if self.journal is not None and rows:
            try:
                journal_added, dup = self.journal.add_price_ticks(
                    PriceTickRow(
                        r.timestamp, r.token, r.usd_price, r.symbol, r.native_price, r.source
                    )
                    for r in rows
                )
                duplicates += dup
                if dup:
                    skipped.append(f"journal: {dup}")
            except Exception as exc:  # a failed write is logged; the next poll goes on
                errors.append(f"journal write failed: {exc}")
                self._log.error("record.write_failed", target="journal", error=str(exc))
        if self.out is not None and rows:
            try:
                file_added, stale = self.out.append(rows)
                duplicates += len(stale)
                if stale:
                    skipped.append(f"file: {', '.join(r.symbol or r.token for r in stale)}")
            except Exception as exc:
                errors.append(f"file write failed: {exc}")
                self._log.error(
                    "record.write_failed", target=str(self.out.path), error=_describe(exc)
                )
        if skipped:
            self._log.warning(
                "record.duplicate", at=rows[0].timestamp.isoformat(), skipped="; ".join(skipped)
            )
        return journal_added, file_added, duplicates, errors


def _positive_or_none(value: Decimal | None) -> Decimal | None:
    """A native price kept only when usable (a zero native price is no price)."""
    return value if value is not None and value.is_finite() and value > 0 else None


def _describe(exc: BaseException) -> Any:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
