"""What the daemon sees, turned into alerts (interface; the rules land with issue 9).

The daemon calls these hooks; each decides whether an alert is due and emits it through
the `Alerter` (which never blocks). No hook raises.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from bot.config import AlertSettings
from bot.engine.engine import TickReport
from bot.engine.events import OrderEvent
from bot.ops.alerts import Alerter

__all__ = ["AlertSources"]


class AlertSources:
    """Turns order events, tick reports and heartbeat readings into alerts."""

    def __init__(self, alerter: Alerter, settings: AlertSettings) -> None:
        self.alerter = alerter
        self.settings = settings

    def on_order_event(self, event: OrderEvent) -> None:
        """An order filled, expired or was cancelled (subscribe this to the tracker)."""

    def on_tick_report(self, report: TickReport) -> None:
        """A strategy failed, an action's transaction failed, or a risk cap refused it."""

    def on_heartbeat(
        self, now: datetime, last_poll_ok_at: datetime | None, apt_balance: Decimal | None
    ) -> None:
        """Low APT for gas; no successful order poll for `no_poll_minutes`."""

    def on_daemon(self, state: str, detail: str = "") -> None:
        """The daemon `started` or `stopped`."""
