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

from bot.aptos.tokens import TokenLookupError, token_key
from bot.config import Settings
from bot.domain import APT_COIN_TYPE, APT_FA_ADDRESS
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
    label: how a token (coin type or FA address) is named: its symbol when the daemon's
        token book knows it (`PriceConvention.label`); an unknown one as its identity.
    """

    journal: Journal
    settings: Callable[[], Settings]
    status: Callable[[], DaemonStatus | None]
    alerts: Callable[[], Sequence[AlertRecord]] | None = None
    quote_of: Callable[[str, str], str] | None = None
    label: Callable[[str], str] | None = None

    def symbol(self, token: str) -> str | None:
        """`token`'s symbol for people to read, or None when it is not known.

        APT is always known; any other token by `label` (an answer that is only the
        identity again is no symbol). The exact identity stays in the answers beside it.
        """
        try:
            key = token_key(token)
        except TokenLookupError:
            return None
        if self.label is not None:
            shown = self.label(token).strip()
            if shown and shown != key and not shown.startswith("0x"):
                return shown
        return "APT" if key in _APT else None


_APT = frozenset({token_key(APT_COIN_TYPE), token_key(APT_FA_ADDRESS)})
