"""The accounting of a set of trades: totals, buckets, position, realised/unrealised P&L.

Definitions: docs/accounting.md.

`account` takes plain `Trade` records and a `PriceBook`; `by_strategy` and `by_wallet`
split the trades and account for each part on its own (each with its own lots). The
work runs in time order (trades at the same moment keep the order they were given in).

Valuing a trade: its USD value is what was sold × the sold token's USD price at the
trade's time (the trade's own recorded price, else the book's); when that is unknown,
what was bought × the bought token's price; when both are unknown the trade is
*unvalued* (listed by ref): its quantities count, its lot costs nothing and its sale
realises nothing, so the USD figures are incomplete and say so.

Cost basis: the sale of the sold token takes cost from its lots (`bot.accounting.lots`)
and realises value − cost; the bought token gets a lot costing the trade's value plus
its gas and any fee paid in a third token (fees in the sold or bought token are already
inside the amounts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from decimal import Decimal

from bot.accounting.buckets import BucketPeriod, bucket_label, bucket_of, zone_of
from bot.accounting.exact import EXACT, HUNDRED, ZERO, ratio, total
from bot.accounting.figures import Figures, Tally
from bot.accounting.lots import CostBasis
from bot.accounting.prices import PriceBook
from bot.accounting.records import CostMethod, Pair, Trade
from bot.clock import ensure_utc

__all__ = [
    "Bucket",
    "Holding",
    "Position",
    "Summary",
    "account",
    "by_strategy",
    "by_wallet",
    "main_pair",
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
    counts = Counter((t.sold_token, t.bought_token) for t in trades)
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
) -> Summary:
    """Account for `trades` in the window [start, end] (either side open when None).

    Trades before `start` build the lots (the cost basis) but are not counted; trades
    after `end` are ignored. `valued_at` is the moment holdings are valued at (usually
    `end` or now, from the injected clock). `period` groups the counted trades in buckets
    of the time zone `zone` (an IANA name, a tzinfo; None: UTC). `pair` is the position's
    pair as the user sees it (None: `main_pair` of the counted trades).

    Raises:
        ValueError: an unknown time zone name (named in the message), or a naive time.
    """
    tz = zone_of(zone)
    start = ensure_utc(start) if start is not None else None
    end = ensure_utc(end) if end is not None else None
    ordered = sorted(trades, key=lambda t: t.time)
    counted = [
        t for t in ordered if (start is None or t.time >= start) and (end is None or t.time <= end)
    ]
    basis = CostBasis(method)
    tally = Tally()
    buckets: dict[date, Tally] = {}
    unvalued: list[str] = []
    uncovered: dict[str, Decimal] = {}
    for trade in ordered:
        if end is not None and trade.time > end:
            break
        counts = start is None or trade.time >= start
        value = _value(trade, prices)
        fee_usd = [_fee_usd(trade, i, prices) for i in range(len(trade.fees))]
        realised = _book(trade, value, fee_usd, basis, uncovered if counts else None)
        if not counts:
            continue
        if value is None:
            unvalued.append(trade.ref)
        tally.add(trade, value_usd=value, fee_usd=fee_usd, realised_usd=realised)
        if period is not None:
            bucket = buckets.setdefault(bucket_of(trade.time, period, tz), Tally())
            bucket.add(trade, value_usd=value, fee_usd=fee_usd, realised_usd=realised)
    holdings = _holdings(basis, prices, ensure_utc(valued_at))
    unrealised = (
        None
        if any(h.unrealised_usd is None for h in holdings)
        else total(h.unrealised_usd for h in holdings if h.unrealised_usd is not None)
    )
    chosen = pair if pair is not None else main_pair(counted)
    return Summary(
        name=name,
        method=CostMethod(method),
        start=start,
        end=end,
        valued_at=ensure_utc(valued_at),
        totals=tally.freeze(),
        buckets=tuple(
            Bucket(first, bucket_label(first, period), b.freeze())
            for first, b in sorted(buckets.items())
            if period is not None
        ),
        position=_position(chosen, counted, prices, start, end) if chosen else None,
        holdings=holdings,
        unrealised_usd=unrealised,
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
) -> dict[str, Summary]:
    """`account` for each strategy's trades on their own (its own lots), by name.

    Each strategy's position is on `pair_of(its trades)` (None, or no `pair_of`: its
    `main_pair`).
    """
    return _accounts(
        _groups(trades, lambda t: t.strategy),
        prices,
        pair_of,
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
) -> dict[str, Summary]:
    """`account` for each wallet's trades (all its strategies' lots together), by address."""
    return _accounts(
        _groups(trades, lambda t: t.wallet),
        prices,
        None,
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
        )
        for name, group in groups.items()
    }


def _groups(trades: Iterable[Trade], key: Callable[[Trade], str]) -> dict[str, list[Trade]]:
    """`trades` grouped by `key`, groups sorted by name, trades in their given order."""
    groups: dict[str, list[Trade]] = {}
    for trade in trades:
        groups.setdefault(key(trade), []).append(trade)
    return dict(sorted(groups.items()))


def _value(trade: Trade, prices: PriceBook) -> Decimal | None:
    """The trade's USD value: sold × its price, else bought × its price, else None."""
    sold_price = trade.sold_usd_price
    if sold_price is None:
        sold_price = prices.usd_at(trade.sold_token, trade.time)
    if sold_price is not None and (sold_price > 0 or trade.sold == 0):
        return EXACT.multiply(trade.sold, sold_price)
    bought_price = trade.bought_usd_price
    if bought_price is None:
        bought_price = prices.usd_at(trade.bought_token, trade.time)
    if bought_price is not None:
        return EXACT.multiply(trade.bought, bought_price)
    return None


def _fee_usd(trade: Trade, index: int, prices: PriceBook) -> Decimal | None:
    """The USD value of the trade's fee `index`: its own, else its amount × the price then."""
    fee = trade.fees[index]
    if fee.usd is not None:
        return fee.usd
    if fee.token == trade.sold_token and trade.sold_usd_price is not None:
        price: Decimal | None = trade.sold_usd_price
    elif fee.token == trade.bought_token and trade.bought_usd_price is not None:
        price = trade.bought_usd_price
    else:
        price = prices.usd_at(fee.token, trade.time)
    return None if price is None else EXACT.multiply(fee.amount, price)


def _book(
    trade: Trade,
    value: Decimal | None,
    fee_usd: list[Decimal | None],
    basis: CostBasis,
    uncovered: dict[str, Decimal] | None,
) -> Decimal:
    """Move the trade through the lots; the realised gain of its sale (USD)."""
    taken = basis.take(trade.sold_token, trade.sold)
    if taken.uncovered > 0 and uncovered is not None:
        uncovered[trade.sold_token] = EXACT.add(
            uncovered.get(trade.sold_token, ZERO), taken.uncovered
        )
    extra = total(
        usd
        for fee, usd in zip(trade.fees, fee_usd, strict=True)
        if usd is not None and fee.token not in (trade.sold_token, trade.bought_token)
    )
    cost = EXACT.add(extra, trade.gas_usd or ZERO)
    if value is None:
        basis.add(trade.bought_token, trade.bought, cost)
        return ZERO
    basis.add(trade.bought_token, trade.bought, EXACT.add(value, cost))
    covered_value = value
    if taken.uncovered > 0:  # the uncovered part is sold at its value: no gain
        covered_value = EXACT.subtract(
            value, ratio(EXACT.multiply(value, taken.uncovered), trade.sold)
        )
    return EXACT.subtract(covered_value, taken.cost)


def _holdings(basis: CostBasis, prices: PriceBook, at: datetime) -> tuple[Holding, ...]:
    held: list[Holding] = []
    for token, lot in sorted(basis.held().items()):
        if lot.quantity <= 0:
            continue
        price = prices.usd_at(token, at)
        value = None if price is None else EXACT.multiply(lot.quantity, price)
        held.append(
            Holding(
                token=token,
                quantity=lot.quantity,
                cost_usd=lot.cost,
                price_usd=price,
                value_usd=value,
                unrealised_usd=None if value is None else EXACT.subtract(value, lot.cost),
            )
        )
    return tuple(held)


def _position(
    pair: Pair,
    trades: list[Trade],
    prices: PriceBook,
    start: datetime | None,
    end: datetime | None,
) -> Position:
    buys = [t for t in trades if (t.sold_token, t.bought_token) == (pair.quote, pair.base)]
    sells = [t for t in trades if (t.sold_token, t.bought_token) == (pair.base, pair.quote)]
    bought = total(t.bought for t in buys)
    paid = total(t.sold for t in buys)
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
        sold=total(t.sold for t in sells),
        proceeds=total(t.bought for t in sells),
        average_entry=entry,
        market_mean=mean,
        entry_vs_market_percent=versus,
    )
