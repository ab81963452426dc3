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
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from functools import partial
from operator import attrgetter
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bot.aptos.tokens import Token
from bot.backtest.broker import CoreBroker
from bot.backtest.context import HumanAmounts, human
from bot.backtest.feed import TokenSeries
from bot.backtest.result import (
    BacktestFill,
    BacktestOrder,
    BacktestResult,
    PricePoints,
    TokenInfo,
)
from bot.clock import to_micros
from bot.domain import FINAL_STATUSES
from bot.paper.core.limit import LimitOrder
from bot.paper.core.market import PaperMarket
from bot.paper.core.orders import OrderState

__all__ = ["Tally", "build_result"]

_BPS: Final = 10_000
_SKIPS: Final = frozenset({"attempted", "failed"})
_WIDE: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)  # exact scaleb
_TIME: Final = attrgetter("time")  # the sort key of thousands of fills: no Python call each


@dataclass
class Tally:
    """What the runner counted on the way."""

    ticks: int = 0
    events: int = 0
    actions: int = 0
    refused: int = 0
    errors: list[str] | None = None


def _stamps(moments: list[datetime]) -> npt.NDArray[np.int64]:
    """Times as integer microseconds since the epoch."""
    return np.fromiter((to_micros(m) for m in moments), dtype=np.int64, count=len(moments))


def _prices_at(series: TokenSeries, stamps: npt.NDArray[np.int64]) -> list[Decimal]:
    """The prices of a series in force at each of `stamps` (one vectorised search).

    Consecutive stamps on one price point share its `Decimal`.
    """
    if not stamps.size:
        return []
    found = np.searchsorted(series.times_us, stamps, "right") - 1
    if len(series) == 1 and int(found.min()) == 0:  # one price throughout (a pegged coin)
        return [series.price(0)] * int(stamps.size)
    # The coefficients picked out at once (`TokenSeries.price`, index by index, otherwise).
    coefs, exponent = series.coefs[found].tolist(), series.exponent
    prices: list[Decimal] = []
    last_index, last_price = -1, Decimal(0)  # before the first point: 0, as ever
    for index, coef in zip(found.tolist(), coefs, strict=True):
        if index != last_index:
            last_index, last_price = index, Decimal(coef).scaleb(exponent, _WIDE)
        prices.append(last_price)
    return prices


def _order_fills(
    kind: str,
    order: OrderState,
    series: Mapping[str, TokenSeries],
    fee_bps: tuple[int, int],
) -> list[BacktestFill]:
    """The fills (and skips) of one order; `fee_bps`: (platform, pool) fees of its pair."""
    records = [d for d in order.details if d.type == "filled" or d.type in _SKIPS]
    sell, buy = order.sell, order.buy
    sell_key, buy_key, order_id = sell.address, buy.address, order.order_id
    stamps = _stamps([d.time for d in records])
    sell_usd, buy_usd = _prices_at(series[sell_key], stamps), _prices_at(series[buy_key], stamps)
    sold_human, buy_places = HumanAmounts(sell), -buy.decimals
    shared = sold_human.known.get  # `sold_human`, inlined when it knows the amount
    platform_bps, pool_bps = fee_bps
    zero = Decimal(0)
    fills = []
    for detail, sell_price, buy_price in zip(records, sell_usd, buy_usd, strict=True):
        at = detail.time
        filled = detail.type == "filled"
        if filled:
            consumed = detail.from_amount
            # Keeper + platform + pool fee of what the execution consumed.
            swapped = consumed - detail.fee_amount
            platform = swapped * platform_bps // _BPS
            fee = detail.fee_amount + platform + (swapped - platform) * pool_bps // _BPS
            sold = shared(consumed) or sold_human(consumed)
            bought = Decimal(detail.to_amount).scaleb(buy_places, _WIDE)
            paid = shared(fee) or sold_human(fee)
        else:
            sold = bought = paid = zero
        fills.append(  # by position (one per record; keywords cost more), in field order
            BacktestFill(
                at,  # time
                kind,
                order_id,
                sell_key,  # sell_token
                buy_key,  # buy_token
                sold,
                bought,
                paid,  # fee
                sell_price,  # sell_usd
                buy_price,  # buy_usd
                not filled,  # skipped
            )
        )
    return fills


def _order_record(kind: str, order: OrderState) -> BacktestOrder:
    ended = order.details[-1].time if order.status in FINAL_STATUSES and order.details else None
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
        rate=order.rate if isinstance(order, LimitOrder) else None,
        expire_at=order.expire_at if isinstance(order, LimitOrder) else None,
    )


def _points(series: TokenSeries, start: datetime, end: datetime) -> PricePoints:
    first = series.at(start)
    if first is None:
        first = series.price(0)
    last = series.at(end)
    if last is None:  # a series with a point at start has one at end: never here
        raise ValueError(f"{series.token}: no price at {end.isoformat()}")
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
    warnings: list[str] | None = None,
) -> BacktestResult:
    """The result of a finished run.

    `spec` is the run's `BacktestSpec`; `warnings`: about its prices (one line each, see
    `bot.backtest.coverage`).
    """
    orders: list[tuple[str, OrderState]] = [
        (kind, (market.dca if kind == "dca" else market.limit).get(order_id))
        for kind, order_id in broker.orders
    ]
    platform_bps = market.config.fees.platform_fee_bps
    fills = [
        fill
        for kind, order in orders
        for fill in _order_fills(
            kind,
            order,
            series,
            (platform_bps, market.pools.settings_for(order.sell, order.buy).fee_bps),
        )
    ]
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
                sell_usd=_prices_at(series[swap.sell.address], _stamps([swap.time]))[0],
                buy_usd=_prices_at(series[swap.buy.address], _stamps([swap.time]))[0],
            )
        )
    fills.sort(key=_TIME)  # stable: an order's records stay in their order
    touched = _touched(tokens, orders, broker)
    for token, _units in funding.values():
        touched.setdefault(token.address, token)  # what the wallet started with
    wallet = broker.wallet
    locked: dict[str, Decimal] = {}
    for _kind, order in orders:
        if order.status not in FINAL_STATUSES and order.balance:
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
        warnings=list(warnings or []),
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
