"""A backtest's result in the terms of `bot report`: one accounting summary per strategy.

`bot backtest --accounting` shows, beside the backtest's own figures, what `bot report`
would show had the run traded for real: its fills become trades and its prices a price
book (`bot.accounting.from_backtest`), accounted for by `bot.accounting.by_strategy`
with the configured cost basis and time zone over the run's window, valued at its end.
The backtested strategy and each companion run beside it are accounted on their own
lots, as `bot report` does for strategies. Definitions: docs/accounting.md.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.accounting import BucketPeriod, CostMethod, by_strategy
from bot.accounting.from_backtest import backtest_prices, backtest_trades
from bot.app.report import Report, ReportRequest, display_pair
from bot.backtest.result import BacktestResult

__all__ = ["backtest_report"]


def backtest_report(
    result: BacktestResult,
    *,
    method: CostMethod = CostMethod.FIFO,
    zone: str = "UTC",
    period: BucketPeriod | None = None,
    quote_of: Callable[[str, str], str] | None = None,
) -> Report:
    """The accounting of `result` over its window [start, end], valued at its end.

    `quote_of(a, b)`: which of two tokens prices are counted in (the
    `[display].price_quote` convention; None: base = the token bought). Raises
    `ValueError` for an unknown time zone (the configuration has checked it).
    """
    request = ReportRequest(
        start=result.start, end=result.end, period=period, zone=zone, method=method
    )
    summaries = by_strategy(
        backtest_trades(result),
        backtest_prices(result),
        valued_at=result.end,
        method=method,
        start=result.start,
        end=result.end,
        period=period,
        zone=zone,
        pair_of=lambda trades: display_pair(trades, quote_of),
    )
    counted = {name: s for name, s in summaries.items() if s.totals.trades > 0}
    return Report(request, result.end, counted)
