"""The command queue: requests from other processes (`bot orders`) to the daemon.

The one table a read-only journal may write to (`enqueue_command`); the daemon polls it
with `take_command` and reports with `finish_command`. Every command is for one wallet's
daemon: a journal opened for a wallet queues for it and takes only its commands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from sqlmodel import col
from sqlmodel import select as sm_select

from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.codec import decode_json
from bot.journal.errors import JournalError
from bot.journal.models import Command
from bot.journal.views import CommandView

__all__ = ["COMMAND_STATES", "CommandsMixin"]

COMMAND_STATES: Final = ("queued", "taken", "done", "failed")


class CommandsMixin(JournalBase):
    """Queueing commands for the daemon, taking and finishing them."""

    def enqueue_command(
        self, kind: str, payload: Mapping[str, Any], *, at: datetime, wallet: str | None = None
    ) -> int:
        """Queue a request for the daemon (allowed on a read-only journal); returns its id.

        `wallet`: the daemon it is for (default: the journal's wallet; a journal opened for
        no wallet queues it unnamed, for the first daemon that claims it).

        Raises:
            JournalError: an empty kind, a payload that is not exact JSON, or a wallet
                other than the one this journal is opened for.
        """
        if not kind:
            raise JournalError("command kind is empty")
        owner = self._owner() if wallet is None else self._require_own(wallet, "a command")
        payload_json = canon.json_text(dict(payload), "command payload")
        moment = canon.aware(at)
        with self._writing(queue_only=True) as session:
            row = Command(
                created_at=moment,
                kind=kind,
                payload_json=payload_json,
                state="queued",
                updated_at=moment,
                wallet=owner,
            )
            session.add(row)
            session.flush()
            return canon.row_id(row.id)

    def take_command(self, *, at: datetime) -> CommandView | None:
        """Take the oldest queued command of this journal's wallet (marks it `taken`), or None.

        Atomic: the write transaction holds SQLite's write lock from its start, so two
        takers never get the same command.
        """
        moment = canon.aware(at)
        with self._writing() as session:
            row = session.exec(
                sm_select(Command)
                .where(Command.state == "queued", Command.wallet == self._owner())
                .order_by(col(Command.id))
                .limit(1)
                .with_for_update(skip_locked=True)
            ).first()
            if row is None:
                return None
            row.state = "taken"
            row.updated_at = moment
            session.add(row)
            session.flush()
            return _command_view(row)

    def finish_command(
        self, command_id: int, ok: bool, result: str | None = None, *, at: datetime
    ) -> CommandView:
        """Mark a taken command `done` (ok) or `failed`, with a result text.

        Raises:
            JournalError: unknown command, or one that is not `taken`.
        """
        moment = canon.aware(at)
        with self._writing() as session:
            row = session.get(Command, command_id)
            if row is None or not self._visible(row.wallet):
                raise JournalError(f"no command {command_id}")
            if row.state != "taken":
                raise JournalError(f"command {command_id} is {row.state}, not taken")
            row.state = "done" if ok else "failed"
            row.result = result
            row.updated_at = moment
            session.add(row)
            session.flush()
            return _command_view(row)

    def command(self, command_id: int) -> CommandView | None:
        """One command by id."""
        with self._reading() as session:
            row = session.get(Command, command_id)
            return None if row is None or not self._visible(row.wallet) else _command_view(row)

    def commands(self, states: Iterable[str] | None = None) -> list[CommandView]:
        """Commands (oldest first), optionally only in `states`."""
        query = sm_select(Command).where(*self._scoped(Command.wallet))
        if states is not None:
            query = query.where(col(Command.state).in_(list(states)))
        with self._reading() as session:
            return [_command_view(r) for r in session.exec(query.order_by(col(Command.id)))]


def _command_view(row: Command) -> CommandView:
    payload = decode_json(row.payload_json)
    return CommandView(
        id=canon.row_id(row.id),
        kind=row.kind,
        payload=payload if isinstance(payload, dict) else {"value": payload},
        state=row.state,
        created_at=row.created_at,
        updated_at=row.updated_at,
        result=row.result,
        wallet=row.wallet,
    )
