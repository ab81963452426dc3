"""Prices for valuation: a token's USD price at a moment, and its time-weighted mean.

A `PriceSeries` is a token's recorded USD prices (the journal's `price_ticks`, a
backtest's series, points by hand). The price *in force* at a moment is the last point
at or before it (none before the first point). The time-weighted mean over a window is
the integral of that step function over the part of the window it covers, divided by
the covered duration: a price that held for a day weighs 24 times one that held for an
hour, however often either was recorded.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext
from itertools import islice
from operator import lt

from bot.accounting.exact import EXACT, RATIO, ZERO, ratio
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
            _check(token, point.time, point.usd)
            by_time[to_micros(point.time)] = point.usd
        self.token = token
        self._times = array("q", sorted(by_time))  # 8 bytes a time: a year of minutes
        self._prices = [by_time[t] for t in self._times]

    @classmethod
    def of_columns(
        cls, token: str, times: Sequence[datetime], prices: Sequence[Decimal]
    ) -> PriceSeries:
        """The series of parallel columns (a journal read): the same as of their points.

        Without making a `PricePoint` each: columns already in strictly increasing time
        (the journal's order) are taken as they are, others sorted as points are.
        """
        if len(times) != len(prices):
            raise ValueError(f"prices of {token}: {len(times)} times, {len(prices)} prices")
        return cls.of_micros(token, [to_micros(moment) for moment in times], prices)

    @classmethod
    def of_micros(cls, token: str, micros: Sequence[int], prices: Sequence[Decimal]) -> PriceSeries:
        """`of_columns` of times given in µs since the epoch (`bot.clock.to_micros`)."""
        if len(micros) != len(prices):
            raise ValueError(f"prices of {token}: {len(micros)} times, {len(prices)} prices")
        if not all(map(lt, micros, islice(micros, 1, None))):  # not strictly increasing
            return cls(token, map(PricePoint, map(from_micros, micros), prices))
        if not _plain_prices(prices):  # which one, and why
            for moment, usd in zip(micros, prices, strict=True):
                _check(token, from_micros(moment), usd)
        series = cls(token, ())
        series._times = array("q", micros)
        series._prices = list(prices)
        return series

    def __len__(self) -> int:
        return len(self._times)

    def at(self, moment: datetime) -> Decimal | None:
        """The price in force at `moment`: the last point at or before it; None before any."""
        return self.at_micros(to_micros(moment))

    def columns(self) -> tuple[Sequence[int], list[Decimal]]:
        """The points as (µs since the epoch, USD price) columns, in time order (read only)."""
        return self._times, self._prices

    def at_micros(self, micros: int) -> Decimal | None:
        """`at` of a moment given in µs since the epoch (`bot.clock.to_micros`)."""
        index = bisect_right(self._times, micros) - 1
        return None if index < 0 else self._prices[index]

    def steps(self, start: datetime, end: datetime) -> list[tuple[int, Decimal]]:
        """The (µs, price) steps in force within [start, end].

        The price in force at `start` (if any), then every point after it up to `end`.
        """
        return list(zip(*self.step_columns(start, end), strict=True))

    def step_columns(self, start: datetime, end: datetime) -> tuple[array[int], list[Decimal]]:
        """`steps` as parallel columns (µs, prices): a year of minutes without a tuple each."""
        first_us, last_us = to_micros(start), to_micros(end)
        times, prices = self._times, self._prices
        index = bisect_right(times, first_us) - 1
        stop = max(index + 1, bisect_right(times, last_us))
        moments: array[int] = array("q")
        values: list[Decimal] = []
        if index >= 0:
            moments.append(first_us)
            values.append(prices[index])
        moments += times[index + 1 : stop]
        values += prices[index + 1 : stop]
        return moments, values

    def time_weighted_mean(self, start: datetime, end: datetime) -> Decimal | None:
        """The time-weighted mean USD price over [start, end]; None without a price in it.

        `start == end`: the price in force then. Only the covered part of the window
        counts (before the first point nothing is known).
        """
        return _weighted(self.steps(start, end), to_micros(end))

    def first_time(self) -> datetime | None:
        """The first point's time, or None for an empty series."""
        return from_micros(self._times[0]) if self._times else None

    def last_time(self) -> datetime | None:
        """The last point's time, or None for an empty series."""
        return from_micros(self._times[-1]) if self._times else None


def _plain_prices(prices: Sequence[Decimal]) -> bool:
    """Every price a finite, non-negative `Decimal` (`_check` of each, a column at once)."""
    return (
        set(map(type, prices)) <= {Decimal}
        and all(map(Decimal.is_finite, prices))
        and (not prices or min(prices) >= ZERO)
    )


def _check(token: str, moment: datetime, usd: object) -> None:
    """Refuse a price that is not a finite, non-negative `Decimal`."""
    if not isinstance(usd, Decimal) or not usd.is_finite() or usd < 0:
        raise ValueError(f"price of {token} at {moment.isoformat()}: {usd!r}")


def _weighted(steps: list[tuple[int, Decimal]], end_us: int) -> Decimal | None:
    """The mean of a step function given by `steps` up to `end_us` (µs-weighted)."""
    if not steps:
        return None
    if steps[0][0] >= end_us:
        return steps[0][1]
    weighted = ZERO
    with localcontext(EXACT):  # exact: a rounding raises `Inexact`
        previous, price = steps[0]
        for t, following in steps[1:]:
            weighted += price * (t - previous)
            previous, price = t, following
        weighted += price * (end_us - previous)
    return ratio(weighted, Decimal(end_us - steps[0][0]))


class PriceBook:
    """USD price series by token, for valuing trades and positions."""

    def __init__(self, series: Mapping[str, PriceSeries] | None = None) -> None:
        self._series: dict[str, PriceSeries] = dict(series or {})

    @classmethod
    def of_points(cls, points: Mapping[str, Iterable[PricePoint]]) -> PriceBook:
        """A book from each token's points."""
        return cls({token: PriceSeries(token, pts) for token, pts in points.items()})

    def series(self, token: str) -> PriceSeries | None:
        """`token`'s series, or None when the book has no price of it."""
        return self._series.get(token)

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
        return _weighted_ratios(
            base.step_columns(start, end), quote.step_columns(start, end), to_micros(end)
        )


def _weighted_ratios(
    base: tuple[Sequence[int], list[Decimal]],
    quote: tuple[Sequence[int], list[Decimal]],
    end_us: int,
) -> Decimal | None:
    """`_weighted` of the steps of base / quote, each step used as soon as it is made.

    The steps as columns (`PriceSeries.step_columns`). A step at each moment either has
    one, the two prices in force then; a moment before one of them has a price, or where
    quote's is zero, makes none. (A year of minute prices makes no list of its quotients.)
    """
    (b_times, b_prices), (q_times, q_prices) = base, quote
    moments: Iterable[tuple[int, Decimal | None, Decimal | None]]
    if b_times == q_times:  # recorded together (the usual): every moment has both prices
        moments = zip(b_times, b_prices, q_prices, strict=True)
    else:
        moments = _merged(b_times, b_prices, q_times, q_prices)
    divide = RATIO.divide
    first: tuple[int, Decimal] | None = None
    previous, price, weighted = 0, ZERO, ZERO
    with localcontext(EXACT):  # exact: a rounding raises `Inexact`
        for moment, b_price, q_price in moments:
            if b_price is None or not q_price:  # None or zero: no price
                continue
            step = divide(b_price, q_price)
            if first is None:
                first = (moment, step)
            else:
                weighted += price * (moment - previous)
            previous, price = moment, step
        if first is None:
            return None
        if first[0] >= end_us:
            return first[1]
        weighted += price * (end_us - previous)
    return ratio(weighted, Decimal(end_us - first[0]))


def _merged(
    b_times: Sequence[int],
    b_prices: list[Decimal],
    q_times: Sequence[int],
    q_prices: list[Decimal],
) -> Iterator[tuple[int, Decimal | None, Decimal | None]]:
    """Each moment of either series, oldest first, with both prices in force then.

    A moment of both is one moment; a price not yet known is None.
    """
    b_price: Decimal | None = None
    q_price: Decimal | None = None
    i = j = 0
    b_count, q_count = len(b_times), len(q_times)
    while i < b_count or j < q_count:
        b_time = b_times[i] if i < b_count else None
        q_time = q_times[j] if j < q_count else None
        if q_time is None or (b_time is not None and b_time <= q_time):
            moment, b_price = b_times[i], b_prices[i]
            i += 1
            if q_time == moment:
                q_price = q_prices[j]
                j += 1
        else:
            moment, q_price = q_times[j], q_prices[j]
            j += 1
        yield moment, b_price, q_price
