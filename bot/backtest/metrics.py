"""What a backtest's fills add up to: invested, received, entry price, PnL, drawdown, fees.

Everything is an exact `Decimal` (sums are exact; ratios carry the default 28 significant
digits). USD values use the oracle prices the result carries: a fill's own `sell_usd` /
`buy_usd` at its time, and the `PricePoints` of each token for the start, end and path.

The *position* is the strategy's main pair (see `main_pair`): the *quote* token it pays
with and the *asset* it acquires. Buys (quote → asset) add to it; sells back (asset →
quote, e.g. take-profit) take from it and their proceeds count as realised value. Fills of
any other pair are counted and their fees included, but they are not in the position.

- invested: quote sold by buys (fees included), and its USD value at the fill times;
- received: asset bought; held: received − asset sold back;
- average entry: invested USD / received (USD per asset), and invested / received (quote
  per asset), against the mean USD price of the asset over the period;
- value at end: held × the asset's last price + the USD proceeds of sells back;
  PnL = value at end − invested USD; return = PnL / invested USD;
- max drawdown: the largest fall of PnL (value − invested so far) from an earlier peak,
  so money added by later buys neither hides nor creates a drawdown; as a percent, that
  fall over the stake (the value at the peak plus the money added until the trough; for
  a position bought once, the asset's own drawdown). The path is evaluated after every
  fill and at `points` evenly spaced price points (`PricePoints.sample`): a dip narrower
  than the sample spacing between two fills can be missed (the report shows the count);
- lump sum: the same quote amount spent at the start price, at the strategy's own
  effective fee rate (fees / sold), without price impact, held to the end.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from itertools import pairwise
from typing import Any, NamedTuple

from bot.backtest.result import BacktestFill, BacktestResult, PricePoints
from bot.money import format_decimal

__all__ = [
    "DEFAULT_PATH_POINTS",
    "Benchmark",
    "Metrics",
    "ValuePoint",
    "benchmark_of",
    "bound_params",
    "compute_metrics",
    "drawdown_series",
    "held_value_series",
    "main_pair",
    "with_no_bounds",
]

DEFAULT_PATH_POINTS = 4000
"""Price points (besides every fill) at which the position's value path is evaluated."""

ZERO = Decimal(0)
HUNDRED = Decimal(100)
_BOUND_RE = re.compile(r"^(min|max)_\w*rate$")


class ValuePoint(NamedTuple):
    """The position at one moment: what is held, what it is worth, what it cost.

    A tuple, not a dataclass: a year of hourly fills makes ten thousand of them.
    """

    time: datetime
    price_usd: Decimal  # the asset's oracle price
    held: Decimal  # asset held from the strategy's trades
    invested_usd: Decimal  # USD spent on buys so far
    value_usd: Decimal  # held × price + proceeds of sells back so far

    @property
    def pnl_usd(self) -> Decimal:
        """Value minus what was invested so far."""
        return self.value_usd - self.invested_usd


@dataclass(frozen=True)
class Benchmark:
    """Another way of spending the money, for comparison (lump sum, no bounds)."""

    name: str
    invested_usd: Decimal
    received: Decimal  # of the asset
    value_at_end_usd: Decimal
    pnl_usd: Decimal
    return_percent: Decimal | None
    note: str = ""


@dataclass(frozen=True)
class Metrics:
    """The figures of one backtest (see the module docstring for each definition)."""

    quote: str | None  # TokenInfo.key of the token paid with; None without any trade
    asset: str | None  # TokenInfo.key of the token acquired
    invested: Decimal
    invested_usd: Decimal
    received: Decimal
    sold_back: Decimal  # asset sold back for quote
    proceeds: Decimal  # quote received for it
    proceeds_usd: Decimal
    held_at_end: Decimal
    avg_entry_usd: Decimal | None
    avg_entry_quote: Decimal | None
    mean_price_usd: Decimal | None
    entry_vs_mean_percent: Decimal | None  # negative: bought below the period's mean
    start_price_usd: Decimal | None
    end_price_usd: Decimal | None
    value_at_end_usd: Decimal
    pnl_usd: Decimal
    return_percent: Decimal | None
    max_drawdown_usd: Decimal
    max_drawdown_percent: Decimal | None
    drawdown_points: int  # how many points the value path had
    orders: int
    orders_by_status: dict[str, int]
    swaps: int
    fills: int
    skips: int
    other_pair_fills: int  # fills outside the main pair (not in the position)
    fees: dict[str, Decimal]  # by token key
    fees_usd: Decimal
    refunded: dict[str, Decimal]  # by token key
    locked_at_end: dict[str, Decimal]
    wallet_start_usd: Decimal | None  # start balances at start prices (priced tokens)
    wallet_end_usd: Decimal | None  # end free + locked balances at end prices
    lump_sum: Benchmark | None
    no_bounds: Benchmark | None = None
    path: list[ValuePoint] = field(default_factory=list, repr=False)


def main_pair(result: BacktestResult) -> tuple[str, str] | None:
    """The (quote, asset) pair of the position: the direction with the most trades.

    Non-skipped fills count first (ties: the earliest), then orders, then skipped slices;
    None when the strategy never traded or ordered anything.
    """
    for pairs in (
        [(f.sell_token, f.buy_token) for f in result.fills if not f.skipped],
        [(o.sell_token, o.buy_token) for o in result.orders],
        [(f.sell_token, f.buy_token) for f in result.fills],
    ):
        if pairs:
            counts = Counter(pairs)
            best = max(counts.values())
            return next(p for p in pairs if counts[p] == best)
    return None


def compute_metrics(result: BacktestResult, *, points: int = DEFAULT_PATH_POINTS) -> Metrics:
    """The metrics of one backtest result.

    Args:
        result: what the runner produced.
        points: price points of the value path besides the fills (its resolution).
    """
    pair = main_pair(result)
    quote, asset = pair if pair is not None else (None, None)
    fills = sorted(result.fills, key=lambda f: f.time)  # stable: same-time fills keep order
    traded = [f for f in fills if not f.skipped]
    buys = [f for f in traded if (f.sell_token, f.buy_token) == (quote, asset)]
    sells = [f for f in traded if (f.sell_token, f.buy_token) == (asset, quote)]

    invested = sum((f.sold for f in buys), ZERO)
    invested_usd = sum((f.sold * f.sell_usd for f in buys), ZERO)
    received = sum((f.bought for f in buys), ZERO)
    sold_back = sum((f.sold for f in sells), ZERO)
    proceeds = sum((f.bought for f in sells), ZERO)
    proceeds_usd = sum((f.bought * f.buy_usd for f in sells), ZERO)
    held = received - sold_back

    asset_prices = result.prices.get(asset) if asset is not None else None
    end_price = asset_prices.last if asset_prices is not None else _last_fill_price(fills, asset)
    value_at_end = held * end_price + proceeds_usd if end_price is not None else proceeds_usd
    pnl = value_at_end - invested_usd
    path = value_path(result, fills, quote, asset, points) if asset is not None else []
    drawdown, drawdown_percent = max_drawdown(path)
    mean = asset_prices.mean if asset_prices is not None else None
    avg_entry_usd = invested_usd / received if received else None

    fees: dict[str, Decimal] = {}
    for f in traded:
        fees[f.sell_token] = fees.get(f.sell_token, ZERO) + f.fee
    refunded: dict[str, Decimal] = {}
    for o in result.orders:
        if o.refunded:
            refunded[o.sell_token] = refunded.get(o.sell_token, ZERO) + o.refunded

    metrics = Metrics(
        quote=quote,
        asset=asset,
        invested=invested,
        invested_usd=invested_usd,
        received=received,
        sold_back=sold_back,
        proceeds=proceeds,
        proceeds_usd=proceeds_usd,
        held_at_end=held,
        avg_entry_usd=avg_entry_usd,
        avg_entry_quote=invested / received if received else None,
        mean_price_usd=mean,
        entry_vs_mean_percent=(
            (avg_entry_usd / mean - 1) * HUNDRED if avg_entry_usd is not None and mean else None
        ),
        start_price_usd=asset_prices.first if asset_prices is not None else None,
        end_price_usd=end_price,
        value_at_end_usd=value_at_end,
        pnl_usd=pnl,
        return_percent=pnl / invested_usd * HUNDRED if invested_usd else None,
        max_drawdown_usd=drawdown,
        max_drawdown_percent=drawdown_percent,
        drawdown_points=len(path),
        orders=len(result.orders),
        orders_by_status=dict(sorted(Counter(o.status for o in result.orders).items())),
        swaps=sum(1 for f in traded if f.kind == "swap"),
        fills=len(traded),
        skips=sum(1 for f in fills if f.skipped),
        other_pair_fills=len(traded) - len(buys) - len(sells),
        fees=fees,
        fees_usd=sum((f.fee * f.sell_usd for f in traded), ZERO),
        refunded=refunded,
        locked_at_end={k: v for k, v in result.locked_at_end.items() if v},
        wallet_start_usd=_wallet_value(result.start_balances, {}, result.prices, at_end=False),
        wallet_end_usd=_wallet_value(
            result.end_balances, result.locked_at_end, result.prices, at_end=True
        ),
        lump_sum=None,
        path=path,
    )
    return replace(metrics, lump_sum=lump_sum(result, metrics, buys))


def value_path(
    result: BacktestResult,
    fills: list[BacktestFill],
    quote: str | None,
    asset: str,
    points: int,
) -> list[ValuePoint]:
    """The position's value after every fill of the pair and at `points` sampled prices.

    A sampled point at the same moment as a fill comes after it (the fill has happened by
    then). The start and the end of the window are always included when the asset has
    prices; a fill is valued at its own oracle price.
    """
    if any(a.time > b.time for a, b in pairwise(fills)):
        fills = sorted(fills, key=lambda f: f.time)  # stable: same-time fills keep order
    prices = result.prices.get(asset)
    sampled: list[tuple[datetime, Decimal]] = []
    if prices is not None:
        sampled = [(result.start, _price_at(prices, result.start))]
        sampled += [(t, p) for t, p in prices.sample(points) if result.start < t < result.end]
        sampled.append((result.end, prices.last))
    # Both in time order (`fills` is sorted): merged as they come, a fill before a sample
    # at the same moment, same-time fills in their order; no list of every step is built.
    steps = heapq.merge(
        _fill_steps(fills, quote, asset),
        ((t, 1, ZERO, ZERO, ZERO, p) for t, p in sampled),
        key=lambda s: (s[0], s[1]),
    )
    path: list[ValuePoint] = []
    held = cost = realised = ZERO
    for moment, _, d_held, d_cost, d_proceeds, price in steps:
        held, cost, realised = held + d_held, cost + d_cost, realised + d_proceeds
        path.append(ValuePoint(moment, price, held, cost, held * price + realised))
    return path


_Step = tuple[datetime, int, Decimal, Decimal, Decimal, Decimal]
"""(time, rank, Δheld, Δcost USD, Δproceeds USD, asset price); rank 0 for fills, 1 samples."""


def _fill_steps(fills: list[BacktestFill], quote: str | None, asset: str) -> Iterator[_Step]:
    """The value path's steps of the position's fills, in their order."""
    for f in fills:
        if f.skipped:
            continue
        if (f.sell_token, f.buy_token) == (quote, asset):
            yield (f.time, 0, f.bought, f.sold * f.sell_usd, ZERO, f.buy_usd)
        elif (f.sell_token, f.buy_token) == (asset, quote):
            yield (f.time, 0, -f.sold, ZERO, f.bought * f.buy_usd, f.sell_usd)


def max_drawdown(path: list[ValuePoint]) -> tuple[Decimal, Decimal | None]:
    """The largest fall of PnL from an earlier peak: in USD, and in percent of the stake.

    The stake is the value at the peak plus the money added between the peak and the
    trough; for a position bought once it makes the percent the asset's own drawdown, and
    it never exceeds 100 %. None when there was no fall.
    """
    worst = ZERO
    worst_percent: Decimal | None = None
    peak: ValuePoint | None = None
    for point in path:
        if peak is None or point.pnl_usd > peak.pnl_usd:
            peak = point
            continue
        fall = peak.pnl_usd - point.pnl_usd
        if fall > worst:
            stake = peak.value_usd + point.invested_usd - peak.invested_usd
            worst = fall
            worst_percent = fall / stake * HUNDRED if stake > 0 else None
    return worst, worst_percent


def drawdown_series(path: list[ValuePoint]) -> list[tuple[datetime, Decimal]]:
    """How far PnL stands below its earlier peak at each point of the path (USD, ≥ 0).

    The same definition as `max_drawdown`, point by point: its largest value is the
    maximum drawdown.
    """
    series: list[tuple[datetime, Decimal]] = []
    peak: Decimal | None = None
    for point in path:
        pnl = point.pnl_usd
        if peak is None or pnl > peak:
            peak = pnl
        series.append((point.time, peak - pnl))
    return series


def held_value_series(path: list[ValuePoint], held: Decimal) -> list[tuple[datetime, Decimal]]:
    """The USD value of `held` of the asset at each point of the path.

    A benchmark's line: the lump sum's `received`, bought at the start and held.
    """
    return [(point.time, held * point.price_usd) for point in path]


def lump_sum(
    result: BacktestResult, metrics: Metrics, buys: list[BacktestFill]
) -> Benchmark | None:
    """The same quote amount spent at the start price and held; None without buys or prices."""
    if not buys or metrics.asset is None or metrics.quote is None:
        return None
    asset_prices = result.prices.get(metrics.asset)
    quote_prices = result.prices.get(metrics.quote)
    if asset_prices is None or metrics.end_price_usd is None:
        return None
    start_asset = _price_at(asset_prices, result.start)
    if not start_asset:
        return None
    quote_usd = _price_at(quote_prices, result.start) if quote_prices is not None else None
    cost_usd = metrics.invested * quote_usd if quote_usd else metrics.invested_usd
    sold = sum((f.sold for f in buys), ZERO)
    fee_rate = sum((f.fee for f in buys), ZERO) / sold if sold else ZERO
    bought = cost_usd * (1 - fee_rate) / start_asset
    value = bought * metrics.end_price_usd
    return Benchmark(
        name="lump sum at start",
        invested_usd=cost_usd,
        received=bought,
        value_at_end_usd=value,
        pnl_usd=value - cost_usd,
        return_percent=(value - cost_usd) / cost_usd * HUNDRED if cost_usd else None,
        note=f"fees {format_decimal(round(fee_rate * HUNDRED, 4))}% as paid, no price impact",
    )


def benchmark_of(name: str, metrics: Metrics, note: str = "") -> Benchmark:
    """Another run's metrics as a comparison line."""
    return Benchmark(
        name=name,
        invested_usd=metrics.invested_usd,
        received=metrics.received,
        value_at_end_usd=metrics.value_at_end_usd,
        pnl_usd=metrics.pnl_usd,
        return_percent=metrics.return_percent,
        note=note,
    )


def with_no_bounds(metrics: Metrics, unbounded: Metrics, removed: list[str]) -> Metrics:
    """`metrics` with the comparison against the same strategy run without its bounds."""
    note = f"without {', '.join(removed)}; {unbounded.fills} fills, {unbounded.skips} skips"
    return replace(metrics, no_bounds=benchmark_of("same strategy, no bounds", unbounded, note))


def bound_params(plugin: type[Any], params: Any) -> list[str]:
    """The strategy's bound parameters that are set: what the "no bounds" run removes.

    A plugin may name them (`bound_params = ("min_rate", "max_rate")` on its class);
    otherwise every `min_…rate` / `max_…rate` parameter counts (the DCA rate bounds).
    """
    names = getattr(plugin, "bound_params", None)
    dumped = params.model_dump() if hasattr(params, "model_dump") else dict(params)
    candidates = names if names is not None else [n for n in dumped if _BOUND_RE.match(n)]
    return [n for n in candidates if dumped.get(n) is not None]


def _price_at(prices: PricePoints, moment: datetime) -> Decimal:
    """The price in force at `moment`, or the first one when the series starts later."""
    price = prices.at(moment)
    return price if price is not None else prices.first


def _last_fill_price(fills: list[BacktestFill], asset: str | None) -> Decimal | None:
    for f in reversed(fills):
        if f.buy_token == asset:
            return f.buy_usd
        if f.sell_token == asset:
            return f.sell_usd
    return None


def _wallet_value(
    balances: dict[str, Decimal],
    locked: dict[str, Decimal],
    prices: dict[str, PricePoints],
    *,
    at_end: bool,
) -> Decimal | None:
    """USD value of the priced tokens among `balances` + `locked`; None if none is priced."""
    tokens = [t for t in {**balances, **locked} if t in prices]
    if not tokens:
        return None
    return sum(
        (
            (balances.get(t, ZERO) + locked.get(t, ZERO))
            * (prices[t].last if at_end else prices[t].first)
            for t in tokens
        ),
        ZERO,
    )
