"""`/api/v1/pnl`: the accounting's P&L per strategy and per wallet, exact.

The trades and prices come from the journal through `bot.app.report_load.load_records` (the
loader `bot report` uses); each strategy is accounted on its own lots
(`bot.accounting.by_strategy`), each wallet on all its strategies' lots together
(`by_wallet`). The shape of a summary is `bot.app.report.summary_data`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from bot.accounting import BucketPeriod, CostMethod, by_strategy, by_wallet
from bot.app.report import display_pair, summary_data
from bot.app.report_load import load_records
from bot.console.models import PnlAnswer, PnlSummaryModel
from bot.journal import Journal

__all__ = ["PnlQuery", "pnl_answer", "symbols_of"]


@dataclass(frozen=True)
class PnlQuery:
    """The window [start, end], the buckets, and how to count (`[accounting]`)."""

    start: datetime | None
    end: datetime | None
    period: BucketPeriod | None
    zone: str
    method: CostMethod


def _tokens(summary: PnlSummaryModel) -> Iterator[str]:
    """Every token a summary names: its position's pair, holdings, invested and received."""
    if summary.position is not None:
        yield summary.position.base
        yield summary.position.quote
    yield from (h.token for h in summary.holdings)
    yield from summary.totals.invested
    yield from summary.totals.received


def symbols_of(
    summaries: Iterable[PnlSummaryModel], symbol: Callable[[str], str | None]
) -> dict[str, str]:
    """Each token the summaries name → its symbol (those without one left out)."""
    found: dict[str, str] = {}
    for summary in summaries:
        for token in _tokens(summary):
            if token not in found and (named := symbol(token)) is not None:
                found[token] = named
    return found


def pnl_answer(
    journal: Journal,
    query: PnlQuery,
    quote_of: Callable[[str, str], str] | None,
    symbol: Callable[[str], str | None] = lambda token: None,
) -> PnlAnswer:
    """P&L of every strategy and wallet with trades in the window (blocking: a thread).

    `symbol`: how a token is named for people (`ConsoleSources.symbol`): the answer's
    `symbols` maps each token its figures name to it.
    """
    loaded = load_records(journal, None)
    trades, book, latest = loaded.trades, loaded.book, loaded.latest
    valued_at = query.end if query.end is not None else latest
    strategies: list[PnlSummaryModel] = []
    wallets: list[PnlSummaryModel] = []
    if valued_at is not None:
        per_strategy = by_strategy(
            trades,
            book,
            valued_at=valued_at,
            method=query.method,
            period=query.period,
            zone=query.zone,
            pair_of=lambda group: display_pair(group, quote_of),
            start=query.start,
            end=query.end,
            gas=loaded.gas,
        )
        per_wallet = by_wallet(
            trades,
            book,
            valued_at=valued_at,
            method=query.method,
            period=query.period,
            zone=query.zone,
            start=query.start,
            end=query.end,
            gas=loaded.gas,
        )
        strategies = [
            PnlSummaryModel.model_validate(summary_data(s))
            for s in per_strategy.values()
            if s.totals.trades > 0
        ]
        wallets = [
            PnlSummaryModel.model_validate(summary_data(s))
            for s in per_wallet.values()
            if s.totals.trades > 0
        ]
    return PnlAnswer(
        start=query.start,
        end=query.end,
        by=None if query.period is None else str(query.period),
        time_zone=query.zone,
        cost_basis=str(query.method),
        valued_at=valued_at,
        strategies=strategies,
        wallets=wallets,
        symbols=symbols_of([*strategies, *wallets], symbol),
    )
