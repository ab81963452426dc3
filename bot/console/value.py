"""`/api/v1/value`: each wallet's value through time, for the overview's chart.

The trades and prices are the accounting's (`bot.app.report_load.load_records`, as `/pnl`);
each wallet's position is evaluated by `bot.accounting.series.position_series` (the
same lots and valuation as the report) at `points` evenly spaced moments from its first
trade (or `from`) to the valuation (`to`, else the latest moment the journal recorded),
never at each trade: a year of fills gives the same bounded answer. The last point is
the valuation itself, equal to `/pnl`'s wallet value. Figures are exact strings.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Final

from bot.accounting import CostMethod, Trade
from bot.accounting.series import position_series
from bot.app.report_load import load_records
from bot.console.models import ValueAnswer, ValuePointModel, WalletSeriesModel
from bot.console.views import money
from bot.journal import Journal
from bot.money import format_decimal

__all__ = ["DEFAULT_POINTS", "MAX_POINTS", "value_answer"]

DEFAULT_POINTS: Final = 200
MAX_POINTS: Final = 1000
"""The most moments one wallet's series holds (a larger `points` is refused with 422)."""


def _grid(opens: datetime, closes: datetime, points: int) -> list[datetime]:
    """`points` moments from `opens` to `closes`, evenly spaced, both ends included."""
    if closes <= opens or points < 2:
        return [closes]
    step = (closes - opens) / (points - 1)
    return [*(opens + step * i for i in range(points - 1)), closes]


def value_answer(
    journal: Journal,
    *,
    start: datetime | None,
    end: datetime | None,
    points: int,
    method: CostMethod,
) -> ValueAnswer:
    """Each wallet's value at `points` moments of the window (blocking: a worker thread)."""
    loaded = load_records(journal, None)
    valued_at = end if end is not None else loaded.latest
    wallets: list[WalletSeriesModel] = []
    if valued_at is not None:
        groups: dict[str, list[Trade]] = defaultdict(list)
        for trade in loaded.trades:
            groups[trade.wallet].append(trade)
        for wallet, trades in sorted(groups.items()):
            counted = [
                t.time for t in trades if (start is None or t.time >= start) and t.time <= valued_at
            ]
            if not counted:
                continue
            opens = start if start is not None else min(counted)
            series = position_series(
                trades,
                loaded.book,
                moments=_grid(opens, valued_at, points),
                method=method,
                start=start,
                end=valued_at,
                at_trades=False,
            )
            shown = [
                ValuePointModel(
                    at=p.time,
                    value_usd=money(p.value_usd),
                    cost_usd=format_decimal(p.cost_usd),
                    pnl_usd=money(p.pnl_usd),
                )
                for p in series.points
            ]
            wallets.append(WalletSeriesModel(wallet=wallet, points=shown))
    return ValueAnswer(
        start=start, end=end, valued_at=valued_at, cost_basis=str(method), wallets=wallets
    )
