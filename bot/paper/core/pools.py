"""Constant-product liquidity pools, re-anchored to the oracle price as time moves.

Every pair of tokens trades through one virtual pool whose reserves, at each new price
point of either token, are reset so that each side is worth `depth_usd` at the oracle
price. Between price points, trades move the reserves (real price impact that persists
until the next re-anchor). All amounts are integer base units; the arithmetic is exact
integer math with rounding always in the pool's favour.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_FLOOR, Context, Decimal, localcontext
from typing import TYPE_CHECKING, Final, Protocol, cast

from bot.aptos.tokens import Token

if TYPE_CHECKING:
    from bot.paper.core.prices import PricePath

__all__ = [
    "InsufficientLiquidity",
    "Pool",
    "PoolBook",
    "PoolSettings",
    "PriceOracle",
    "anchor_reserve",
    "same_token",
]

_BPS: Final = 10_000
_CTX60: Final = Context(prec=60)


def same_token(a: Token, b: Token) -> bool:
    """Whether two tokens have the same identities (`keys`), cheaply on the hot path.

    Equal keys imply an equal `address`, so different addresses answer without building
    the `keys` tuples.
    """
    return a is b or (a.address == b.address and a.keys == b.keys)


class InsufficientLiquidity(Exception):
    """The pool cannot deliver the amount asked for."""


class PriceOracle(Protocol):
    """What the pools need from the price book."""

    def usd(self, token: str, at: datetime) -> Decimal:
        """The internal USD price of a token at a time."""
        ...

    def step_start(self, token: str, at: datetime) -> datetime | None:
        """When the price point in force at `at` began (re-anchoring happens then)."""
        ...


AnchorOf = Callable[[datetime], tuple[Hashable | None, Decimal | None]]
"""One token's price point at a time: (an identity of the point, equal for two times
exactly when the same point is in force; its `usd` price); (None, None) before it has
a price."""


class AnchorOracle(PriceOracle, Protocol):
    """An oracle that also answers both questions of a re-anchor in one call."""

    def anchors(self, token: str) -> AnchorOf:
        """The function giving `token`'s price point at any time."""
        ...


def _anchors_of(oracle: PriceOracle) -> AnchorOracle | None:
    """The oracle as an `AnchorOracle` when it has `anchors` (the price book does)."""
    return cast(AnchorOracle, oracle) if callable(getattr(oracle, "anchors", None)) else None


@dataclass(frozen=True)
class PoolSettings:
    """Depth (USD per side at anchor), swap fee and the DEX name shown in routes."""

    depth_usd: Decimal = Decimal("2000000")
    fee_bps: int = 25
    dex_name: str = "PaperSwap"

    def __post_init__(self) -> None:
        if not (self.depth_usd > 0 and 0 <= self.fee_bps < _BPS):
            raise ValueError("depth_usd must be > 0 and fee_bps in [0, 10000)")


@dataclass
class Pool:
    """Reserves of one pair (`sell` side x, `buy` side y are chosen per call)."""

    token_a: Token
    token_b: Token
    reserve_a: int
    reserve_b: int
    anchor: tuple[Hashable | None, Hashable | None]
    """The price points the reserves were set at (`step_start` times, or the identities
    an `AnchorOracle` gives): a new point of either token re-anchors the pool."""
    settings: PoolSettings

    def reserves(self, sell: Token) -> tuple[int, int]:
        """(reserve of the sold token, reserve of the bought token)."""
        if self._sells_a(sell):
            return self.reserve_a, self.reserve_b
        return self.reserve_b, self.reserve_a

    def _sells_a(self, sell: Token) -> bool:
        """Whether `sell` is token a (by identity first: `keys` is computed per call)."""
        if sell is self.token_a:
            return True
        return sell is not self.token_b and sell.keys == self.token_a.keys

    def out_for_in(self, sell: Token, amount_in: int) -> int:
        """Bought base units for `amount_in` sold (after the pool fee), rounded down."""
        x, y = self.reserves(sell)
        effective = amount_in * (_BPS - self.settings.fee_bps)
        return (y * effective) // (x * _BPS + effective) if amount_in > 0 else 0

    def in_for_out(self, sell: Token, amount_out: int) -> int:
        """Sold base units needed to receive `amount_out`, rounded up."""
        x, y = self.reserves(sell)
        if amount_out >= y:
            raise InsufficientLiquidity(f"pool holds {y} base units, {amount_out} asked")
        if amount_out <= 0:
            return 0
        effective = -(-x * amount_out // (y - amount_out))  # ceil
        return -(-effective * _BPS // (_BPS - self.settings.fee_bps))

    def max_in_at_rate(self, sell: Token, min_rate_base: Decimal) -> int:
        """Largest amount sold whose average rate (bought/sold, base units) is ≥ the rate.

        From out/in = y·f/(x + f·in) ≥ R it follows in ≤ y/R − x/f (f = 1 − fee).
        """
        if min_rate_base <= 0:
            raise ValueError("rate must be positive")
        x, y = self.reserves(sell)
        fee_keep = Decimal(_BPS - self.settings.fee_bps) / _BPS
        with localcontext() as ctx:
            ctx.prec = 60
            bound = (Decimal(y) / min_rate_base - Decimal(x) / fee_keep).to_integral_value(
                rounding=ROUND_FLOOR
            )
        high = max(0, int(bound)) + 1  # the rounded bound, plus one to be safe
        # out_for_in(a)/a falls as a grows, so "average rate ≥ R" holds on [0, answer]:
        # binary search for the largest such a (integer rounding only lowers it).
        low = 0
        while low < high:
            mid = (low + high + 1) // 2
            if Decimal(self.out_for_in(sell, mid)) >= min_rate_base * mid:
                low = mid
            else:
                high = mid - 1
        return low

    def apply(self, sell: Token, amount_in: int, amount_out: int) -> None:
        """Record an executed trade: the pool gains what was sold, loses what was bought."""
        if self._sells_a(sell):
            self.reserve_a += amount_in
            self.reserve_b -= amount_out
        else:
            self.reserve_b += amount_in
            self.reserve_a -= amount_out


@dataclass
class _Pair:
    """What a pair's pool lookups reuse: the tokens asked with, the pool's key and settings.

    `pool` is the pool last returned for this (sell, buy) and `at` the time asked: asked
    again at the same time while that pool is still the book's, it is the answer.
    """

    sell: Token
    buy: Token
    key: frozenset[str]
    settings: PoolSettings
    anchors: tuple[AnchorOf, AnchorOf] | None
    """Each token's price point lookup, when the oracle has them."""
    at: datetime | None = None
    pool: Pool | None = None


class PoolBook:
    """One pool per pair of tokens, created on first use and re-anchored to the oracle."""

    def __init__(
        self,
        oracle: PriceOracle,
        settings: PoolSettings | None = None,
        overrides: dict[frozenset[str], PoolSettings] | None = None,
    ) -> None:
        self._oracle = oracle
        self._anchors = _anchors_of(oracle)
        self._default = settings or PoolSettings()
        self._overrides = dict(overrides or {})
        self._pools: dict[frozenset[str], Pool] = {}
        self._pairs: dict[tuple[int, int], _Pair] = {}
        self._last_reserve: dict[str, tuple[Decimal, Decimal, int]] = {}

    def __setstate__(self, state: dict[str, object]) -> None:
        """Restore a pickled book (snapshots written before the lookup caches existed)."""
        state = {k: v for k, v in state.items() if k != "_recent"}
        self.__dict__.update({"_pairs": {}, "_last_reserve": {}, **state})
        self._anchors = _anchors_of(self._oracle)

    def __getstate__(self) -> dict[str, object]:
        """The book without its lookup cache (rebuilt on use)."""
        return {**self.__dict__, "_pairs": {}}

    def settings_for(self, a: Token, b: Token) -> PoolSettings:
        """The depth/fee of a pair (an override, or the default)."""
        return self._overrides.get(frozenset((a.address, b.address)), self._default)

    def pool(self, sell: Token, buy: Token, at: datetime) -> Pool:
        """The pool of the pair as of `at`, re-anchored if a new price point began."""
        pair = self._pairs.get((id(sell), id(buy)))
        if pair is None or pair.sell is not sell or pair.buy is not buy:
            pair = self._pair(sell, buy)
        pool = pair.pool
        if pool is not None and pair.at == at and self._pools.get(pair.key) is pool:
            return pool
        pool = self._current(pair, at)
        pair.pool, pair.at = pool, at
        return pool

    def paths_for(self, sell: Token, buy: Token) -> tuple[PricePath, PricePath] | None:
        """The price paths the pair's pool re-anchors by (None: the oracle has none).

        With `anchor_reserve` and `set_reserves`, what a run of trades on one pair needs
        to follow the pool as `pool` would, without asking it at every trade (`dca_run`).
        """
        series_for = getattr(self._oracle, "series_for", None)
        if self._anchors is None or series_for is None:
            return None
        return series_for(sell.address), series_for(buy.address)

    def set_reserves(
        self, sell: Token, buy: Token, at: datetime, reserves: tuple[int, int]
    ) -> None:
        """Set the reserves (of `sell`, of `buy`) of the pair's pool as of `at`."""
        pool = self.pool(sell, buy, at)
        if pool._sells_a(sell):
            pool.reserve_a, pool.reserve_b = reserves
        else:
            pool.reserve_b, pool.reserve_a = reserves

    def _pair(self, sell: Token, buy: Token) -> _Pair:
        if same_token(sell, buy):
            raise ValueError(f"cannot swap {sell.symbol} for itself")
        anchors = self._anchors
        pair = _Pair(
            sell,
            buy,
            frozenset((sell.address, buy.address)),
            self.settings_for(sell, buy),
            None
            if anchors is None
            else (anchors.anchors(sell.address), anchors.anchors(buy.address)),
        )
        self._pairs[(id(sell), id(buy))] = pair
        return pair

    def _current(self, pair: _Pair, at: datetime) -> Pool:
        sell, buy = pair.sell, pair.buy
        sell_price: Decimal | None = None
        buy_price: Decimal | None = None
        sell_start: Hashable | None
        buy_start: Hashable | None
        if pair.anchors is not None:
            sell_start, sell_price = pair.anchors[0](at)
            buy_start, buy_price = pair.anchors[1](at)
        else:  # prices asked only if the pool must re-anchor
            sell_start = self._oracle.step_start(sell.address, at)
            buy_start = self._oracle.step_start(buy.address, at)
        pool = self._pools.get(pair.key)
        if pool is not None:
            ordered = (sell_start, buy_start) if pool._sells_a(sell) else (buy_start, sell_start)
            if pool.anchor == ordered:
                return pool
        depth = pair.settings.depth_usd
        reserve_sell = self._reserve_at(depth, sell, at, sell_price)
        reserve_buy = self._reserve_at(depth, buy, at, buy_price)
        pool = Pool(sell, buy, reserve_sell, reserve_buy, (sell_start, buy_start), pair.settings)
        self._pools[pair.key] = pool
        return pool

    def _reserve_at(
        self, depth_usd: Decimal, token: Token, at: datetime, price: Decimal | None
    ) -> int:
        """A token's reserve at anchor (its last one again while depth and price hold).

        A pegged or quiet token re-anchors to the same reserve: not computed again.
        `price`: the token's price at `at` when the caller has it already.
        """
        if price is None:
            price = self._oracle.usd(token.address, at)
        last = self._last_reserve.get(token.address)
        if last is not None and last[0] == depth_usd and last[1] == price:
            return last[2]
        units = anchor_reserve(depth_usd, price, token)
        self._last_reserve[token.address] = (depth_usd, price, units)
        return units

    def snapshot(self) -> dict[frozenset[str], tuple[int, int]]:
        """The reserves of every pool (to undo a simulated trade with `restore`)."""
        return {key: (p.reserve_a, p.reserve_b) for key, p in self._pools.items()}

    def restore(self, saved: dict[frozenset[str], tuple[int, int]]) -> None:
        """Put reserves back as `snapshot` saw them; pools made since are forgotten."""
        for key in list(self._pools):
            if key not in saved:
                del self._pools[key]
        for key, (reserve_a, reserve_b) in saved.items():
            pool = self._pools.get(key)
            if pool is not None:
                pool.reserve_a, pool.reserve_b = reserve_a, reserve_b

    def marginal_rate(self, sell: Token, buy: Token, at: datetime) -> Decimal:
        """Human units of `buy` per unit of `sell` for a tiny trade, after the pool fee."""
        pool = self.pool(sell, buy, at)
        x, y = pool.reserves(sell)
        keep = Decimal(_BPS - pool.settings.fee_bps) / _BPS
        with localcontext() as ctx:
            ctx.prec = 40
            return (Decimal(y) / Decimal(x) * keep).scaleb(sell.decimals - buy.decimals)


def anchor_reserve(depth_usd: Decimal, usd_price: Decimal, token: Token) -> int:
    """A pool's reserve of `token` at anchor: `depth_usd` worth at `usd_price`, rounded down."""
    ctx = _CTX60
    # The context passed positionally: `_decimal` parses keywords at a cost per call.
    exact = ctx.divide(depth_usd, usd_price).scaleb(token.decimals, ctx)
    return max(1, int(exact.to_integral_value(ROUND_FLOOR, ctx)))
