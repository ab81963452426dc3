"""What the application tells the person watching, and to whom it says it.

The daemon and `bot once` print nothing themselves: they hand lines to a `Reporter` (the
command line's prints them on stdout and stderr; a test keeps them). The lines are made
here, so every front end shows a tick, an order event or a wait the same way.
"""

from __future__ import annotations

from typing import Protocol

from bot.engine.brokers import describe
from bot.engine.engine import TickReport
from bot.engine.events import OrderDisappeared, OrderEvent
from bot.logging import redact
from bot.price_view import PriceConvention

__all__ = ["Reporter", "order_event_line", "report_lines", "running_line"]


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


def order_event_line(event: OrderEvent) -> str:
    """One order event (a disappeared order says what the journal now holds, and why)."""
    line = f"order {event.order_id[:12]} ({event.kind}): {type(event).__name__}"
    if isinstance(event, OrderDisappeared):
        why = event.reason or "the provider no longer lists it; kept as live"
        line += f" (was {event.last_status}, now {event.status}: {why})"
    return line


def running_line(strategies: int, wallet: str | None, mode: str, *, dry_run: bool) -> str:
    """The line that says the daemon runs."""
    return (
        f"bot running: {strategies} strategies, wallet {wallet}, "
        f"mode {mode}{' (dry run)' if dry_run else ''}"
    )
