"""One signer per wallet: an OS file lock that the process trading a wallet holds.

A second process (e.g. `bot cancel` while the daemon runs) cannot take the lock; it hands
its request to the running daemon through the journal's command queue instead of racing
the daemon's sequence numbers. The lock dies with its process (no stale lock after a
crash).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from bot.aptos.address import Address

__all__ = ["WalletLock", "lock_dir_for"]


def lock_dir_for(journal_url: str) -> Path:
    """Where wallet locks live: beside a SQLite journal file, else `./data`."""
    from bot.journal.db import sqlite_file  # the journal's own reading of its URL

    path = sqlite_file(journal_url)
    return path.parent if path is not None else Path("data")


class WalletLock:
    """An exclusive, non-blocking lock on `<dir>/wallet-<address>.lock`."""

    def __init__(self, directory: Path, wallet: str) -> None:
        self.path = directory / f"wallet-{Address.parse(wallet).long[2:]}.lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; False when another process does."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        """Let the lock go (closing the file releases it)."""
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
