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
"""

from __future__ import annotations

import fcntl
import os
import pwd
from pathlib import Path
from types import TracebackType
from typing import Final

from bot.aptos.address import Address

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
    """An exclusive, non-blocking lock on `<dir>/wallet-<address>.lock`."""

    def __init__(self, directory: Path, wallet: str) -> None:
        self.path = directory / f"wallet-{Address.parse(wallet).long[2:]}.lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

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
