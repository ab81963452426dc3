"""USD price paths of the paper world: random walks, replayed series and the price oracle.

A price path is piecewise constant: change points, each price in force until the next
(the last one forever). `PricePath` holds given points (e.g. a replayed recording);
`RandomWalkPath` is a GBM on a grid from the world's origin, generated lazily. The only
float anywhere is the walk's normal draw Z: it becomes `Decimal(repr(z))` at once.
`PriceBook` gives each token one path (coin type and FA address share it), seeded from the
world seed and the token's own key, so adding a token changes no other path.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from array import array
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from itertools import groupby, pairwise, repeat
from typing import Final

from bot.aptos.tokens import Token, TokenLookupError, token_key
from bot.clock import MICROS_PER_SECOND, ensure_utc, from_micros, to_micros
from bot.money import parse_decimal
from bot.paper.core.registry import APT_COIN_TYPE, PaperTokens, UnknownToken, is_native_apt

__all__ = [
    "NoPrice",
    "PriceBook",
    "PricePath",
    "RandomWalkPath",
    "RandomWalkSpec",
    "check_price",
    "default_spec",
    "derive_seed",
]

_YEAR_SECONDS: Final = Decimal(31_557_600)  # 365.25 days
_CHUNK: Final = 1024  # random-walk steps generated at a time
_CALC: Final = Context(prec=28)  # exponents, exp, ln
_SIG12: Final = Context(prec=12)  # rounding of walk prices, native prices and percentages
_WIDE: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)  # exact +, -, ×
_LN_LOW: Final = _CALC.ln(Decimal("0.001"))
_LN_HIGH: Final = _CALC.ln(Decimal(50))


class NoPrice(LookupError):
    """A token has no price at the asked time (before its path starts)."""


def check_price(price: object) -> Decimal:
    """`price` itself when it is a finite `Decimal` > 0; else TypeError/ValueError."""
    if not isinstance(price, Decimal):
        raise TypeError(f"a price must be a Decimal, got {type(price).__name__}")
    if not price.is_finite() or price <= 0:
        raise ValueError(f"a price must be finite and > 0, got {price}")
    return price


def derive_seed(seed: int, label: str, key: str) -> int:
    """A 64-bit seed from the world seed, a purpose label and a token key (SHA-256)."""
    digest = hashlib.sha256(f"{seed}|{label}|{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _unit(seed: int, label: str, key: str) -> Decimal:  # in [0, 1)
    return _CALC.divide(Decimal(derive_seed(seed, label, key)), Decimal(1 << 64))


class PricePath:
    """A piecewise-constant USD price series: change points and the price from each on.

    Times are aware UTC (naive refused) and strictly increasing; prices are `Decimal` > 0.
    Lookups bisect a parallel list of integer microseconds.
    """

    def __init__(self, times: Sequence[datetime], prices: Sequence[Decimal]) -> None:
        if len(times) != len(prices):
            raise ValueError(f"{len(times)} times but {len(prices)} prices")
        self._us = [to_micros(t) for t in times]
        for earlier, later in pairwise(self._us):
            if later <= earlier:
                raise ValueError(f"change points out of order at {from_micros(later).isoformat()}")
        self._prices = [check_price(p) for p in prices]

    @property
    def times(self) -> list[datetime]:
        """The change points (of a random walk: those generated so far)."""
        return [from_micros(self._time_us(i)) for i in range(self._len())]

    @property
    def prices(self) -> list[Decimal]:
        """The price from each change point on (of a random walk: generated so far)."""
        return [self._price(i) for i in range(self._len())]

    # Primitives, overridden by RandomWalkPath.
    def _len(self) -> int:
        return len(self._prices)

    def _count_le(self, us: int) -> int:
        """How many change points are at or before `us`."""
        return bisect_right(self._us, us)

    def _time_us(self, index: int) -> int:
        return self._us[index]

    def _price(self, index: int) -> Decimal:
        return self._prices[index]

    def _next_us(self, us: int) -> int | None:
        index = bisect_right(self._us, us)
        return self._us[index] if index < len(self._us) else None

    def _at_us(self, us: int) -> Decimal | None:
        count = self._count_le(us)
        return self._price(count - 1) if count else None

    def _changes(self, after_us: int, until_us: int) -> Iterator[tuple[int, Decimal]]:
        """(time µs, price) of each change point with after < time ≤ until, lazily."""
        for index in range(self._count_le(after_us), self._count_le(until_us)):
            yield self._time_us(index), self._price(index)

    def at(self, moment: datetime) -> Decimal | None:
        """The price in force at `moment` (last point ≤ it); None before the first point."""
        return self._at_us(to_micros(moment))

    def point_index(self, moment: datetime) -> int | None:
        """Index of the change point in force at `moment`; None before the first point."""
        count = self._count_le(to_micros(moment))
        return count - 1 if count else None

    def step_start(self, moment: datetime) -> datetime | None:
        """Time of the change point in force at `moment`; None before the first point."""
        index = self.point_index(moment)
        return None if index is None else from_micros(self._time_us(index))

    def anchor(self, moment: datetime) -> tuple[Hashable | None, Decimal | None]:
        """The price point in force at `moment`: an identity of it, and its price.

        The identity is equal for two moments exactly when the same point is in force
        (here its start, `step_start`); (None, None) before the first point. A pool
        re-anchors when it changes.
        """
        count = self._count_le(to_micros(moment))
        if not count:
            return None, None
        return from_micros(self._time_us(count - 1)), self._price(count - 1)

    def point_counts(self, moments_us: Sequence[int]) -> list[int]:
        """For each time (µs), how many change points are at or before it (0: none yet).

        Two times are on the same price point exactly when their counts are equal (as
        their `anchor` identities are), and `point_price(count)` is that point's price:
        `anchor` for many times at once (`dca_run`).
        """
        return [self._count_le(us) for us in moments_us]

    def point_price(self, count: int) -> Decimal:
        """The price of the point in force where `point_counts` says `count` (≥ 1)."""
        return self._price(count - 1)

    def next_change_after(self, moment: datetime) -> datetime | None:
        """The first change point strictly after `moment`; None if there is none."""
        us = self._next_us(to_micros(moment))
        return None if us is None else from_micros(us)

    # Hook for paths that search whole windows at once (the backtester's array paths).
    def supports_crossing(self, den: PricePath) -> bool:
        """True when `crossing_us` answers `PriceBook.first_ratio_at_least` for this pair."""
        return False

    def crossing_us(
        self, den: PricePath, threshold: Decimal, after_us: int, until_us: int
    ) -> int | None:
        """The first change point t (µs) of self or `den` where self ≥ threshold × den.

        Only points with after < t ≤ until count; None if there is none. Called only
        where `supports_crossing(den)` is true.
        """
        raise NotImplementedError(f"{type(self).__name__} has no window search")


@dataclass(frozen=True)
class RandomWalkSpec:
    """Parameters of a geometric Brownian motion (annual drift and volatility)."""

    start_price: Decimal
    drift_per_year: Decimal
    volatility_per_year: Decimal
    step_seconds: int = 60

    def __post_init__(self) -> None:
        for name in ("start_price", "drift_per_year", "volatility_per_year"):
            object.__setattr__(self, name, parse_decimal(getattr(self, name), field=name))
        check_price(self.start_price)
        if self.volatility_per_year < 0:
            raise ValueError("volatility_per_year must be ≥ 0")
        step = self.step_seconds
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise ValueError(f"step_seconds must be an int ≥ 1, got {step!r}")


class RandomWalkPath(PricePath):
    """A GBM price path on the grid origin + k·step, generated lazily in chunks.

    Point 0 is `spec.start_price` at `origin` (no price before it). Each step multiplies by
    exp((mu - sigma²/2)·dt + sigma·sqrt(dt)·Z), dt in years of 365.25 days, Z from
    `random.Random(seed).gauss` as `Decimal(repr(z))`; exponent and exp at 28 digits, each
    price rounded to 12 significant digits, stored as integer coefficient and exponent.
    """

    def __init__(self, spec: RandomWalkSpec, origin: datetime, seed: int) -> None:
        super().__init__((), ())
        self.spec = spec
        self.origin = ensure_utc(origin)
        self._origin_us = to_micros(origin)
        self._step_us = spec.step_seconds * MICROS_PER_SECOND
        self._rng = random.Random(seed)  # noqa: S311 (a simulation, not cryptography)
        dt = _CALC.divide(Decimal(spec.step_seconds), _YEAR_SECONDS)
        sigma = spec.volatility_per_year
        half_var = _CALC.divide(_CALC.multiply(sigma, sigma), Decimal(2))
        self._drift = _CALC.multiply(_CALC.subtract(spec.drift_per_year, half_var), dt)
        self._vol = _CALC.multiply(sigma, _CALC.sqrt(dt))
        self._coef: array[int] = array("q")  # price = coef × 10**exp
        self._exp: array[int] = array("i")
        self._last = _SIG12.plus(spec.start_price)
        self._store(self._last)

    def _store(self, price: Decimal) -> None:
        exponent = int(price.as_tuple().exponent)
        self._coef.append(int(price.scaleb(-exponent, context=_WIDE)))
        self._exp.append(exponent)

    def _ensure(self, index: int) -> None:
        """Generate points up to `index` (at least a chunk at a time)."""
        have = len(self._coef)
        if index < have:
            return
        rng, drift, vol, price = self._rng, self._drift, self._vol, self._last
        for _ in range(max(index + 1, have + _CHUNK) - have):
            z = Decimal(repr(rng.gauss(0.0, 1.0)))  # the float draw, made exact at once
            price = _SIG12.multiply(price, _CALC.exp(_CALC.add(drift, _CALC.multiply(vol, z))))
            self._store(price)
        self._last = price

    def _len(self) -> int:
        return len(self._coef)

    def _count_le(self, us: int) -> int:
        return 0 if us < self._origin_us else (us - self._origin_us) // self._step_us + 1

    def _time_us(self, index: int) -> int:
        return self._origin_us + index * self._step_us

    def _price(self, index: int) -> Decimal:
        self._ensure(index)
        return Decimal(self._coef[index]).scaleb(self._exp[index], context=_WIDE)

    def _next_us(self, us: int) -> int | None:
        return self._time_us(self._count_le(us))


def default_spec(token: Token, seed: int) -> RandomWalkSpec:
    """The walk of a token nobody configured.

    APT starts at 5 (vol 0.8/yr); symbols containing "USD" at 1 (vol 0.02/yr); any other
    token at a log-uniform price in [0.001, 50] (6 significant digits, from the seed and
    its key) with vol 1.2/yr. Drift is 0 for all.
    """
    if is_native_apt(token):
        return RandomWalkSpec(Decimal(5), Decimal(0), Decimal("0.8"))
    if "USD" in token.symbol.upper():
        return RandomWalkSpec(Decimal(1), Decimal(0), Decimal("0.02"))
    fraction = _unit(seed, "start", token.address)
    log_price = _CALC.add(_LN_LOW, _CALC.multiply(fraction, _LN_HIGH - _LN_LOW))
    start = Context(prec=6).plus(_CALC.exp(log_price))
    return RandomWalkSpec(start, Decimal(0), Decimal("1.2"))


class PriceBook:
    """The paper world's price oracle: one path per token, deterministic for a seed.

    A token's path is its replayed series, else its configured spec's walk, else the walk
    of `spec_factory(token, seed)`; built on first use. A seeded `hidden_fraction` of
    default-spec tokens (not APT, not "USD" symbols) has no visible price, only an
    internal one (swaps can still be quoted).
    """

    def __init__(
        self,
        seed: int,
        tokens: PaperTokens,
        origin: datetime,
        *,
        replayed: Mapping[str, PricePath] | None = None,
        specs: Mapping[str, RandomWalkSpec] | None = None,
        spec_factory: Callable[[Token, int], RandomWalkSpec] = default_spec,
        hidden_fraction: Decimal = Decimal("0.05"),
    ) -> None:
        self.seed = seed
        self.tokens = tokens
        self.origin = ensure_utc(origin)
        self._replayed = {token_key(k): p for k, p in (replayed or {}).items()}
        self._specs = {token_key(k): s for k, s in (specs or {}).items()}
        self._spec_factory = spec_factory
        self._hidden_fraction = parse_decimal(hidden_fraction, field="hidden_fraction")
        self._paths: dict[str, tuple[PricePath, bool]] = {}
        # Identities of registered tokens → entry; valid while the registry's book is.
        self._known: dict[str, tuple[PricePath, bool]] = {}
        self._known_book: object = None

    def __setstate__(self, state: dict[str, object]) -> None:
        """Restore a pickled book (snapshots written before the identity cache existed)."""
        self.__dict__.update({"_known": {}, "_known_book": None, **state})

    def _entry(self, identity: str) -> tuple[PricePath, bool]:
        """The (path, visible) of the token an identity names; built on first use."""
        if self._known_book is self.tokens.book:
            known = self._known.get(identity)
            if known is not None:
                return known
        else:
            self._known, self._known_book = {}, self.tokens.book
        token = self.tokens.get(identity)
        try:
            key = token.address if token else token_key(identity)
        except TokenLookupError:
            key = ""
        if token is None and key not in self._replayed and key not in self._specs:
            raise UnknownToken(f"unknown token {identity!r}")
        keys = token.keys if token else (key,)
        cached = self._paths.get(key)
        if cached is None:
            cached = self._build(key, keys, token)
            self._paths[key] = cached
        if token is not None:
            self._known[identity] = cached
        return cached

    def _build(
        self, key: str, keys: tuple[str, ...], token: Token | None
    ) -> tuple[PricePath, bool]:
        replays = [p for k in keys if (p := self._replayed.get(k)) is not None]
        if any(p is not replays[0] for p in replays):
            raise ValueError(f"two replayed series for one token: {', '.join(keys)}")
        if replays:
            return replays[0], True
        spec = next((self._specs[k] for k in keys if k in self._specs), None)
        visible = spec is not None or token is None or not self._hidden(token)
        if spec is None:
            if token is None:  # an unregistered key has a replay or a spec
                raise ValueError(f"no price series for unknown token {key}")
            spec = self._spec_factory(token, self.seed)
        return RandomWalkPath(spec, self.origin, derive_seed(self.seed, "walk", key)), visible

    def _hidden(self, token: Token) -> bool:
        if is_native_apt(token) or "USD" in token.symbol.upper():
            return False
        return _unit(self.seed, "hidden", token.address) < self._hidden_fraction

    def series_for(self, token: str) -> PricePath:
        """The path of a token (coin type or FA address, any spelling)."""
        return self._entry(token)[0]

    def is_visible(self, token: str) -> bool:
        """False for tokens the simulated provider cannot price."""
        return self._entry(token)[1]

    def usd(self, token: str, at: datetime) -> Decimal:
        """The internal USD price at `at`.

        Raises:
            NoPrice: before the path starts. UnknownToken: an unknown token text.
        """
        price = self._entry(token)[0].at(at)
        if price is None:
            raise NoPrice(f"no price for {token} at {ensure_utc(at).isoformat()}")
        return price

    def usd_visible(self, token: str, at: datetime) -> Decimal | None:
        """The USD price the price endpoint shows; None when hidden or not yet priced."""
        path, visible = self._entry(token)
        return path.at(at) if visible else None

    def native(self, token: str, at: datetime) -> Decimal | None:
        """USD price / APT's USD price (12 significant digits); None when not visible."""
        price = self.usd_visible(token, at)
        try:
            apt = self.series_for(APT_COIN_TYPE).at(at)
        except UnknownToken:
            return None
        return None if price is None or apt is None else _SIG12.divide(price, apt)

    def change_24h(self, token: str, at: datetime) -> Decimal | None:
        """Percent change vs 24 h earlier (`Decimal("-2.5")`); None if hidden or unpriced."""
        path, visible = self._entry(token)
        # A day ago first: a path remembers its last lookup, and "now" is asked again
        # next (the price itself), and is the next day's "a day ago".
        then = path.at(ensure_utc(at) - timedelta(hours=24))
        now = path.at(at)
        if not visible or now is None or then is None:
            return None
        return _SIG12.divide(_WIDE.multiply(_WIDE.subtract(now, then), Decimal(100)), then)

    def step_start(self, token: str, at: datetime) -> datetime | None:
        """When the price in force at `at` took effect; None before the path starts."""
        return self._entry(token)[0].step_start(at)

    def anchors(self, token: str) -> Callable[[datetime], tuple[Hashable | None, Decimal | None]]:
        """The token's `PricePath.anchor`: its price point at any time, in one lookup.

        (None, None) before the path starts: `usd` then says why.
        """
        return self._entry(token)[0].anchor

    def next_change_after(
        self, tokens: Iterable[str], after: datetime, until: datetime
    ) -> datetime | None:
        """The earliest change point of any of `tokens` with after < t ≤ until, or None."""
        limit = ensure_utc(until)
        found = [self._entry(t)[0].next_change_after(after) for t in tokens]
        due = [t for t in found if t is not None and t <= limit]
        return min(due) if due else None

    def first_ratio_at_least(
        self, num: str, den: str, threshold: Decimal, after: datetime, until: datetime
    ) -> datetime | None:
        """The first change point t of num or den, after < t ≤ until, where num/den ≥ threshold.

        None if the ratio never gets there. Compared exactly, as usd(num) ≥ threshold ×
        usd(den). One walk over the merged change points of both paths in the window.
        """
        threshold = parse_decimal(threshold, allow_infinity=True, field="threshold")
        after_us, until_us = to_micros(after), to_micros(until)
        if threshold.is_infinite() or until_us <= after_us:
            return None
        paths = (self.series_for(num), self.series_for(den))
        if paths[0].supports_crossing(paths[1]):
            found = paths[0].crossing_us(paths[1], threshold, after_us, until_us)
            return None if found is None else from_micros(found)
        prices = [path._at_us(after_us) for path in paths]
        # ((time, price), side) of each change point of num (side 0) and den (side 1).
        tagged = [zip(p._changes(after_us, until_us), repeat(side)) for side, p in enumerate(paths)]
        for moment, changes in groupby(heapq.merge(*tagged), key=lambda c: c[0][0]):
            for (_, price), side in changes:
                prices[side] = price
            num_price, den_price = prices
            if num_price is None or den_price is None:
                continue
            if num_price >= _WIDE.multiply(threshold, den_price):
                return from_micros(moment)
        return None
