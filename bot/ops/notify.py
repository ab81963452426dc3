"""The systemd notification protocol (`sd_notify`), in a few lines of our own socket code.

systemd starts a `Type=notify` service with `$NOTIFY_SOCKET` naming an `AF_UNIX` datagram
socket: a path, or `@name` for the abstract namespace. The service sends newline-separated
`KEY=value` assignments to it: `READY=1` once started, `STATUS=…` for `systemctl status`,
`WATCHDOG=1` at least every `$WATCHDOG_USEC` microseconds while healthy, `RELOADING=1`
and `STOPPING=1`. Without `$NOTIFY_SOCKET` (a terminal, Docker) every call does nothing.
A failed send is logged once at debug level and never raises: notifying is best effort,
trading must not depend on it.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from typing import Final

from bot.logging import get_logger

__all__ = ["Notifier", "watchdog_interval"]

_MAX_STATUS: Final = 200
"""`systemctl status` shows one line; longer STATUS texts are cut."""


def _socket_address(value: str) -> str | None:
    """The address to send to: a filesystem path, or a NUL and the name for `@name`."""
    if value.startswith("@"):
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    return None  # systemd also knows vsock addresses; we do not run inside VMs that way


def watchdog_interval(environ: Mapping[str, str], pid: int) -> float | None:
    """Seconds between two `WATCHDOG=1`: half of `$WATCHDOG_USEC`, or None when not asked.

    `$WATCHDOG_PID`, when set, must be our pid (as `sd_watchdog_enabled` checks): the
    variables may have been inherited from a parent that systemd watches instead.
    """
    usec = environ.get("WATCHDOG_USEC", "")
    owner = environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    if owner and (not owner.isdigit() or int(owner) != pid):
        return None
    return int(usec) / 2_000_000


class Notifier:
    """Sends notifications to `$NOTIFY_SOCKET`; a no-op when it is unset."""

    def __init__(self, address: str | None) -> None:
        self.address = _socket_address(address) if address else None
        self._socket: socket.socket | None = None
        self._warned = False
        self._log = get_logger("notify")

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """The notifier of this process's environment."""
        env = os.environ if environ is None else environ
        return cls(env.get("NOTIFY_SOCKET") or None)

    @property
    def enabled(self) -> bool:
        """True when a notification socket is configured."""
        return self.address is not None

    def send(self, *assignments: str) -> bool:
        """Send `KEY=value` lines in one datagram; True when it was handed to the socket."""
        if self.address is None or not assignments:
            return False
        message = "\n".join(assignments).encode()
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._socket.setblocking(False)
            self._socket.sendto(message, self.address)
        except OSError as exc:
            if not self._warned:  # a missing socket fails every time: say it once
                self._warned = True
                self._log.debug("notify.failed", error=f"{type(exc).__name__}: {exc}")
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """`READY=1`: start-up is complete (with a status line when given)."""
        return self.send("READY=1", *([_status(status)] if status else []))

    def status(self, text: str) -> bool:
        """`STATUS=…`: one line for `systemctl status`."""
        return self.send(_status(text))

    def watchdog(self) -> bool:
        """`WATCHDOG=1`: still alive and healthy."""
        return self.send("WATCHDOG=1")

    def reloading(self) -> bool:
        """`RELOADING=1` with the monotonic time, as systemd's notify-reload wants it."""
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def stopping(self) -> bool:
        """`STOPPING=1`: shutting down."""
        return self.send("STOPPING=1")

    def close(self) -> None:
        """Close the socket (sending again reopens it)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def _status(text: str) -> str:
    line = " ".join(text.split())
    return "STATUS=" + (line if len(line) <= _MAX_STATUS else line[: _MAX_STATUS - 1] + "…")
