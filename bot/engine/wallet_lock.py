"""One trader per wallet: an OS file lock that the process trading a wallet holds.

The lock is keyed by the wallet's address alone, in one folder per user of the machine
(`[daemon].lock_dir`, default `~/.local/state/aptos-dca-bot/locks` of the user running the
bot, read from the password database so every process of that user finds the same folder
whatever its environment). Two daemons of one wallet with two different journals meet on
the same lock file, and the second refuses to start. Another machine trading the wallet is
not stopped by this lock; the signer notices its transactions by their sequence numbers.

A second process (e.g. `bot cancel` while the daemon runs) cannot take the lock; it hands
its request to the running daemon through the journal's command queue instead of racing
the daemon's sequence numbers. The lock dies with its process (no stale lock after a
crash).

When the journal is PostgreSQL (`database=` the journal's URL), the lock also takes a
PostgreSQL advisory lock on the wallet's address in that database, on a connection of its
own held for the process's life (`bot.journal.advisory`): a daemon of the same wallet on
*another machine* sharing the journal is refused as well. `still_held()` tells whether the
database lock survived (a dropped connection loses it); `regain()` takes it again. The
daemon asks both at every heartbeat and before every tick (`bot.app.lock_watch`) and
trades nothing while the lock is not held.
"""

from __future__ import annotations

import fcntl
import os
import pwd
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final

from bot.aptos.address import Address

if TYPE_CHECKING:  # the database lock's modules load only for a PostgreSQL journal
    from bot.journal.advisory import AdvisoryLock

__all__ = ["LOCK_SUBDIR", "WalletLock", "WalletLockError", "default_lock_dir", "lock_dir"]

LOCK_SUBDIR: Final = Path(".local/state/aptos-dca-bot/locks")
"""The lock folder below the user's home when `[daemon].lock_dir` is not set."""


class WalletLockError(RuntimeError):
    """The lock file cannot be created or opened (a folder that is missing or read-only)."""


def default_lock_dir() -> Path:
    """`<home>/.local/state/aptos-dca-bot/locks` of the effective user.

    The home comes from the password database, not from `$HOME` or `$XDG_*`: a daemon
    started by systemd or cron and a `bot cancel` typed in a shell see different
    environments, and must still meet on the same lock. A user with no entry (a container
    run under an arbitrary uid) falls back to `$HOME`.
    """
    try:
        home = Path(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:
        home = Path.home()
    return home / LOCK_SUBDIR


def lock_dir(configured: Path | None) -> Path:
    """The folder of the wallet locks: `[daemon].lock_dir` when set, else the default."""
    return configured if configured is not None else default_lock_dir()


class WalletLock:
    """An exclusive, non-blocking lock on `<dir>/wallet-<address>.lock`.

    With `database` a PostgreSQL URL, also the advisory lock on the wallet in that
    database (see the module docstring); with SQLite (or None) the file lock alone.
    """

    def __init__(self, directory: Path, wallet: str, *, database: str | None = None) -> None:
        address = Address.parse(wallet).long
        self.path = directory / f"wallet-{address[2:]}.lock"
        self.blocked_by = f"lock {self.path}"
        """Which lock another process holds, after `try_acquire` returned False (after
        `regain`: or why the database's cannot be taken)."""
        self._fd: int | None = None
        self._database: AdvisoryLock | None = None
        if database is not None and database.partition(":")[0].startswith("postgresql"):
            from bot.journal.advisory import AdvisoryLock

            self._database = AdvisoryLock(database, f"wallet:{address}")

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    @property
    def can_be_lost(self) -> bool:
        """True when a database lock is part of it (PostgreSQL): a dropped connection loses it.

        The file lock alone (SQLite) is held until released: `still_held` is then always True.
        """
        return self._database is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; False when another process does.

        Raises:
            WalletLockError: the folder or the file cannot be created or opened.
        """
        if self._fd is not None:
            return True
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise WalletLockError(
                f"cannot open the wallet lock {self.path}: {reason} (set [daemon].lock_dir "
                "to a folder this user can write, the same for every process of the wallet)"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self._take_database_lock()

    def _take_database_lock(self) -> bool:
        if self._database is None:
            return True
        from bot.journal.errors import JournalError

        try:
            taken = self._database.try_acquire()
        except JournalError as exc:
            self.release()
            raise WalletLockError(str(exc)) from None
        if not taken:
            self.release()
            self.blocked_by = self._database.where
        return taken

    def still_held(self) -> bool:
        """True while every lock is held.

        The database's is asked: a dropped connection loses it, and another daemon may
        hold it now.
        """
        if self._fd is None:
            return False
        return self._database is None or self._database.still_held()

    def regain(self) -> bool:
        """Hold every lock again after `still_held` said the database's was lost.

        True when held (it was, or it was taken again); False while another process holds
        it or the database cannot be reached (`blocked_by` then says which, in one line):
        trade nothing until this returns True. The file lock is kept throughout.

        Raises:
            WalletLockError: the file lock is not held (never taken, or released).
        """
        if self._fd is None:
            raise WalletLockError(f"the wallet lock {self.path} is not held: take it first")
        if self._database is None or self._database.still_held():
            return True
        from bot.journal.errors import JournalError

        try:
            taken = self._database.try_acquire()
        except JournalError as exc:
            self.blocked_by = str(exc)
            return False
        if not taken:
            self.blocked_by = f"{self._database.where} held by another session"
        return taken

    def release(self) -> None:
        """Let the lock go (closing the file releases it; the database lock's connection too)."""
        if self._database is not None:
            self._database.release()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WalletLock:
        if not self.try_acquire():
            raise RuntimeError(f"wallet lock {self.path} is held by another process")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
