"""What a backtest produced: the contract between the runner and the report.

Amounts are human `Decimal`s (exact: converted from the paper core's base units by the
token's decimals); times are aware UTC. The runner fills a `BacktestResult`; the metrics,
the report and the sweep read it and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

__all__ = [
    "BacktestFill",
    "BacktestOrder",
    "BacktestResult",
    "CompanionRun",
    "PricePoints",
    "TokenInfo",
]


@dataclass(frozen=True)
class TokenInfo:
    """A token as the report names it."""

    key: str  # canonical coin type or FA address
    symbol: str
    decimals: int


@dataclass(frozen=True)
class BacktestFill:
    """One execution: a DCA slice, a (partial) limit fill, or a swap.

    A DCA slice skipped by the order's rate bounds is a fill with `skipped=True` and zero
    amounts (counted as a skip, never as a trade).
    """

    time: datetime
    kind: str  # "dca" | "limit" | "swap"
    order_id: str
    sell_token: str  # TokenInfo.key
    buy_token: str
    sold: Decimal  # of sell_token, fees included
    bought: Decimal  # of buy_token, received by the wallet
    fee: Decimal  # of sell_token: pool + platform + keeper fees paid
    sell_usd: Decimal  # oracle USD price of sell_token at `time`
    buy_usd: Decimal  # oracle USD price of buy_token at `time`
    skipped: bool = False


@dataclass(frozen=True)
class BacktestOrder:
    """One order the strategy placed, as it ended (or stood at the end)."""

    kind: str  # "dca" | "limit"
    order_id: str
    created_at: datetime
    sell_token: str
    buy_token: str
    amount: Decimal  # of sell_token put in
    status: str  # the paper core's final status: active, filled, expired, cancelled, ...
    ended_at: datetime | None
    refunded: Decimal = Decimal(0)
    rate: Decimal | None = None  # a limit order's rate: buy_token per sell_token (human)
    expire_at: datetime | None = None  # a limit order's expiry time, if it had one


@dataclass(frozen=True)
class PricePoints:
    """A token's price series for charts and valuation: times and exact prices.

    `at(moment)` is the price in force at `moment` (the last point at or before it).
    `sample(n)` gives at most n evenly spaced (time, price) points for pictures.
    """

    token: str
    at: Callable[[datetime], Decimal | None]
    sample: Callable[[int], list[tuple[datetime, Decimal]]]
    mean: Decimal  # mean of the price points within [start, end]
    first: Decimal
    last: Decimal


@dataclass(frozen=True)
class CompanionRun:
    """A configured strategy run beside the backtested one (its `order_sources()`).

    Its orders and fills are in the result's, as part of the wallet's position; the
    counts are its own (the result's `ticks`, `actions`, `refused` are the main one's).
    """

    name: str
    plugin: str
    ticks: int
    actions: int
    refused: int
    errors: int


@dataclass
class BacktestResult:
    """Everything one backtest run saw and did."""

    strategy: str
    plugin: str
    params: dict[str, Any]
    start: datetime
    end: datetime
    tokens: dict[str, TokenInfo]
    fills: list[BacktestFill]
    orders: list[BacktestOrder]
    start_balances: dict[str, Decimal]  # the wallet's, by TokenInfo.key
    end_balances: dict[str, Decimal]  # the wallet's free balances at `end`
    locked_at_end: dict[str, Decimal]  # still held by open orders at `end`
    prices: dict[str, PricePoints]  # by TokenInfo.key, each token the strategy touched
    ticks: int  # strategy ticks run
    events: int  # paper-core events processed
    actions: int  # actions the strategy returned (carried out)
    refused: int  # actions refused (risk, invalid, insufficient balance)
    errors: list[str] = field(default_factory=list)  # strategy failures, one line each
    warnings: list[str] = field(default_factory=list)  # about the prices, one line each
    price_source: str = ""  # the file or "journal"
    credit: str | None = None  # the provider's credit line, when its prices were recorded
    price_origin: str | None = None  # else where they came from: "simulated (…)", "synthetic …"
    wall_seconds: float = 0.0
    companions: list[CompanionRun] = field(default_factory=list)  # run beside it, config order
    owners: dict[str, str] = field(default_factory=dict)
    """A companion's orders and swaps: a fill's `order_id` → the companion that made it
    (the strategy's own are not listed)."""
