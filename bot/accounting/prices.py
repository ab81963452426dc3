"""Prices for valuation: a token's USD price at a moment, and its time-weighted mean.

A `PriceSeries` is a token's recorded USD prices (the journal's `price_ticks`, a
backtest's series, points by hand). The price *in force* at a moment is the last point
at or before it (none before the first point). The time-weighted mean over a window is
the integral of that step function over the part of the window it covers, divided by
the covered duration: a price that held for a day weighs 24 times one that held for an
hour, however often either was recorded.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from bot.accounting.exact import EXACT, ZERO, ratio
from bot.accounting.records import Pair
from bot.clock import from_micros, to_micros

__all__ = ["PriceBook", "PricePoint", "PriceSeries"]


@dataclass(frozen=True)
class PricePoint:
    """One USD price of one token at one moment (aware UTC)."""

    time: datetime
    usd: Decimal


class PriceSeries:
    """One token's USD prices in time order (a later point at the same moment wins)."""

    def __init__(self, token: str, points: Iterable[PricePoint]) -> None:
        by_time: dict[int, Decimal] = {}
        for point in points:
            if not isinstance(point.usd, Decimal) or not point.usd.is_finite() or point.usd < 0:
                raise ValueError(f"price of {token} at {point.time.isoformat()}: {point.usd!r}")
            by_time[to_micros(point.time)] = point.usd
        self.token = token
        self._times = sorted(by_time)
        self._prices = [by_time[t] for t in self._times]

    def __len__(self) -> int:
        return len(self._times)

    def at(self, moment: datetime) -> Decimal | None:
        """The price in force at `moment`: the last point at or before it; None before any."""
        index = bisect_right(self._times, to_micros(moment)) - 1
        return None if index < 0 else self._prices[index]

    def steps(self, start: datetime, end: datetime) -> list[tuple[int, Decimal]]:
        """The (µs, price) steps in force within [start, end].

        The price in force at `start` (if any), then every point after it up to `end`.
        """
        first_us, last_us = to_micros(start), to_micros(end)
        index = bisect_right(self._times, first_us) - 1
        steps: list[tuple[int, Decimal]] = []
        if index >= 0:
            steps.append((first_us, self._prices[index]))
        for j in range(index + 1, len(self._times)):
            if self._times[j] > last_us:
                break
            steps.append((self._times[j], self._prices[j]))
        return steps

    def time_weighted_mean(self, start: datetime, end: datetime) -> Decimal | None:
        """The time-weighted mean USD price over [start, end]; None without a price in it.

        `start == end`: the price in force then. Only the covered part of the window
        counts (before the first point nothing is known).
        """
        return _weighted(self.steps(start, end), to_micros(end))

    def first_time(self) -> datetime | None:
        """The first point's time, or None for an empty series."""
        return from_micros(self._times[0]) if self._times else None


def _weighted(steps: list[tuple[int, Decimal]], end_us: int) -> Decimal | None:
    """The mean of a step function given by `steps` up to `end_us` (µs-weighted)."""
    if not steps:
        return None
    if steps[0][0] >= end_us:
        return steps[0][1]
    weighted = ZERO
    for (t, price), nxt in zip(steps, [s[0] for s in steps[1:]] + [end_us], strict=True):
        weighted = EXACT.add(weighted, EXACT.multiply(price, Decimal(nxt - t)))
    return ratio(weighted, Decimal(end_us - steps[0][0]))


class PriceBook:
    """USD price series by token, for valuing trades and positions."""

    def __init__(self, series: Mapping[str, PriceSeries] | None = None) -> None:
        self._series: dict[str, PriceSeries] = dict(series or {})

    @classmethod
    def of_points(cls, points: Mapping[str, Iterable[PricePoint]]) -> PriceBook:
        """A book from each token's points."""
        return cls({token: PriceSeries(token, pts) for token, pts in points.items()})

    def usd_at(self, token: str, moment: datetime) -> Decimal | None:
        """USD per one `token` in force at `moment`; None when unknown."""
        series = self._series.get(token)
        return None if series is None else series.at(moment)

    def mean_usd(self, token: str, start: datetime, end: datetime) -> Decimal | None:
        """`token`'s time-weighted mean USD price over [start, end]; None when unknown."""
        series = self._series.get(token)
        return None if series is None else series.time_weighted_mean(start, end)

    def mean_in_quote(self, pair: Pair, start: datetime, end: datetime) -> Decimal | None:
        """The time-weighted mean market price of `pair` (quote per base) over [start, end].

        At each moment the price is base's USD price / quote's USD price (each the one in
        force, rounded as `bot.accounting.exact.ratio`); the mean weighs each by how long
        it held, over the part of the window where both tokens have a price (a zero quote
        price is no price: the ratio before it holds on). None when they never both have
        one.
        """
        base, quote = self._series.get(pair.base), self._series.get(pair.quote)
        if base is None or quote is None:
            return None
        base_steps, quote_steps = base.steps(start, end), quote.steps(start, end)
        moments = sorted({t for t, _ in base_steps} | {t for t, _ in quote_steps})
        steps: list[tuple[int, Decimal]] = []
        b = q = -1
        for moment in moments:
            while b + 1 < len(base_steps) and base_steps[b + 1][0] <= moment:
                b += 1
            while q + 1 < len(quote_steps) and quote_steps[q + 1][0] <= moment:
                q += 1
            if b >= 0 and q >= 0 and quote_steps[q][1] > 0:
                steps.append((moment, ratio(base_steps[b][1], quote_steps[q][1])))
        return _weighted(steps, to_micros(end))
