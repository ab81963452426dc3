"""A price path over NumPy arrays: a recorded series, exact, searched without Python loops.

`ArrayPath` is the paper core's `PricePath` (piecewise constant: each price holds until the
next change point) with its points in two arrays instead of Python lists: times as int64
microseconds since the POSIX epoch, prices as integer coefficients with one decimal
exponent for the whole series (`price = coefficient × 10**exponent`), so every price is
exact and becomes a `Decimal` only when it is looked up.

Point lookups moving forward bisect a memoryview of the times just past their last
answer (no copy, no NumPy scalar per probe); others use NumPy's search. The
limit engine's question — the first change point at which usd(num)/usd(den) reaches a
threshold T — is answered over whole windows of points at once (`crossing_us`), exactly,
with T written as an integer fraction on the coefficients' scale:
* while one side holds one price through the window (a pegged stable coin, a quiet
  token), T becomes one integer bound on the other side's int64 coefficients (least
  numerator `ceil(K × den)`, or greatest denominator `floor(num / K)`), compared at once;
* when both sides change, the merged change points are compared pairwise: one bound per
  distinct denominator price when there are few, else as Python integers in NumPy
  object arrays (`num × 10**a ≥ t × den × 10**b`).
No float is involved anywhere.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Sequence
from datetime import datetime
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bot.clock import EPOCH, MICROSECOND, from_micros
from bot.paper.core.prices import PricePath

__all__ = ["ArrayPath", "constant_path"]

_WIDE: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)  # exact ×, scaleb
_CHUNK: Final = 4096
"""Points compared at a time: the first crossing is usually found in the first chunk."""
_FEW: Final = 32
"""At most this many distinct denominator prices in a chunk: one integer bound each."""
_INT64_MAX: Final = (1 << 63) - 1
_AHEAD: Final = 128
"""How far past its last answer a lookup moving forward first searches (points)."""

Int64Array = npt.NDArray[np.int64]


class ArrayPath(PricePath):
    """A piecewise-constant USD price path over int64 arrays (see the module docstring).

    Args:
        times_us: strictly increasing int64 microseconds since the epoch.
        coefs: positive price coefficients (int64, or an object array of Python ints for
            a series whose range does not fit in int64).
        exponent: the decimal exponent shared by every price of the series.
    """

    def __init__(self, times_us: Int64Array, coefs: npt.NDArray[Any], exponent: int) -> None:
        super().__init__((), ())
        times = np.ascontiguousarray(times_us, dtype=np.int64)
        if coefs.dtype != object:
            coefs = np.ascontiguousarray(coefs, dtype=np.int64)
        if times.ndim != 1 or coefs.shape != times.shape:
            raise ValueError(f"{times.shape} times but {coefs.shape} prices")
        if times.size > 1 and not bool(np.all(times[1:] > times[:-1])):
            raise ValueError("change points must be strictly increasing")
        if coefs.size and not bool(np.all(coefs > 0)):
            raise ValueError("prices must be > 0")
        times.setflags(write=False)
        self.times_us = times
        self.coefs = coefs
        self.exponent = int(exponent)
        self._t = times.data  # a memoryview: bisect gets Python ints, no copy
        self._short = times.size < 64
        self._search = times.searchsorted
        self._c: Any = coefs.data if coefs.dtype != object else coefs.tolist()
        self._memo: tuple[int, int] = (-(1 << 62), 0)  # (µs, count ≤ it) of the last lookup
        self._decimals: dict[int, Decimal] = {}
        self._moment: tuple[object, int] = (None, 0)  # the last moment asked, its count
        self._starts: dict[int, datetime] = {}
        self._only = from_micros(int(times[0])) if times.size == 1 else None

    def __reduce__(self) -> tuple[Any, ...]:
        return (ArrayPath, (self.times_us, self.coefs, self.exponent))

    # The engines ask about one moment several times in a row (pool anchor, quote, swap):
    # the moment's point is found once and remembered.
    def _count_at(self, moment: datetime) -> int:
        """How many change points are at or before `moment` (naive times refused)."""
        if moment == self._moment[0]:
            return self._moment[1]
        if moment.tzinfo is None:
            raise ValueError(f"naive datetime {moment.isoformat()} (use timezone-aware UTC)")
        if self._only is not None:  # one point (a pegged stable coin): a comparison
            return 1 if moment >= self._only else 0
        count = self._count_le((moment - EPOCH) // MICROSECOND)  # to_micros, inlined
        self._moment = (moment, count)
        return count

    def step_start(self, moment: datetime) -> datetime | None:
        """Time of the change point in force at `moment`; None before the first point."""
        count = self._count_at(moment)
        return self._start(count) if count else None

    def anchor(self, moment: datetime) -> tuple[Hashable | None, Decimal | None]:
        """The price point in force at `moment`: (its identity, its price).

        The identity is the count of points up to it (no datetime is made for it);
        (None, None) before the first point.
        """
        count = self._count_at(moment)
        if not count:
            return None, None
        return count, self._price(count - 1)

    def _start(self, count: int) -> datetime:
        """The time of point `count − 1` as a datetime (remembered for a while)."""
        start = self._starts.get(count)
        if start is None:
            if len(self._starts) > 512:
                self._starts.clear()
            start = self._starts[count] = from_micros(self._t[count - 1])
        return start

    def at(self, moment: datetime) -> Decimal | None:
        """The price in force at `moment` (last point ≤ it); None before the first point."""
        count = self._count_at(moment)
        return self._price(count - 1) if count else None

    def point_index(self, moment: datetime) -> int | None:
        """Index of the change point in force at `moment`; None before the first point."""
        count = self._count_at(moment)
        return count - 1 if count else None

    # --- the PricePath primitives ---------------------------------------------------------

    def _len(self) -> int:
        return len(self._t)

    def _count_le(self, us: int) -> int:
        last_us, count = self._memo
        if us == last_us:
            return count
        times = self._t
        ahead = count + _AHEAD
        if last_us < us and ahead < len(times) and us < times[ahead]:
            # Time moves forward a little (slice after slice): search just past the
            # last answer. Points before it are ≤ last_us < us; the one at `ahead` is > us.
            count = bisect_right(times, us, count, ahead)
        elif self._short:
            count = bisect_right(times, us)
        else:  # a long series: NumPy's search costs less than bisecting the memoryview
            count = int(self._search(us, "right"))
        self._memo = (us, count)
        return count

    def _time_us(self, index: int) -> int:
        return int(self._t[index])

    def point_counts(self, moments_us: Sequence[int]) -> list[int]:
        """`PricePath.point_counts`: one vectorised search for all the times."""
        if len(moments_us) < 8:
            return [self._count_le(us) for us in moments_us]
        found: list[int] = self._search(np.asarray(moments_us, dtype=np.int64), "right").tolist()
        return found

    def point_price(self, count: int) -> Decimal:
        """`PricePath.point_price`, made afresh (a run asks each point once)."""
        return Decimal(int(self._c[count - 1])).scaleb(self.exponent, _WIDE)

    def _price(self, index: int) -> Decimal:
        price = self._decimals.get(index)
        if price is None:
            if len(self._decimals) > 512:
                self._decimals.clear()
            # The context positional (a keyword costs more in `_decimal`).
            price = Decimal(int(self._c[index])).scaleb(self.exponent, _WIDE)
            self._decimals[index] = price
        return price

    def _next_us(self, us: int) -> int | None:
        index = self._count_le(us)
        return int(self._t[index]) if index < len(self._t) else None

    # --- vectorised search ----------------------------------------------------------------

    def supports_crossing(self, den: PricePath) -> bool:
        """True when `crossing_us` can answer for this path over `den`."""
        return isinstance(den, ArrayPath)

    def crossing_us(
        self, den: PricePath, threshold: Decimal, after_us: int, until_us: int
    ) -> int | None:
        """The first change point t of self or `den` where self ≥ threshold × den.

        Only points with after < t ≤ until count; None if there is none. Exact (see the
        module docstring).
        """
        if not isinstance(den, ArrayPath):
            raise TypeError("crossing_us needs an ArrayPath denominator")
        if not threshold.is_finite() or threshold <= 0 or until_us <= after_us:
            return None
        ratio = _Ratio(threshold, den.exponent - self.exponent)
        own = (self._count_le(after_us), self._count_le(until_us))
        other = (den._count_le(after_us), den._count_le(until_us))
        if other[0] == other[1]:  # the denominator holds one price (or none) throughout
            return self._side_crossing(den, ratio, own, other[0], numerator=True)
        if own[0] == own[1]:  # the numerator holds one price (or none) throughout
            return den._side_crossing(self, ratio, other, own[0], numerator=False)
        return self._merged_crossing(den, ratio, own, other, until_us)

    def _side_crossing(
        self,
        fixed: ArrayPath,
        ratio: _Ratio,
        span: tuple[int, int],
        fixed_count: int,
        *,
        numerator: bool,
    ) -> int | None:
        """The first of this path's points in `span` where the ratio holds.

        The other side (`fixed`) holds its price in force (its point `fixed_count − 1`)
        throughout. `numerator`: whether this path is the ratio's numerator (else its
        denominator).
        """
        if fixed_count == 0:
            return None  # the other side has no price yet: no ratio anywhere here
        held = int(fixed._c[fixed_count - 1])
        for first in range(span[0], span[1], _CHUNK):
            last = min(span[1], first + _CHUNK)
            values = self.coefs[first:last]
            if numerator:
                hits = values >= ratio.least_numerator(held)
            else:
                hits = values <= ratio.most_denominator(held)
            index = int(np.argmax(hits))
            if bool(hits[index]):
                return int(self.times_us[first + index])
        return None

    def _merged_crossing(
        self,
        den: ArrayPath,
        ratio: _Ratio,
        own: tuple[int, int],
        other: tuple[int, int],
        until_us: int,
    ) -> int | None:
        """Both sides change in the window: walk the merged change points, chunk by chunk."""
        # A point before either path starts has no ratio: begin where both have a price.
        start_us = max(int(self.times_us[0]), int(den.times_us[0])) - 1
        position = [own[0], other[0]]
        while position[0] < own[1] or position[1] < other[1]:
            own_end = min(own[1], position[0] + _CHUNK)
            den_end = min(other[1], position[1] + _CHUNK)
            own_t = self.times_us[position[0] : own_end]
            den_t = den.times_us[position[1] : den_end]
            # Only times up to the earlier chunk's end are complete for both sides.
            horizon = min(
                int(own_t[-1]) if own_end < own[1] else until_us,
                int(den_t[-1]) if den_end < other[1] else until_us,
            )
            times = np.union1d(own_t[own_t <= horizon], den_t[den_t <= horizon])
            times = times[times > start_us]
            if times.size:
                num = self.coefs[np.searchsorted(self.times_us, times, "right") - 1]
                dens = den.coefs[np.searchsorted(den.times_us, times, "right") - 1]
                hits = ratio.holds(num, dens)
                index = int(np.argmax(hits))
                if bool(hits[index]):
                    return int(times[index])
            position = [
                position[0] + int(np.searchsorted(own_t, horizon, "right")),
                position[1] + int(np.searchsorted(den_t, horizon, "right")),
            ]
        return None


class _Ratio:
    """`num × 10**en ≥ T × den × 10**ed` on coefficients: num ≥ K × den, K = t × 10**k.

    All in Python integers (exact); `K` is the threshold moved to the coefficients'
    scale (`k` includes `ed − en`).
    """

    def __init__(self, threshold: Decimal, shift: int) -> None:
        if not threshold.is_finite():
            raise ValueError(f"a threshold must be finite, got {threshold}")
        exponent = int(threshold.as_tuple().exponent)
        self.t = int(abs(threshold).scaleb(-exponent, _WIDE))  # the digits, as an integer
        self.k = exponent + shift

    def least_numerator(self, den: int) -> int:
        """The least numerator coefficient that reaches the ratio over `den`: ceil(K × den)."""
        if self.k >= 0:
            return self.t * den * _ten(self.k)
        return -(-self.t * den // _ten(-self.k))

    def most_denominator(self, num: int) -> int:
        """The greatest denominator coefficient the ratio holds under: floor(num / K)."""
        if self.k >= 0:
            return num // (self.t * _ten(self.k))
        return num * _ten(-self.k) // self.t

    def holds(self, num: npt.NDArray[Any], dens: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
        """Element-wise num ≥ K × den, for paired coefficient arrays."""
        distinct = np.unique(dens)
        if distinct.size <= _FEW and num.dtype != object:
            bounds = [self.least_numerator(int(d)) for d in distinct]
            reachable = np.array([b <= _INT64_MAX for b in bounds])
            clipped = np.array([min(b, _INT64_MAX) for b in bounds], dtype=np.int64)
            which = np.searchsorted(distinct, dens)
            result: npt.NDArray[np.bool_] = (num >= clipped[which]) & reachable[which]
            return result
        scale_num = _ten(max(0, -self.k))
        scale_den = self.t * _ten(max(0, self.k))
        lhs = num.astype(object) * scale_num
        rhs = dens.astype(object) * scale_den
        return np.asarray(lhs >= rhs, dtype=bool)


def _ten(power: int) -> int:
    """10**power for power ≥ 0, as an int."""
    return int(10**power)


def constant_path(price: Decimal, since_us: int = 0) -> ArrayPath:
    """A path holding one price from `since_us` on (default: the epoch) — a pegged token."""
    if not price.is_finite() or price <= 0:
        raise ValueError(f"a price must be finite and > 0, got {price}")
    _sign, digits, exponent = price.as_tuple()
    coef = int("".join(map(str, digits)))
    coefs = np.array([coef], dtype=np.int64 if coef <= _INT64_MAX else object)
    return ArrayPath(np.array([since_us], dtype=np.int64), coefs, int(exponent))
