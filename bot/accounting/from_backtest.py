"""A backtest's result as the accounting's records: its fills as `Trade`s, its prices as a book.

The one module of `bot.accounting` that knows the backtest's result
(`bot.backtest.result`, plain dataclasses): `bot backtest --accounting` accounts for a
run with the same functions and definitions as `bot report` does for the journal, so a
live strategy and its backtest on the same window are compared in the same terms.

- a fill (`BacktestFill`) that traded is one trade: `sold` of its `sell_token` (fees
  included), `bought` of its `buy_token`; its `fee` (in the sold token: pool, platform
  and keeper fees together, as the paper core charges them) is one fee, `keeper` for a
  DCA slice or a limit fill and `provider` for a swap; its oracle USD prices
  (`sell_usd`, `buy_usd`) are the trade's own prices, so its USD value is exact. A
  skipped DCA slice moves nothing and is no trade;
- the strategy is the fill's owner (a companion's name, `BacktestResult.owners`), else
  the backtested strategy; the wallet is the run's one paper wallet (`BACKTEST_WALLET`);
- the price book holds each token's price in force at the run's start, `points` evenly
  spaced points of its series (`PricePoints.sample`) and its price at the end: the
  holdings at the end are valued at the exact last price; the time-weighted market mean
  is over those points (the backtest's own `mean` is the plain mean of every point, so
  the two may differ slightly).
"""

from __future__ import annotations

from typing import Final

from bot.accounting.prices import PriceBook, PricePoint
from bot.accounting.records import Fee, FeeKind, Trade
from bot.backtest.result import BacktestFill, BacktestResult

__all__ = ["BACKTEST_WALLET", "PRICE_POINTS", "backtest_prices", "backtest_trades"]

BACKTEST_WALLET: Final = "backtest"
"""The wallet name of a backtest's trades (one paper wallet per run)."""
PRICE_POINTS: Final = 4000
"""Points per token the price book takes from a run's series (besides start and end)."""


def backtest_trades(result: BacktestResult) -> list[Trade]:
    """Every fill of `result` that traded, as a trade (in the result's order)."""
    return [_trade(result, fill) for fill in result.fills if _traded(fill)]


def _traded(fill: BacktestFill) -> bool:
    return not fill.skipped and fill.sold > 0 and fill.bought > 0


def _trade(result: BacktestResult, fill: BacktestFill) -> Trade:
    kind = FeeKind.PROVIDER if fill.kind == "swap" else FeeKind.KEEPER
    return Trade(
        time=fill.time,
        strategy=result.owners.get(fill.order_id, result.strategy),
        wallet=BACKTEST_WALLET,
        ref=f"{fill.kind}:{fill.order_id}",
        sold_token=fill.sell_token,
        sold=fill.sold,
        bought_token=fill.buy_token,
        bought=fill.bought,
        fees=(Fee(kind, fill.sell_token, fill.fee),) if fill.fee else (),
        sold_usd_price=fill.sell_usd,
        bought_usd_price=fill.buy_usd,
        label=fill.kind,
    )


def backtest_prices(result: BacktestResult, points: int = PRICE_POINTS) -> PriceBook:
    """A price book of the run's prices: at its start, `points` samples, at its end."""
    book: dict[str, list[PricePoint]] = {}
    for token, series in result.prices.items():
        found: list[PricePoint] = []
        first = series.at(result.start)
        if first is not None:
            found.append(PricePoint(result.start, first))
        found += [PricePoint(moment, price) for moment, price in series.sample(points)]
        found.append(PricePoint(result.end, series.last))
        book[token] = found
    return PriceBook.of_points(book)
