"""`AdvisoryLock`: a PostgreSQL session advisory lock on a dedicated connection.

One daemon per wallet *anywhere*: when the journal is PostgreSQL, the process trading a
wallet also holds `pg_try_advisory_lock(key)` on its own connection to the journal's
database, for its whole life (`bot.engine.wallet_lock.WalletLock` takes it beside the
file lock). Any other process, on any machine, that asks for the same key is refused at
once. The lock belongs to the connection: it is let go when the process releases it,
exits or dies, or when its connection drops (the server ends the session).

The connection runs in autocommit (no transaction is left open for months, holding back
vacuum); the key is the first 8 bytes (signed) of SHA-256 of a name, e.g. the wallet's
address in long form.
"""

from __future__ import annotations

import hashlib
from contextlib import suppress
from typing import Final

from sqlalchemy import Connection, Engine, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from bot.journal.db import driver_message, journal_name, make_engine
from bot.journal.errors import JournalError

__all__ = ["AdvisoryLock", "advisory_key"]

_KEY_PREFIX: Final = "aptos-dca-bot:"


def advisory_key(name: str) -> int:
    """The signed 64-bit advisory-lock key of `name` (stable on every machine)."""
    digest = hashlib.sha256((_KEY_PREFIX + name).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class AdvisoryLock:
    """A non-blocking PostgreSQL advisory lock held on a connection of its own."""

    def __init__(self, url: str | URL, name: str) -> None:
        """Prepare the lock `name` in the database at `url` (nothing is opened yet)."""
        self.url = url
        self.name = name
        self.key = advisory_key(name)
        self._engine: Engine | None = None
        self._conn: Connection | None = None

    @property
    def where(self) -> str:
        """The lock as people see it: its name and database (never a password)."""
        return f"advisory lock {self.name!r} in {journal_name(self.url)}"

    @property
    def held(self) -> bool:
        """True while this object holds the lock (its connection has not been seen to drop)."""
        return self._conn is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; False when another session does.

        Raises:
            JournalError: the database cannot be reached (one line, no password).
        """
        if self._conn is not None:
            return True
        engine = make_engine(self.url, poolclass=NullPool)
        try:
            conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            taken = bool(
                conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}).scalar()
            )
        except SQLAlchemyError as exc:
            engine.dispose()
            raise JournalError(f"{self.where}: cannot take it: {driver_message(exc)}") from exc
        if not taken:
            conn.close()
            engine.dispose()
            return False
        self._engine, self._conn = engine, conn
        return True

    def still_held(self) -> bool:
        """Ask the server whether this session still holds the lock.

        False (and the lock is let go here) when the connection dropped: the server ended
        the session and with it the lock; another process may hold it now.
        """
        if self._conn is None:
            return False
        try:
            held = self._conn.execute(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND pid = pg_backend_pid() AND objsubid = 1 "
                    "AND ((classid::bigint << 32) | objid::bigint) = :key"
                ),
                {"key": self.key},
            ).scalar()
        except SQLAlchemyError:
            self.release()
            return False
        if not held:
            self.release()
        return bool(held)

    def release(self) -> None:
        """Let the lock go (closing its connection ends the session and the lock)."""
        conn, engine = self._conn, self._engine
        self._conn = self._engine = None
        if conn is not None:
            with suppress(SQLAlchemyError):  # a dropped connection: nothing to close
                conn.close()
        if engine is not None:
            engine.dispose()
