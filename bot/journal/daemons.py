"""The `daemons` table: each wallet's daemon as its last heartbeat described it.

One row per wallet, upserted by the daemon's heartbeat (`bot.ops.heartbeat.record_daemon`)
in the shared journal, so `bot status --all` lists every wallet's daemon from any machine
that reads the database. A journal opened for a wallet writes only that wallet's row; the
listing reads every wallet's.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import col
from sqlmodel import select as sm_select

from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.errors import JournalError
from bot.journal.models import DaemonRecord
from bot.journal.views import DaemonView

__all__ = ["DaemonsMixin"]


class DaemonsMixin(JournalBase):
    """Writing a daemon's heartbeat row and listing them all."""

    def record_daemon(self, daemon: DaemonView) -> None:
        """Insert or replace the row of `daemon.wallet` (one short write transaction).

        Raises:
            JournalError: a malformed wallet, naive times, negative counts, or a wallet
                other than the one this journal is opened for.
        """
        wallet = self._require_own(daemon.wallet, "a daemon")
        for name in ("pid", "strategies", "heartbeat_seconds"):
            value = getattr(daemon, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise JournalError(f"daemon {name} must be a non-negative int, got {value!r}")
        values: dict[str, Any] = {
            "host": daemon.host,
            "pid": daemon.pid,
            "mode": daemon.mode,
            "state": daemon.state,
            "health": daemon.health,
            "version": daemon.version,
            "strategies": daemon.strategies,
            "heartbeat_seconds": daemon.heartbeat_seconds,
            "started_at": canon.aware(daemon.started_at, "started_at"),
            "beat_at": canon.aware(daemon.beat_at, "beat_at"),
            "last_tick_at": None
            if daemon.last_tick_at is None
            else canon.aware(daemon.last_tick_at, "last_tick_at"),
        }
        with self._writing() as session:
            row = session.get(DaemonRecord, wallet)
            if row is None:
                row = DaemonRecord(wallet=wallet, **values)
            else:
                for name, value in values.items():
                    setattr(row, name, value)
            session.add(row)

    def daemons(self) -> list[DaemonView]:
        """Every wallet's daemon row (by wallet); one opened for a wallet: its own only."""
        query = sm_select(DaemonRecord).where(*self._scoped(DaemonRecord.wallet))
        with self._reading() as session:
            return [
                DaemonView(
                    wallet=r.wallet,
                    host=r.host,
                    pid=r.pid,
                    mode=r.mode,
                    state=r.state,
                    health=r.health,
                    version=r.version,
                    strategies=r.strategies,
                    heartbeat_seconds=r.heartbeat_seconds,
                    started_at=r.started_at,
                    beat_at=r.beat_at,
                    last_tick_at=r.last_tick_at,
                )
                for r in session.exec(query.order_by(col(DaemonRecord.wallet)))
            ]
