"""Alerts: notifications through a JSON webhook and Telegram, never in trading's way.

Interface (stable; the implementation lands with issue 9):
* `Alert` — one notification: a kind from `ALERT_KINDS`, one line of text, a few fields.
* `Alerter.emit(kind, text, **fields)` — never blocks, never raises: the alert is queued and
  a background task delivers it to each configured channel with retries and back-off,
  under a per-channel rate limit. Secrets (the webhook URL, the bot token) never appear in
  logs or errors.
* `build_alerter(settings, clock)` — the alerter of `[alerts]` (no channel: sends nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

import httpx

from bot.clock import Clock
from bot.config import AlertSettings

__all__ = ["ALERT_KINDS", "Alert", "AlertStats", "Alerter", "build_alerter"]

ALERT_KINDS: Final = frozenset(
    {
        "order_filled",
        "order_expired",
        "order_cancelled",
        "transaction_failed",
        "strategy_error",
        "risk_cap_hit",
        "daemon_started",
        "daemon_stopped",
        "low_apt_for_gas",
        "no_poll",
    }
)


@dataclass(frozen=True)
class Alert:
    """One notification."""

    kind: str
    text: str
    at: datetime
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class AlertStats:
    """Delivery counters (per alerter, all channels)."""

    queued: int = 0
    sent: int = 0
    failed: int = 0
    dropped: int = 0
    rate_limited: int = 0


class Alerter:
    """Queues alerts and delivers them in the background (stub: counts, sends nothing)."""

    def __init__(
        self,
        settings: AlertSettings,
        clock: Clock,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.transport = transport
        self.stats = AlertStats()

    @property
    def enabled(self) -> bool:
        """True when at least one channel is configured."""
        return False

    def emit(self, kind: str, text: str, **fields: str) -> None:
        """Queue an alert; returns at once, whatever happens to it later."""
        self.stats.queued += 1

    async def start(self) -> None:
        """Start the delivery task (call inside the running event loop)."""

    async def aclose(self, timeout: float = 5.0) -> None:
        """Deliver what can be delivered within `timeout` seconds, then stop."""


def build_alerter(
    settings: AlertSettings, clock: Clock, *, transport: httpx.AsyncBaseTransport | None = None
) -> Alerter:
    """The alerter of `[alerts]`."""
    return Alerter(settings, clock, transport=transport)
