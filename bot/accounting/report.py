"""The accounting of a set of trades: totals, buckets, position, realised/unrealised P&L.

Definitions: docs/accounting.md.

`account` takes plain `Trade` records and a `PriceBook`; `by_strategy` and `by_wallet`
split the trades and account for each part on its own (each with its own lots). The
work runs in time order (trades at the same moment keep the order they were given in).

Valuing a trade (`bot.accounting.valuing`): its USD value is what was sold × the sold
token's USD price at the trade's time (the trade's own recorded price, else the book's);
when that is unknown, what was bought × the bought token's price; when both are unknown
the trade is *unvalued* (listed by ref): its quantities count, its lot costs nothing and
its sale realises nothing, so the USD figures are incomplete and say so.

Cost basis: the sale of the sold token takes cost from its lots (`bot.accounting.lots`)
and realises value − cost; the bought token gets a lot costing the trade's value plus
its gas and any fee paid in a third token (fees in the sold or bought token are already
inside the amounts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, tzinfo
from decimal import Decimal, localcontext
from itertools import compress, groupby, repeat
from operator import attrgetter, floordiv, sub

from bot.accounting.buckets import BucketPeriod, bucket_keys, bucket_label, bucket_of, zone_of
from bot.accounting.exact import EXACT, HUNDRED, RATIO, ZERO, ratio, total
from bot.accounting.figures import Figures, Tally
from bot.accounting.lots import CostBasis
from bot.accounting.prices import PriceBook
from bot.accounting.records import CostMethod, GasCost, Pair, Trade
from bot.accounting.valuing import Valuer
from bot.clock import EPOCH, MICROSECOND, ensure_utc

__all__ = [
    "Bucket",
    "Holding",
    "Position",
    "Summary",
    "account",
    "book_trade",
    "by_strategy",
    "by_wallet",
    "main_pair",
    "valued_anew",
]


@dataclass(frozen=True)
class Bucket:
    """One day, week or month of trades (`first`: its first local date)."""

    first: date
    label: str
    figures: Figures


@dataclass(frozen=True)
class Holding:
    """What is still held of one token from the trades: its lots, valued at `at`."""

    token: str
    quantity: Decimal
    cost_usd: Decimal
    price_usd: Decimal | None
    value_usd: Decimal | None
    unrealised_usd: Decimal | None


@dataclass(frozen=True)
class Position:
    """The user's headline on one pair: what was paid, got, and at what average price.

    `bought`/`paid`: base received and quote sold by buys (quote → base), fees included;
    `sold`/`proceeds`: base sold and quote received by sales back. `average_entry`:
    paid / bought (quote per base); `market_mean`: the time-weighted mean market price
    over the same window; `entry_vs_market_percent`: (entry / mean − 1) × 100, negative
    when bought below the mean.
    """

    pair: Pair
    bought: Decimal
    paid: Decimal
    sold: Decimal
    proceeds: Decimal
    average_entry: Decimal | None
    market_mean: Decimal | None
    entry_vs_market_percent: Decimal | None


@dataclass(frozen=True)
class Summary:
    """The accounting of one set of trades over one window."""

    name: str
    method: CostMethod
    start: datetime | None
    end: datetime | None
    valued_at: datetime
    totals: Figures
    buckets: tuple[Bucket, ...]
    position: Position | None
    holdings: tuple[Holding, ...]
    unrealised_usd: Decimal | None
    """Σ holdings' value − cost at `valued_at`; None when a holding has no price then."""
    unvalued: tuple[str, ...]
    """Refs of trades with no USD value (their USD figures are missing)."""
    uncovered: dict[str, Decimal]
    """Of each token, how much was sold beyond the lots (valued at the market: no gain)."""

    @property
    def pnl_usd(self) -> Decimal | None:
        """Realised + unrealised; None when the unrealised part is unknown."""
        if self.unrealised_usd is None:
            return None
        return EXACT.add(self.totals.realised_usd, self.unrealised_usd)


def main_pair(trades: Iterable[Trade]) -> Pair | None:
    """The pair of the direction traded most (ties: the first seen): base = bought token.

    A DCA of USDC into APT: base APT, quote USDC (prices in USDC per APT). A report that
    follows the user's `[display].price_quote` passes its own `Pair` instead.
    """
    counts = Counter(map(_direction_of, trades))
    if not counts:
        return None
    (sold, bought), _ = counts.most_common(1)[0]
    return Pair(base=bought, quote=sold)


def account(
    trades: Iterable[Trade],
    prices: PriceBook,
    *,
    valued_at: datetime,
    method: CostMethod = CostMethod.FIFO,
    start: datetime | None = None,
    end: datetime | None = None,
    period: BucketPeriod | None = None,
    zone: str | tzinfo | None = None,
    pair: Pair | None = None,
    name: str = "",
    gas: Iterable[GasCost] = (),
) -> Summary:
    """Account for `trades` in the window [start, end] (either side open when None).

    Trades before `start` build the lots (the cost basis) but are not counted; trades
    after `end` are ignored. `valued_at` is the moment holdings are valued at (usually
    `end` or now, from the injected clock). `period` groups the counted trades in buckets
    of the time zone `zone` (an IANA name, a tzinfo; None: UTC). `pair` is the position's
    pair as the user sees it (None: `main_pair` of the counted trades). `gas`: gas paid
    outside any trade (order create/cancel transactions): counted in the window's gas and
    taken from its realised P&L.

    Raises:
        ValueError: an unknown time zone name (named in the message), or a naive time.
    """
    tz = zone_of(zone)
    start = ensure_utc(start) if start is not None else None
    end = ensure_utc(end) if end is not None else None
    ordered = sorted(trades, key=_time_of)  # stable: same-time trades keep their order
    counted = ordered  # the trades in the window
    if start is not None or end is not None:
        counted = [
            t
            for t in ordered
            if (start is None or t.time >= start) and (end is None or t.time <= end)
        ]
    basis = CostBasis(method)
    unvalued: list[str] = []
    uncovered: dict[str, Decimal] = {}
    value_of = Valuer(prices).value
    values: list[Decimal | None] = []
    fees: list[tuple[Decimal | None, ...]] = []
    realised: list[Decimal] = []
    # The lots move a trade at a time; the sums come after.
    for trade, micros in zip(ordered, micros_of(ordered), strict=True):
        if end is not None and trade.time > end:
            break
        counts = start is None or trade.time >= start
        value, fee_usd = value_of(trade, micros)
        gain = book_trade(trade, value, fee_usd, basis, uncovered if counts else None)
        if counts:
            values.append(value)
            fees.append(fee_usd)
            realised.append(gain)
            if value is None:
                unvalued.append(trade.ref)
    tally = Tally()
    buckets: dict[date, Tally] = {}
    # Counted once, in its bucket when there are buckets (the totals are their sum). The
    # trades are in time order, so a bucket's trades are one run of them.
    for first, run in _runs(counted, period, tz):
        target = tally if first is None else buckets.setdefault(first, Tally())
        target.add_trades(
            counted[run],
            values_usd=values[run],
            fees_usd=fees[run],
            realised_usd=realised[run],
        )
    for cost in gas:
        if (start is None or cost.time >= start) and (end is None or cost.time <= end):
            if period is None:
                tally.add_gas(cost.gas_octas, cost.gas_usd)
            else:
                bucket = buckets.setdefault(bucket_of(cost.time, period, tz), Tally())
                bucket.add_gas(cost.gas_octas, cost.gas_usd)
    for bucket in buckets.values():
        tally.merge(bucket)
    at = ensure_utc(valued_at)
    lots = basis.held()
    holdings = tuple(
        _holding(token, lot.quantity, lot.cost, prices, at)
        for token, lot in sorted(lots.items())
        if lot.quantity > 0
    )
    chosen = pair if pair is not None else main_pair(counted)
    return Summary(
        name=name,
        method=CostMethod(method),
        start=start,
        end=end,
        valued_at=at,
        totals=tally.freeze(),
        buckets=tuple(
            Bucket(first, bucket_label(first, period), b.freeze())
            for first, b in sorted(buckets.items())
            if period is not None
        ),
        position=_position(chosen, counted, prices, start, end) if chosen else None,
        holdings=holdings,
        unrealised_usd=_unrealised(holdings),
        unvalued=tuple(unvalued),
        uncovered=dict(sorted(uncovered.items())),
    )


def by_strategy(
    trades: Iterable[Trade],
    prices: PriceBook,
    *,
    valued_at: datetime,
    method: CostMethod = CostMethod.FIFO,
    start: datetime | None = None,
    end: datetime | None = None,
    period: BucketPeriod | None = None,
    zone: str | tzinfo | None = None,
    pair_of: Callable[[list[Trade]], Pair | None] | None = None,
    gas: Iterable[GasCost] = (),
) -> dict[str, Summary]:
    """`account` for each strategy's trades on their own (its own lots), by name.

    Each strategy's position is on `pair_of(its trades)` (None, or no `pair_of`: its
    `main_pair`).
    """
    return _accounts(
        _groups(trades, _strategy_of),
        prices,
        pair_of,
        gas=_gas_groups(gas, lambda g: g.strategy),
        valued_at=valued_at,
        method=method,
        start=start,
        end=end,
        period=period,
        zone=zone_of(zone),
    )


def by_wallet(
    trades: Iterable[Trade],
    prices: PriceBook,
    *,
    valued_at: datetime,
    method: CostMethod = CostMethod.FIFO,
    start: datetime | None = None,
    end: datetime | None = None,
    period: BucketPeriod | None = None,
    zone: str | tzinfo | None = None,
    gas: Iterable[GasCost] = (),
) -> dict[str, Summary]:
    """`account` for each wallet's trades (all its strategies' lots together), by address."""
    return _accounts(
        _groups(trades, _wallet_of),
        prices,
        None,
        gas=_gas_groups(gas, lambda g: g.wallet),
        valued_at=valued_at,
        method=method,
        start=start,
        end=end,
        period=period,
        zone=zone_of(zone),
    )


def _accounts(
    groups: dict[str, list[Trade]],
    prices: PriceBook,
    pair_of: Callable[[list[Trade]], Pair | None] | None,
    *,
    gas: dict[str, list[GasCost]],
    valued_at: datetime,
    method: CostMethod,
    start: datetime | None,
    end: datetime | None,
    period: BucketPeriod | None,
    zone: tzinfo,
) -> dict[str, Summary]:
    """`account` of each group on its own lots, by the group's name."""
    return {
        name: account(
            group,
            prices,
            valued_at=valued_at,
            method=method,
            start=start,
            end=end,
            period=period,
            zone=zone,
            pair=pair_of(group) if pair_of is not None else None,
            name=name,
            gas=gas.get(name, ()),
        )
        for name, group in groups.items()
    }


def _gas_groups(gas: Iterable[GasCost], key: Callable[[GasCost], str]) -> dict[str, list[GasCost]]:
    """Gas costs grouped by `key`."""
    groups: dict[str, list[GasCost]] = {}
    for cost in gas:
        groups.setdefault(key(cost), []).append(cost)
    return groups


def micros_of(trades: list[Trade]) -> list[int]:
    """Each trade's time as µs since the epoch (`to_micros`, a column at a time)."""
    return list(map(floordiv, map(sub, map(_time_of, trades), repeat(EPOCH)), repeat(MICROSECOND)))


def _runs(
    trades: list[Trade], period: BucketPeriod | None, zone: tzinfo
) -> Iterator[tuple[date | None, slice]]:
    """The runs of `trades` (in time order) that fall in one bucket: (its first date, run).

    No `period`: one run of all of them, in no bucket (None). A bucket's local dates are
    one stretch of time, so time-ordered trades fill each bucket in one run.
    """
    if period is None:
        yield None, slice(0, len(trades))
        return
    key = bucket_keys(period, zone)
    begun = 0
    for first, run in groupby(map(key, map(_time_of, trades))):
        ended = begun + sum(1 for _ in run)
        yield first, slice(begun, ended)
        begun = ended


def _groups(trades: Iterable[Trade], key: Callable[[Trade], str]) -> dict[str, list[Trade]]:
    """`trades` grouped by `key`, groups sorted by name, trades in their given order."""
    groups: dict[str, list[Trade]] = {}
    for trade in trades:
        groups.setdefault(key(trade), []).append(trade)
    return dict(sorted(groups.items()))


_time_of: Callable[[Trade], datetime] = attrgetter("time")
_direction_of: Callable[[Trade], tuple[str, str]] = attrgetter("sold_token", "bought_token")
_sold_of, _bought_of = attrgetter("sold"), attrgetter("bought")
_strategy_of: Callable[[Trade], str] = attrgetter("strategy")
_wallet_of: Callable[[Trade], str] = attrgetter("wallet")


def book_trade(
    trade: Trade,
    value: Decimal | None,
    fee_usd: Sequence[Decimal | None],
    basis: CostBasis,
    uncovered: dict[str, Decimal] | None,
) -> Decimal:
    """Move the trade through the lots; the realised gain of its sale (USD)."""
    sold_token, sold = trade.sold_token, trade.sold
    taken_cost, beyond = basis.take(sold_token, sold)  # beyond: never negative
    if beyond and uncovered is not None:
        uncovered[sold_token] = _add(uncovered.get(sold_token, ZERO), beyond)
    cost = ZERO
    for fee, usd in zip(trade.fees, fee_usd, strict=True):
        # A fee in a third token, paid on top: a cost.
        if usd is not None and fee.token != sold_token and fee.token != trade.bought_token:
            cost = _add(cost, usd)
    if trade.gas_usd is not None:
        cost = _add(cost, trade.gas_usd)
    if value is None:
        basis.add(trade.bought_token, trade.bought, cost)
        return ZERO
    basis.add(trade.bought_token, trade.bought, _add(value, cost) if cost else value)
    if beyond:  # the uncovered part is sold at its value: no gain
        if beyond == sold:  # all of it (a DCA spending its stablecoin): value − value
            return _subtract(ZERO, taken_cost) if taken_cost else ZERO
        value = _subtract(value, RATIO.divide(EXACT.multiply(value, beyond), sold))
    return _subtract(value, taken_cost)


_add, _subtract, _multiply = EXACT.add, EXACT.subtract, EXACT.multiply  # for every trade


def valued_anew(summary: Summary, prices: PriceBook, at: datetime) -> Summary:
    """`summary` with what it holds valued at `at` instead: as `account` valued at `at` gives.

    Only the holdings' prices, values and unrealised P&L depend on the moment of value;
    a report in parts (`bot.app.report_workers`) accounts first and learns it after.
    """
    at = ensure_utc(at)
    holdings = tuple(
        _holding(h.token, h.quantity, h.cost_usd, prices, at) for h in summary.holdings
    )
    return replace(summary, valued_at=at, holdings=holdings, unrealised_usd=_unrealised(holdings))


def _holding(
    token: str, quantity: Decimal, cost: Decimal, prices: PriceBook, at: datetime
) -> Holding:
    """What is held of `token` (bought for `cost`), valued at its price at `at`."""
    price = prices.usd_at(token, at)
    value = None if price is None else EXACT.multiply(quantity, price)
    return Holding(
        token=token,
        quantity=quantity,
        cost_usd=cost,
        price_usd=price,
        value_usd=value,
        unrealised_usd=None if value is None else EXACT.subtract(value, cost),
    )


def _unrealised(holdings: Sequence[Holding]) -> Decimal | None:
    """Σ the holdings' unrealised P&L; None when one of them has no price."""
    if any(h.unrealised_usd is None for h in holdings):
        return None
    return total(h.unrealised_usd for h in holdings if h.unrealised_usd is not None)


def _position(
    pair: Pair,
    trades: list[Trade],
    prices: PriceBook,
    start: datetime | None,
    end: datetime | None,
) -> Position:
    base, quote = pair.base, pair.quote
    directions = list(map(_direction_of, trades))
    buys = list(compress(trades, map((quote, base).__eq__, directions)))  # quote → base
    sales = list(compress(trades, map((base, quote).__eq__, directions)))  # base → quote
    with localcontext(EXACT):  # exact sums, a column at a time
        bought, paid = sum(map(_bought_of, buys), ZERO), sum(map(_sold_of, buys), ZERO)
        sold, proceeds = sum(map(_sold_of, sales), ZERO), sum(map(_bought_of, sales), ZERO)
    entry = ratio(paid, bought) if bought > 0 else None
    window_start = start if start is not None else (trades[0].time if trades else None)
    window_end = end if end is not None else (trades[-1].time if trades else None)
    mean = (
        prices.mean_in_quote(pair, window_start, window_end)
        if window_start is not None and window_end is not None
        else None
    )
    versus = (
        EXACT.multiply(EXACT.subtract(ratio(entry, mean), Decimal(1)), HUNDRED)
        if entry is not None and mean
        else None
    )
    return Position(
        pair=pair,
        bought=bought,
        paid=paid,
        sold=sold,
        proceeds=proceeds,
        average_entry=entry,
        market_mean=mean,
        entry_vs_market_percent=versus,
    )
