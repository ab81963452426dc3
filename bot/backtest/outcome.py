"""The market at the end of a run → `BacktestResult` (the contract the report reads).

Amounts leave base units here, exactly (`Decimal`, by the token's decimals). A fill's
`fee` is everything the trade paid in the sold token: the keeper fee and the platform
fee (both moved as such in the ledger) and the pool's fee — `fee_bps` of what reached
the pool, rounded down to a base unit (the pool keeps it in its reserves, so it is not a
transfer of its own). USD prices of a fill are the oracle's at the fill's time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any, Final

import numpy as np

from bot.aptos.tokens import Token
from bot.backtest.broker import CoreBroker
from bot.backtest.context import human
from bot.backtest.feed import TokenSeries, to_us
from bot.backtest.result import (
    BacktestFill,
    BacktestOrder,
    BacktestResult,
    PricePoints,
    TokenInfo,
)
from bot.paper.core.market import PaperMarket
from bot.paper.core.orders import OrderState, TxDetailRecord

__all__ = ["Tally", "build_result"]

_BPS: Final = 10_000
_FINAL: Final = frozenset({"filled", "cancelled", "expired", "refunded"})
_SKIPS: Final = frozenset({"attempted", "failed"})


@dataclass
class Tally:
    """What the runner counted on the way."""

    ticks: int = 0
    events: int = 0
    actions: int = 0
    refused: int = 0
    errors: list[str] | None = None


def _fee(consumed: int, keeper: int, platform_bps: int, pool_bps: int) -> int:
    """Keeper + platform + pool fee of an execution that consumed `consumed` units."""
    swapped = consumed - keeper
    platform = swapped * platform_bps // _BPS
    return keeper + platform + (swapped - platform) * pool_bps // _BPS


class _Prices:
    """USD prices of tokens at fill times, from the run's series, looked up in bulk."""

    def __init__(self, series: Mapping[str, TokenSeries]) -> None:
        self.series = series
        self.wanted: dict[str, list[datetime]] = {}
        self.found: dict[tuple[str, datetime], Decimal] = {}

    def want(self, token: Token, at: datetime) -> None:
        """Note that the price of `token` at `at` will be asked for."""
        self.wanted.setdefault(token.address, []).append(at)

    def resolve(self) -> None:
        """Look every wanted price up: one vectorised search per token."""
        for key, moments in self.wanted.items():
            series = self.series[key]
            unique = sorted(set(moments))
            stamps = np.array([to_us(m) for m in unique], dtype=np.int64)
            indices = np.searchsorted(series.times_us, stamps, "right") - 1
            decimals: dict[int, Decimal] = {}
            for moment, index in zip(unique, indices.tolist(), strict=True):
                price = decimals.get(index)
                if price is None:
                    price = decimals[index] = series.price(index)
                self.found[(key, moment)] = price
        self.wanted.clear()

    def usd(self, token: Token, at: datetime) -> Decimal:
        """A resolved price."""
        return self.found[(token.address, at)]


_Record = tuple[str, OrderState, TxDetailRecord]


def _executions(orders: Iterable[tuple[str, OrderState]], prices: _Prices) -> list[_Record]:
    """The execution records (fills and skips) of the orders; their prices wanted."""
    found = []
    for kind, order in orders:
        for detail in order.details:
            if detail.type == "filled" or detail.type in _SKIPS:
                found.append((kind, order, detail))
                prices.want(order.sell, detail.time)
                prices.want(order.buy, detail.time)
    return found


def _fill(
    record: _Record, market: PaperMarket, prices: _Prices, pool_bps: Mapping[str, int]
) -> BacktestFill:
    kind, order, detail = record
    sell, buy, at = order.sell, order.buy, detail.time
    if detail.type == "filled":
        platform_bps = market.config.fees.platform_fee_bps
        fee = _fee(detail.from_amount, detail.fee_amount, platform_bps, pool_bps[order.order_id])
        sold, bought, paid = (
            human(detail.from_amount, sell),
            human(detail.to_amount, buy),
            human(fee, sell),
        )
    else:
        sold = bought = paid = Decimal(0)
    return BacktestFill(
        time=at,
        kind=kind,
        order_id=order.order_id,
        sell_token=sell.address,
        buy_token=buy.address,
        sold=sold,
        bought=bought,
        fee=paid,
        sell_usd=prices.usd(sell, at),
        buy_usd=prices.usd(buy, at),
        skipped=detail.type != "filled",
    )


def _order_record(kind: str, order: OrderState) -> BacktestOrder:
    ended = order.details[-1].time if order.status in _FINAL and order.details else None
    return BacktestOrder(
        kind=kind,
        order_id=order.order_id,
        created_at=order.created_at,
        sell_token=order.sell.address,
        buy_token=order.buy.address,
        amount=human(order.funded, order.sell),
        status=order.status,
        ended_at=ended,
        refunded=human(order.withdrawn, order.sell),
    )


def _points(series: TokenSeries, start: datetime, end: datetime) -> PricePoints:
    first = series.at(start)
    if first is None:
        first = series.price(0)
    last = series.at(end)
    assert last is not None  # a series with a point after start has one at end
    mean = series.mean(start, end)
    return PricePoints(
        token=series.token,
        at=series.at,
        sample=partial(series.sample, start, end),
        mean=first if mean is None else mean,
        first=first,
        last=last,
    )


def build_result(
    *,
    spec: Any,
    market: PaperMarket,
    broker: CoreBroker,
    tokens: Mapping[str, Token],
    series: Mapping[str, TokenSeries],
    funding: Mapping[str, tuple[Token, int]],
    tally: Tally,
    credit: str | None,
    wall_seconds: float,
) -> BacktestResult:
    """The result of a finished run (`spec` is the run's `BacktestSpec`)."""
    orders: list[tuple[str, OrderState]] = [
        (kind, (market.dca if kind == "dca" else market.limit).get(order_id))
        for kind, order_id in broker.orders
    ]
    prices = _Prices(series)
    records = _executions(orders, prices)
    for swap in broker.swaps:
        prices.want(swap.sell, swap.time)
        prices.want(swap.buy, swap.time)
    prices.resolve()
    order_bps = {o.order_id: market.pools.settings_for(o.sell, o.buy).fee_bps for _, o in orders}
    fills = [_fill(record, market, prices, order_bps) for record in records]
    for swap in broker.swaps:
        pool_bps = market.pools.settings_for(swap.sell, swap.buy).fee_bps
        swapped = swap.sold - swap.fee
        fills.append(
            BacktestFill(
                time=swap.time,
                kind="swap",
                order_id=f"swap:{swap.key}",
                sell_token=swap.sell.address,
                buy_token=swap.buy.address,
                sold=human(swap.sold, swap.sell),
                bought=human(swap.bought, swap.buy),
                fee=human(swap.fee + swapped * pool_bps // _BPS, swap.sell),
                sell_usd=prices.usd(swap.sell, swap.time),
                buy_usd=prices.usd(swap.buy, swap.time),
            )
        )
    fills.sort(key=lambda f: f.time)  # stable: an order's records stay in their order
    touched = _touched(tokens, orders, broker)
    for token, _units in funding.values():
        touched.setdefault(token.address, token)  # what the wallet started with
    wallet = broker.wallet
    locked: dict[str, Decimal] = {}
    for _kind, order in orders:
        if order.status not in _FINAL and order.balance:
            key = order.sell.address
            locked[key] = locked.get(key, Decimal(0)) + human(order.balance, order.sell)
    entry = spec.strategy
    return BacktestResult(
        strategy=entry.name,
        plugin=entry.plugin,
        params=dict(entry.params),
        start=spec.start,
        end=spec.end,
        tokens={
            key: TokenInfo(key, token.symbol, token.decimals) for key, token in touched.items()
        },
        fills=fills,
        orders=[_order_record(kind, order) for kind, order in orders],
        start_balances={key: human(units, token) for key, (token, units) in funding.items()},
        end_balances={
            key: human(market.ledger.balance(wallet, key), token) for key, token in touched.items()
        },
        locked_at_end=locked,
        prices={
            key: _points(series[key], spec.start, spec.end) for key in touched if key in series
        },
        ticks=tally.ticks,
        events=tally.events,
        actions=tally.actions,
        refused=tally.refused,
        errors=list(tally.errors or []),
        price_source=spec.price_source,
        credit=credit,
        wall_seconds=wall_seconds,
    )


def _touched(
    tokens: Mapping[str, Token],
    orders: Iterable[tuple[str, OrderState]],
    broker: CoreBroker,
) -> dict[str, Token]:
    """The named tokens and every token an order or swap traded, by key."""
    found = dict(tokens)
    for _kind, order in orders:
        found.setdefault(order.sell.address, order.sell)
        found.setdefault(order.buy.address, order.buy)
    for swap in broker.swaps:
        found.setdefault(swap.sell.address, swap.sell)
        found.setdefault(swap.buy.address, swap.buy)
    return found
