"""Hand-made backtest results (fills, orders, price points) for the metrics and report tests.

USDC → APT over whole hours from `T0`: `buy`/`sell` make fills, `make_result` a result,
`four_slice_dca` the hand-computed four-slice DCA (75 APT for 400 USDC), `ladder_result`
a ladder's orders in every state with a sell back and a skipped slice.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from bot.backtest.result import (
    BacktestFill,
    BacktestOrder,
    BacktestResult,
    PricePoints,
    TokenInfo,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
USDC = "0xusdc"
APT = "0x1::aptos_coin::AptosCoin"
D = Decimal


def points(token: str, prices: Sequence[str | Decimal], step: timedelta = HOUR) -> PricePoints:
    """A price series starting at T0, one point per `step`."""
    series = [(T0 + i * step, D(p)) for i, p in enumerate(prices)]
    times = [t for t, _ in series]

    def at(moment: datetime) -> Decimal | None:
        index = bisect_right(times, moment) - 1
        return series[index][1] if index >= 0 else None

    def sample(n: int) -> list[tuple[datetime, Decimal]]:
        stride = max(1, -(-len(series) // n))
        return series[::stride]

    return PricePoints(
        token=token,
        at=at,
        sample=sample,
        mean=sum((p for _, p in series), D(0)) / len(series),
        first=series[0][1],
        last=series[-1][1],
    )


def buy(hour: int, sold: str, bought: str, price: str, fee: str = "0", **kw: Any) -> BacktestFill:
    """A USDC → APT fill at `hour`."""
    return BacktestFill(
        time=T0 + hour * HOUR,
        kind=kw.pop("kind", "dca"),
        order_id=kw.pop("order_id", "dca-1"),
        sell_token=USDC,
        buy_token=APT,
        sold=D(sold),
        bought=D(bought),
        fee=D(fee),
        sell_usd=D(1),
        buy_usd=D(price),
        **kw,
    )


def sell(hour: int, sold: str, bought: str, price: str, fee: str = "0") -> BacktestFill:
    """An APT → USDC fill at `hour` (a take-profit)."""
    return BacktestFill(
        time=T0 + hour * HOUR,
        kind="limit",
        order_id="tp-1",
        sell_token=APT,
        buy_token=USDC,
        sold=D(sold),
        bought=D(bought),
        fee=D(fee),
        sell_usd=D(price),
        buy_usd=D(1),
    )


def make_result(
    fills: list[BacktestFill],
    apt_prices: Sequence[str],
    orders: list[BacktestOrder] | None = None,
    **kw: Any,
) -> BacktestResult:
    """A result of a USDC → APT strategy over the hours of `apt_prices`."""
    hours = len(apt_prices) - 1
    return BacktestResult(
        strategy=kw.pop("strategy", "dca"),
        plugin="recurring_dca",
        params=kw.pop("params", {"from_token": "USDC", "to_token": "APT"}),
        start=T0,
        end=T0 + hours * HOUR,
        tokens={
            USDC: TokenInfo(USDC, "USDC", 6),
            APT: TokenInfo(APT, "APT", 8),
        },
        fills=fills,
        orders=orders if orders is not None else [],
        start_balances={USDC: D(1000)},
        end_balances=kw.pop("end_balances", {USDC: D(600), APT: D(75)}),
        locked_at_end=kw.pop("locked_at_end", {}),
        prices={
            USDC: points(USDC, ["1"] * len(apt_prices)),
            APT: points(APT, apt_prices),
        },
        ticks=kw.pop("ticks", 4),
        events=kw.pop("events", 4),
        actions=kw.pop("actions", 1),
        refused=0,
        **kw,
    )


def four_slice_dca() -> BacktestResult:
    """100 USDC a slice at APT 5, 4, 5, 10, no fees: 20 + 25 + 20 + 10 = 75 APT."""
    order = BacktestOrder(
        kind="dca",
        order_id="dca-1",
        created_at=T0,
        sell_token=USDC,
        buy_token=APT,
        amount=D(400),
        status="filled",
        ended_at=T0 + 3 * HOUR,
    )
    fills = [
        buy(0, "100", "20", "5"),
        buy(1, "100", "25", "4"),
        buy(2, "100", "20", "5"),
        buy(3, "100", "10", "10"),
    ]
    return make_result(fills, ["5", "4", "5", "10"], [order])


def ladder_result() -> BacktestResult:
    """Four limit rungs (filled, cancelled, expired, open), a sell back and a skipped slice."""
    orders = [
        BacktestOrder("limit", "l-1", T0, USDC, APT, D(100), "filled", T0 + HOUR, rate=D("0.25")),
        BacktestOrder(
            "limit", "l-2", T0, USDC, APT, D(100), "cancelled", T0 + 2 * HOUR, D(100), D("0.3125")
        ),
        BacktestOrder(
            "limit", "l-3", T0, USDC, APT, D(100), "expired", T0 + 3 * HOUR, D(100), D("0.4"),
            expire_at=T0 + 3 * HOUR,
        ),
        BacktestOrder("limit", "l-4", T0 + HOUR, USDC, APT, D(100), "active", None, rate=D("0.5")),
    ]  # fmt: skip
    fills = [
        buy(1, "100", "25", "4", fee="0.3", kind="limit", order_id="l-1"),
        sell(2, "10", "50", "5", fee="0.01"),
        buy(3, "0", "0", "10", skipped=True, order_id="dca-9"),
    ]
    return make_result(fills, ["5", "4", "5", "10"], orders, strategy="ladder")
