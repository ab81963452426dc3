"""What the application tells the person watching, and to whom it says it.

The daemon and `bot once` print nothing themselves: they hand lines to a `Reporter` (the
command line's prints them on stdout and stderr; a test keeps them). The lines are made
here, so every front end shows a tick, an order event or a wait the same way: in the
user's terms, with numbers (`demo-dca bought 4.9821 APT for 25 USDC at 5.018 USDC per APT
(avg entry 5.004, 2 of 6 done)`), never an event's class name. The numbers of fills and
ended orders are also logged as structured `order.fill` / `order.end` events (at info:
the JSON log format shows them; the console's level is above).
"""

from __future__ import annotations

from typing import Protocol

from bot.engine.brokers import describe
from bot.engine.engine import TickReport
from bot.engine.events import (
    FillsRecorded,
    ForeignOrder,
    OrderCreated,
    OrderDisappeared,
    OrderEvent,
    OrderPartiallyFilled,
    OrderReappeared,
    OrderStatusChanged,
    UnknownStatus,
)
from bot.logging import get_logger, redact
from bot.ops.fill_news import FillNews, FillNewsReader, OrderEnd, order_label, short_id
from bot.price_view import PriceConvention

__all__ = ["Reporter", "order_event_lines", "report_lines", "running_line"]

_log = get_logger("reporter")


class Reporter(Protocol):
    """Where the application's lines for the person watching go."""

    def say(self, line: str) -> None:
        """A line of what happens (the console's stdout)."""

    def warn(self, line: str) -> None:
        """A line about a problem the bot works around, e.g. a service down (stderr)."""


def report_lines(report: TickReport, convention: PriceConvention | None = None) -> list[str]:
    """What a tick did, for the person watching: a pause, failures, refusals, outcomes.

    Every line has passed the log redactor: an error may quote a secret.
    """
    lines = []
    if report.paused:
        lines.append(f"{report.strategy}: paused (bot strategies resume {report.strategy})")
    if not report.ok:
        lines.append(f"{report.strategy}: FAILED: {report.error}")
    for action, reason in report.refusals:
        lines.append(f"{report.strategy}: refused {describe(action, convention)} — {reason}")
    for action, outcome in report.outcomes:
        if outcome.lines:
            lines.extend(outcome.lines)
        else:
            extra = f" order {outcome.order_id}" if outcome.order_id else ""
            lines.append(
                f"{report.strategy}: {describe(action, convention)} → {outcome.state}{extra}"
                + (f" ({outcome.detail})" if outcome.detail else "")
            )
    return [redact(line) for line in lines]


def order_event_lines(event: OrderEvent, news: FillNewsReader | None = None) -> list[str]:
    """What one order event means, in words and numbers (none: nothing worth a line).

    New fills: what was paid and got, at what price, the strategy's average entry and
    how far the order has come; an order that ended: what it spent, got and gave back;
    a disappeared order: what the journal now holds, and why. `news` reads the numbers
    from the journal (None: words only). A partial fill says nothing of its own: its
    fills' line says it.
    """
    found = news.news(event) if news is not None else None
    if isinstance(found, FillNews):
        _log.info("order.fill", **found.fields())
        return [redact(found.line())]
    if isinstance(found, OrderEnd):
        _log.info(
            "order.end",
            order_kind=found.kind,
            order_id=found.order_id,
            how=found.how,
            **found.fields(),
        )
        return [redact(found.line())]
    if isinstance(event, FillsRecorded | OrderPartiallyFilled):
        return []  # no traded fill (a refund record) or the numbers are unknown: the
        # status event that comes with it says what happened
    owner = _owner(event, news)
    head = f"{owner}{order_label(event.kind)} order {short_id(event.order_id)}"
    if isinstance(event, OrderDisappeared):
        why = event.reason or "the provider no longer lists it; kept as live"
        line = f"{head} disappeared (was {event.last_status}, now {event.status}: {why})"
    elif isinstance(event, ForeignOrder):
        line = f"{head} listed for this wallet belongs to {short_id(event.listed_for)}: ignored"
    elif isinstance(event, OrderCreated):
        line = f"{head} is live"
    elif isinstance(event, OrderReappeared):
        line = f"{head} is listed again ({event.to_status})"
    elif isinstance(event, UnknownStatus):
        line = f"{head}: status {event.to_status!r}, unknown to the bot (recorded)"
    elif isinstance(event, OrderStatusChanged):
        line = f"{head} {event.to_status}" + (
            f" (was {event.from_status})" if event.from_status else ""
        )
    else:
        line = f"{head}: {type(event).__name__}"
    return [redact(line)]


def _owner(event: OrderEvent, news: FillNewsReader | None) -> str:
    """`strategy: ` of the order's owner, when the journal names one."""
    if news is None or isinstance(event, ForeignOrder):
        return ""
    try:
        view = news.journal.order(event.kind, event.order_id)
    except Exception:  # words without the owner rather than no line
        return ""
    return f"{view.strategy}: " if view is not None and view.strategy else ""


def running_line(strategies: int, wallet: str | None, mode: str, *, dry_run: bool) -> str:
    """The line that says the daemon runs."""
    return (
        f"bot running: {strategies} strateg{'y' if strategies == 1 else 'ies'}, "
        f"wallet {wallet}, "
        f"mode {mode}{' (dry run)' if dry_run else ''}"
    )
