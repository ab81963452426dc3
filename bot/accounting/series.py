"""The position through time: what is held, what it is worth and cost, at each moment.

`position_series` walks the trades in time order, as `bot.accounting.account` does (the
same valuation, the same lots), and takes a `PositionPoint` at every counted trade's time
and at every extra moment the caller asks for (the recorded price points, the report's
end): the tokens held from the trades, their value at the prices in force then, their
remaining cost under the cost-basis method, the P&L realised so far in the window, the
running average entry on the position's pair and the pair's market price then.

Prices are step functions (the price in force is the last point at or before a moment)
and holdings change only at trades, so the value between two points is the earlier
point's: the point at a bucket's last event is the value at the bucket's end. The point
at `valued_at` equals the summary's holdings value, remaining cost and P&L exactly (a
test). Pure: plain records in, points out; nothing is rounded but the quotients
(`bot.accounting.exact.ratio`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from bot.accounting.exact import EXACT, ZERO, ratio, total
from bot.accounting.lots import CostBasis, Taken
from bot.accounting.prices import PriceBook
from bot.accounting.records import CostMethod, Pair, Trade
from bot.accounting.report import book_trade
from bot.accounting.valuing import Valuer
from bot.clock import ensure_utc

__all__ = ["PositionPoint", "PositionSeries", "position_series"]


@dataclass(frozen=True)
class PositionPoint:
    """The position at one moment (after the trades at that moment).

    `held`: each token's quantity from the trades' lots (tokens sorted); `value_usd`:
    their value at the prices in force (None when a held token has no price then);
    `cost_usd`: their remaining cost (cost basis); `realised_usd`: realised by the
    window's trades so far; `average_entry`: paid / bought by the window's buys of the
    pair so far (None before the first); `market`: the pair's price then (base's USD
    price / quote's), None without both.
    """

    time: datetime
    held: dict[str, Decimal]
    value_usd: Decimal | None
    cost_usd: Decimal
    realised_usd: Decimal
    average_entry: Decimal | None
    market: Decimal | None

    @property
    def pnl_usd(self) -> Decimal | None:
        """Realised so far + unrealised (value − remaining cost); None without a value."""
        if self.value_usd is None:
            return None
        return EXACT.add(self.realised_usd, EXACT.subtract(self.value_usd, self.cost_usd))


@dataclass(frozen=True)
class PositionSeries:
    """The points in time order, and the position as the window opened.

    `opening`: the holdings of trades before the window's start, at its start (none
    counted yet: realised 0, no entry); None without a start or without such trades.
    """

    pair: Pair | None
    opening: PositionPoint | None
    points: tuple[PositionPoint, ...]


class _Tracked(CostBasis):
    """Lots that also keep each token's total quantity and cost (no walk over the lots)."""

    def __init__(self, method: CostMethod) -> None:
        super().__init__(method)
        self.quantity: dict[str, Decimal] = {}
        self.cost: dict[str, Decimal] = {}

    def add(self, token: str, quantity: Decimal, cost: Decimal) -> None:
        """Record a purchase (see `CostBasis.add`) and its totals."""
        super().add(token, quantity, cost)
        if quantity > 0:
            self.quantity[token] = EXACT.add(self.quantity.get(token, ZERO), quantity)
            self.cost[token] = EXACT.add(self.cost.get(token, ZERO), cost)

    def take(self, token: str, quantity: Decimal) -> Taken:
        """Take a sale from the lots (see `CostBasis.take`) and from the totals."""
        taken = super().take(token, quantity)
        if token in self.quantity:
            left = EXACT.subtract(self.quantity[token], EXACT.subtract(quantity, taken.uncovered))
            if left > 0:
                self.quantity[token] = left
                self.cost[token] = EXACT.subtract(self.cost[token], taken.cost)
            else:  # the lots gave all they had: their whole cost went with it
                del self.quantity[token], self.cost[token]
        return taken


def position_series(
    trades: Iterable[Trade],
    prices: PriceBook,
    *,
    moments: Iterable[datetime] = (),
    method: CostMethod = CostMethod.FIFO,
    start: datetime | None = None,
    end: datetime | None = None,
    pair: Pair | None = None,
    at_trades: bool = True,
) -> PositionSeries:
    """The position at each counted trade's time and at each of `moments` in the window.

    The window is [start, end] as in `account` (trades before `start` build the lots;
    after `end` are ignored); without `start` it opens at the first trade. `moments`
    outside it are dropped; equal moments give one point. `pair`: the position's pair
    (None: no entry or market figures). `at_trades=False`: points at `moments` only
    (every trade still counts; a chart of 100,000 trades needs no point at each).
    """
    start = ensure_utc(start) if start is not None else None
    end = ensure_utc(end) if end is not None else None
    ordered = sorted(trades, key=lambda t: t.time)
    ordered = [t for t in ordered if end is None or t.time <= end]
    earlier = [t for t in ordered if start is not None and t.time < start]
    counted = ordered[len(earlier) :]
    opens = start if start is not None else (counted[0].time if counted else None)
    if opens is None:
        return PositionSeries(pair, None, ())
    basis = _Tracked(method)
    for trade in earlier:
        _apply(trade, prices, basis)
    walk = _Walk(basis, prices, pair)
    opening = walk.point(opens) if earlier else None
    extra = sorted(
        {m for m in map(ensure_utc, moments) if m >= opens and (end is None or m <= end)}
    )
    points: list[PositionPoint] = []
    index = 0
    at = {*extra, *(t.time for t in counted)} if at_trades else set(extra)
    for moment in sorted(at):
        while index < len(counted) and counted[index].time <= moment:
            walk.count(counted[index])
            index += 1
        points.append(walk.point(moment))
    return PositionSeries(pair, opening, tuple(points))


def _apply(trade: Trade, prices: PriceBook, basis: CostBasis) -> Decimal:
    """Move `trade` through the lots, valued as `account` values it; its realised gain."""
    value, fee_usd = Valuer(prices).value(trade)
    return book_trade(trade, value, list(fee_usd), basis, None)


class _Walk:
    """The running state of the window: lots, realised gain, the pair's buys."""

    def __init__(self, basis: _Tracked, prices: PriceBook, pair: Pair | None) -> None:
        self.basis = basis
        self.prices = prices
        self.pair = pair
        self.realised = ZERO
        self.paid = ZERO
        self.bought = ZERO

    def count(self, trade: Trade) -> None:
        """Apply a counted trade."""
        self.realised = EXACT.add(self.realised, _apply(trade, self.prices, self.basis))
        pair = self.pair
        if pair is not None and (trade.sold_token, trade.bought_token) == (pair.quote, pair.base):
            self.paid = EXACT.add(self.paid, trade.sold)
            self.bought = EXACT.add(self.bought, trade.bought)

    def point(self, moment: datetime) -> PositionPoint:
        """The position now, valued at the prices in force at `moment`."""
        held = dict(sorted(self.basis.quantity.items()))
        values = [_worth(token, quantity, moment, self.prices) for token, quantity in held.items()]
        known = [v for v in values if v is not None]
        return PositionPoint(
            time=moment,
            held=held,
            value_usd=total(known) if len(known) == len(values) else None,
            cost_usd=total(self.basis.cost.values()),
            realised_usd=self.realised,
            average_entry=ratio(self.paid, self.bought) if self.bought > 0 else None,
            market=_market(self.pair, moment, self.prices),
        )


def _worth(token: str, quantity: Decimal, moment: datetime, prices: PriceBook) -> Decimal | None:
    price = prices.usd_at(token, moment)
    return None if price is None else EXACT.multiply(quantity, price)


def _market(pair: Pair | None, moment: datetime, prices: PriceBook) -> Decimal | None:
    """The pair's market price at `moment` (quote per base); None without both prices."""
    if pair is None:
        return None
    base, quote = prices.usd_at(pair.base, moment), prices.usd_at(pair.quote, moment)
    if base is None or not quote:
        return None
    return ratio(base, quote)
