"""Controls waiting for their confirmation tap: one-time nonces that expire.

A control sent from Telegram (`/pause`, `/cancel`…) is kept here under a fresh random
nonce, which its Confirm and Abort buttons carry (`ok:<nonce>`, `no:<nonce>`, within the
Bot API's 64 bytes of callback data). A tap is honoured once, only from the chat that
asked, and only before the control expires (times from the caller's injected clock).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

__all__ = ["Confirmations", "Pending", "Sender", "TapRefused"]

_MAX_PENDING: Final = 100
"""Most controls kept waiting at once (the oldest is forgotten first)."""


@dataclass(frozen=True)
class Sender:
    """Who sent a message or tapped a button."""

    chat_id: str
    user_id: int | None
    username: str | None

    def journal_entry(self) -> dict[str, Any]:
        """What the command's payload records of them (`by`)."""
        return {
            "via": "telegram",
            "chat_id": self.chat_id,
            "user_id": self.user_id,
            "username": self.username,
        }


@dataclass
class Pending:
    """A control waiting for its confirmation tap."""

    kind: str
    payload: dict[str, Any]
    question: str
    asked_by: Sender
    expires_at: datetime


class TapRefused(Exception):
    """A tap that does nothing: what its toast says, and a message for the chat if any."""

    def __init__(self, toast: str, message: str | None = None) -> None:
        super().__init__(toast)
        self.toast = toast
        self.message = message


@dataclass
class Confirmations:
    """The controls waiting for a tap, by nonce."""

    window: timedelta
    """How long a control can be confirmed."""
    pending: dict[str, Pending] = field(default_factory=dict)

    def remember(
        self, kind: str, payload: dict[str, Any], question: str, sender: Sender, now: datetime
    ) -> str:
        """Keep a control until its tap; the one-time nonce its buttons carry."""
        for nonce in [n for n, p in self.pending.items() if p.expires_at <= now]:
            del self.pending[nonce]
        while len(self.pending) >= _MAX_PENDING:
            del self.pending[next(iter(self.pending))]
        nonce = secrets.token_urlsafe(16)
        self.pending[nonce] = Pending(kind, payload, question, sender, now + self.window)
        return nonce

    def take(self, nonce: str, sender: Sender, now: datetime) -> Pending:
        """The control `nonce` names, forgotten now (a nonce serves once).

        Raises:
            TapRefused: unknown or used, another chat's (then it stays), or expired.
        """
        pending = self.pending.get(nonce)
        if pending is None:
            raise TapRefused("expired or already used: send it again")
        if pending.asked_by.chat_id != sender.chat_id:
            raise TapRefused("this confirmation belongs to another chat")
        del self.pending[nonce]
        if pending.expires_at <= now:
            raise TapRefused("expired: send it again", f"expired, nothing done: {pending.question}")
        return pending
