"""The backtest's trades as a user reads them: one row per execution, with units.

Each fill of the result becomes a `TradeRow`: when, which strategy and order, which side
of the strategy's main pair (`buy`: quote → asset, `sell`: asset → quote, `skipped`: a
DCA slice the rate bounds skipped, `trade`: any other pair), what was sold and bought
(amounts exact, with their token symbols), the price and its unit, and the fee.

The price is the execution's own, fees included, in the unit of the user's
`[display].price_quote` convention (`bot.backtest.quoting`) — `USDC per APT` — whichever
way the fill went: a buy's price is what one APT cost in USDC (sold / bought) and a
sell's what one APT brought (bought / sold), the unit `bot orders` shows an order's
limit in. A skipped slice shows the market price at its time (the oracle's USD prices
of the two tokens, divided), since nothing was traded. A fill outside the main pair is
priced the same way, in its own pair's unit.

`trades.csv` carries every row with exact decimal text; the HTML table rounds.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from bot.backtest.metrics import Metrics
from bot.backtest.quoting import PairView, pair_view
from bot.backtest.report import symbol_of
from bot.backtest.result import BacktestFill, BacktestResult
from bot.money import format_decimal
from bot.price_view import PriceConvention

__all__ = ["CSV_COLUMNS", "TradeRow", "trade_rows", "write_trades_csv"]

CSV_COLUMNS = (
    "time",
    "strategy",
    "kind",
    "order_id",
    "side",
    "sold",
    "sold_token",
    "bought",
    "bought_token",
    "price",
    "price_unit",
    "fee",
    "fee_token",
)


@dataclass(frozen=True)
class TradeRow:
    """One execution as shown in the trade table (amounts exact; price may be None)."""

    time: datetime
    strategy: str
    kind: str  # dca | limit | swap
    order_id: str
    side: str  # buy | sell | skipped | trade
    sold: Decimal
    sold_token: str  # symbol
    bought: Decimal
    bought_token: str
    price: Decimal | None
    price_unit: str  # e.g. "USDC per APT"
    fee: Decimal
    fee_token: str


def trade_rows(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> list[TradeRow]:
    """Every fill of `result` (skipped slices included) as a row, in time order.

    `convention`: how prices are shown (`bot.backtest.quoting.report_convention`); None,
    the default one.
    """
    quote, asset = metrics.quote, metrics.asset
    views: dict[frozenset[str], PairView] = {}
    rows = []
    for fill in sorted(result.fills, key=lambda f: f.time):  # stable: same-time fills in order
        direction = (fill.sell_token, fill.buy_token)
        if direction == (quote, asset):
            side = "buy"
        elif direction == (asset, quote):
            side = "sell"
        else:
            side = "trade"
        if fill.skipped:
            side = "skipped"
        pair = frozenset(direction)
        view = views.get(pair)
        if view is None:
            view = views[pair] = pair_view(result, fill.sell_token, fill.buy_token, convention)
        rows.append(
            TradeRow(
                time=fill.time,
                strategy=result.owners.get(fill.order_id, result.strategy),
                kind=fill.kind,
                order_id=fill.order_id,
                side=side,
                sold=fill.sold,
                sold_token=symbol_of(result, fill.sell_token),
                bought=fill.bought,
                bought_token=symbol_of(result, fill.buy_token),
                price=_price(fill, view),
                price_unit=view.unit,
                fee=fill.fee,
                fee_token=symbol_of(result, fill.sell_token),
            )
        )
    return rows


def _price(fill: BacktestFill, view: PairView) -> Decimal | None:
    """The fill's price in `view`'s unit."""
    if fill.skipped or not fill.sold or not fill.bought:
        # Nothing traded: the market's price at that time, from the oracle's USD prices.
        return view.market(fill.sell_token, fill.sell_usd, fill.buy_usd)
    return view.exchange(fill.sell_token, fill.sold, fill.bought)


def write_trades_csv(path: Path, rows: Sequence[TradeRow]) -> Path:
    """Write the rows as CSV (exact decimal text, times ISO-8601 UTC with `Z`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow(
                [
                    row.time.isoformat().replace("+00:00", "Z"),
                    row.strategy,
                    row.kind,
                    row.order_id,
                    row.side,
                    format_decimal(row.sold),
                    row.sold_token,
                    format_decimal(row.bought),
                    row.bought_token,
                    "" if row.price is None else format_decimal(row.price),
                    row.price_unit,
                    format_decimal(row.fee),
                    row.fee_token,
                ]
            )
    return path
