"""`bot backtest --accounting`: the run's accounting summary, as `bot report` prints it.

The figures come from `bot.app.backtest_accounting` (the run's fills as trades, its
prices as a price book, the configured `[accounting]` cost basis and time zone), the
table from the one formatter `bot report` uses (`bot.app.accounting_view`), so a live
strategy's report and its backtest on the same window read the same way. Computed only
when asked: a plain `bot backtest` never imports the accounting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.accounting import CostMethod
from bot.app.accounting_view import ROUNDING_NOTE, report_json, summary_lines
from bot.app.backtest_accounting import backtest_report

if TYPE_CHECKING:
    from bot.app.report import Report
    from bot.backtest.result import BacktestResult
    from bot.config import AccountingSettings
    from bot.price_view import PriceConvention

__all__ = ["AccountingBlock", "accounting_block"]


@dataclass(frozen=True)
class AccountingBlock:
    """A run's accounting, ready to print as a table or to add to the JSON."""

    report: Report
    convention: PriceConvention

    def lines(self) -> list[str]:
        """The table: a heading, each strategy's rows as `bot report` shows them, a note."""
        request = self.report.request
        lines = [
            f"accounting, as bot report shows it (cost basis {request.method.upper()}, "
            f"time zone {request.zone}):"
        ]
        if self.report.empty:
            return [*lines, "  no trades in the run"]
        for summary in self.report.summaries.values():
            lines += [*summary_lines(summary, self.convention), ""]
        return [*lines, ROUNDING_NOTE]

    def data(self) -> dict[str, Any]:
        """The figures as `bot report --json` gives them (exact, decimals as strings)."""
        return report_json(self.report)


def accounting_block(
    result: BacktestResult, settings: AccountingSettings, convention: PriceConvention
) -> AccountingBlock:
    """The accounting of `result` under `settings` (`[accounting]`), prices per `convention`."""
    report = backtest_report(
        result,
        method=CostMethod(settings.cost_basis),
        zone=settings.time_zone,
        quote_of=convention.quote_of,
    )
    return AccountingBlock(report, convention)
