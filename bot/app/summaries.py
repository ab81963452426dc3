"""The running bot's periodic one-line summary per strategy.

Every `[display].summary_every_seconds` of the market clock (the injected one: a paper
world's accelerated or stepped clock, else real time), one line per running strategy:

    demo-dca: invested 150 USDC, received 29.874 APT; avg entry 5.0211 vs market 5.0433
    USDC per APT (-0.44 %); value 151.20 USD; P&L +1.20 USD (FIFO)

The figures are `bot report`'s (`bot.app.report.build_report` over the journal's fills and
recorded prices, `[accounting]`'s cost basis): the value and the market mean need recorded
prices (`[record].enabled`); without them they say `n/a`. The same numbers are logged as a
structured `strategy.summary` event (at info: the JSON log format shows it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from apscheduler.triggers.interval import IntervalTrigger

from bot.accounting import CostMethod, Summary
from bot.app.report import (
    Report,
    ReportRequest,
    build_report,
    build_report_off_loop,
    holdings_value,
)
from bot.engine.scheduling import Job
from bot.journal import Journal
from bot.journal.db import sqlite_file
from bot.logging import get_logger, redact
from bot.money import format_decimal
from bot.price_view import (
    PriceConvention,
    amounts_text,
    measured_price_text,
    percent_text,
    usd_text,
)

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.engine.engine import Engine

__all__ = [
    "SUMMARY_JOB",
    "StrategySummaries",
    "daemon_summary_jobs",
    "summary_job",
    "summary_line",
]

SUMMARY_JOB: Final = "summary"


def summary_line(summary: Summary, convention: PriceConvention) -> str:
    """One strategy's figures on one line (invested, received, entry vs market, value, P&L)."""
    totals = summary.totals
    parts = [
        f"invested {amounts_text(totals.invested, convention, none='nothing')}, "
        f"received {amounts_text(totals.received, convention, none='nothing')}"
    ]
    position = summary.position
    if position is not None:
        pair = position.pair
        entry = convention.of_amounts(position.paid, pair.quote, position.bought, pair.base)
        unit = f"{convention.label(pair.quote)} per {convention.label(pair.base)}"
        shown = f"avg entry {entry.number}" if entry is not None else "avg entry n/a"
        mean = position.market_mean
        if mean is None:
            shown += f" {unit} vs market n/a (no recorded prices)"
        else:
            market = measured_price_text(mean)
            shown += f" vs market {market} {unit}"
            versus = position.entry_vs_market_percent
            if versus is not None:
                shown += f" ({percent_text(versus)})"
        parts.append(shown)
    parts.append(f"value {usd_text(holdings_value(summary))}")
    if summary.unvalued:  # their lots cost nothing: a P&L would count them as pure gain
        count = len(summary.unvalued)
        parts.append(f"P&L n/a ({count} trade{'s' if count != 1 else ''} without a USD price)")
    else:
        parts.append(f"P&L {usd_text(summary.pnl_usd, signed=True)} ({summary.method.upper()})")
    return f"{summary.name}: " + "; ".join(parts)


class StrategySummaries:
    """Makes the summary lines of the running strategies from the journal.

    `names()`: the strategies running now (a reload changes them); a running strategy
    with no fill yet gets `name: no fills yet`.
    """

    def __init__(
        self,
        journal: Journal,
        convention: PriceConvention,
        names: Callable[[], Iterable[str]],
        *,
        method: CostMethod = CostMethod.FIFO,
        zone: str = "UTC",
        url: str | None = None,
    ) -> None:
        self.journal = journal
        self.url = url
        """The journal's URL: `lines_off_loop` reads it in a worker thread, on its own."""
        self.convention = convention
        self.names = names
        self.request = ReportRequest(zone=zone, method=method)
        self._log = get_logger("summary")

    async def lines_off_loop(self) -> list[str]:
        """`lines`, the report built off the event loop (`build_report_off_loop`).

        An in-memory journal (tests) cannot be opened twice: it is read here.
        """
        running = sorted(self.names())
        if not running:
            return []
        quote_of = self.convention.quote_of
        if self.url is None or (sqlite_file(self.url) is None and self.url.startswith("sqlite")):
            report = build_report(self.journal, self.request, running, quote_of)
        else:
            report = await build_report_off_loop(
                self.url, self.request, running, quote_of, wallet=self.journal.wallet
            )
        return self.lines(running, report)

    def lines(self, running: list[str], report: Report) -> list[str]:
        """One line per running strategy of `running` (in name order) from `report`."""
        lines = []
        for name in running:
            summary = report.summaries.get(name)
            if summary is None:
                lines.append(f"{name}: no fills yet")
                continue
            lines.append(redact(summary_line(summary, self.convention)))
            position = summary.position
            self._log.info(
                "strategy.summary",
                strategy=name,
                trades=summary.totals.trades,
                invested=self._sums(summary.totals.invested),
                received=self._sums(summary.totals.received),
                average_entry=_text(position.average_entry if position else None),
                market_mean=_text(position.market_mean if position else None),
                value_usd=_text(holdings_value(summary)),
                pnl_usd=_text(summary.pnl_usd),
                cost_basis=str(summary.method),
                valued_at=summary.valued_at.isoformat(),
            )
        return lines

    def _sums(self, sums: dict[str, Decimal]) -> dict[str, str]:
        return {self.convention.label(t): format_decimal(a) for t, a in sums.items()}


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format_decimal(value)


def summary_job(
    summaries: StrategySummaries, say: Callable[[str], None], every_seconds: int, now: datetime
) -> Job:
    """The job that says the summary lines every `every_seconds` of the market clock.

    The first summary comes one interval after `now` (the start).
    """

    async def run() -> None:
        for line in await summaries.lines_off_loop():
            say(line)

    start = now + timedelta(seconds=every_seconds)
    return Job(SUMMARY_JOB, IntervalTrigger(seconds=every_seconds, start_date=start), run)


def daemon_summary_jobs(
    settings: Settings,
    journal: Journal,
    engine: Engine,
    say: Callable[[str], None],
    now: datetime,
) -> list[Job]:
    """The daemon's summary job over the engine's running strategies.

    None when `[display].summary_every_seconds` is 0.
    """
    every = settings.display.summary_every_seconds
    if every <= 0:
        return []
    summaries = StrategySummaries(
        journal,
        engine.convention,
        engine.strategies.keys,
        method=CostMethod(settings.accounting.cost_basis),
        zone=settings.accounting.time_zone,
        url=settings.journal.url,
    )
    return [summary_job(summaries, say, every, now)]
