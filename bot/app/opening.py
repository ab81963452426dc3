"""Opening what a verb works on: the journal, and the wallet's lock (one trader per wallet).

Light to import (the journal's modules load when a journal is opened): every verb of the
command line may use it. A problem is a `SetupError`: one line, exit 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.app.errors import SetupError
from bot.config import Settings
from bot.engine.wallet_lock import WalletLock, WalletLockError, lock_dir

if TYPE_CHECKING:
    from bot.journal import Journal

__all__ = ["open_journal", "take_wallet_lock", "wallet_lock"]


def open_journal(url: str, *, readonly: bool = False, wallet: str | None = None) -> Journal:
    """The journal at `url` (the writer migrates it); `wallet`: opened for that wallet's rows.

    Every verb opens the journal here, so a damaged one, one from a newer bot or a missing
    one reads the same everywhere (`JournalError`'s message names the journal).

    Raises:
        SetupError: the journal cannot be used.
    """
    from bot.journal import Journal, JournalError

    try:
        return Journal.open(url, migrate=not readonly, readonly=readonly, wallet=wallet)
    except JournalError as exc:
        raise SetupError(str(exc)) from exc


def take_wallet_lock(settings: Settings, wallet: str) -> WalletLock:
    """The wallet's lock, taken for this process (one trader per wallet, whatever journal).

    Raises:
        SetupError: another process trades the wallet, or the lock cannot be opened.
    """
    lock = wallet_lock(settings, wallet)
    try:
        taken = lock.try_acquire()
    except WalletLockError as exc:
        raise SetupError(str(exc)) from exc
    if not taken:
        raise SetupError(f"another process trades {wallet} ({lock.blocked_by})")
    return lock


def wallet_lock(settings: Settings, wallet: str) -> WalletLock:
    """The wallet's lock, not taken yet.

    The file beside this machine's daemons and, on a PostgreSQL journal, the database's
    advisory lock (a daemon of the wallet may run on another machine: only the database
    knows). Every verb that trades or settles the wallet asks this one, so none sees "no
    daemon" while one runs elsewhere.
    """
    return WalletLock(lock_dir(settings.daemon.lock_dir), wallet, database=settings.journal.url)
