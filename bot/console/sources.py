"""What the console reads and where its controls go: the daemon's own parts, handed in.

The console owns nothing of the bot: it is given the journal (read views and the command
queue), the settings now running, the daemon's status and, when kept, its recent alerts.
Each callable may be called from a worker thread: it must not touch the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from bot.config import Settings
from bot.ops.status_file import DaemonStatus

if TYPE_CHECKING:
    from bot.journal import Journal

__all__ = ["AlertRecord", "ConsoleSources"]


class AlertRecord(Protocol):
    """One alert as the daemon keeps it (`bot.ops.alerts.Alert` is one)."""

    @property
    def kind(self) -> str:
        """Its kind (`order_filled`, `strategy_error`…)."""
        ...

    @property
    def text(self) -> str:
        """Its one line (already redacted)."""
        ...

    @property
    def at(self) -> datetime:
        """When it was raised (aware UTC)."""
        ...

    @property
    def fields(self) -> Mapping[str, str]:
        """Its fields, as exact text."""
        ...


@dataclass(frozen=True)
class ConsoleSources:
    """The daemon's parts the console reads and steers.

    journal: best a read-only `Journal` of its own (`Journal.open(url, readonly=True)`):
        it may read everything and write only to the command queue.
    settings: the settings running now (a reload changes them): strategies, accounting.
    status: the daemon's last status (its status file, or a snapshot), or None.
    alerts: the most recent alerts, when the daemon keeps them (None: not kept).
    quote_of: which of two tokens prices are counted in (`PriceConvention.quote_of`).
    """

    journal: Journal
    settings: Callable[[], Settings]
    status: Callable[[], DaemonStatus | None]
    alerts: Callable[[], Sequence[AlertRecord]] | None = None
    quote_of: Callable[[str, str], str] | None = None
