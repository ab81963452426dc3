"""Serving the console inside the daemon's event loop: a uvicorn server task.

`serve_console(settings, …)` is the daemon's one call: the token (`console_token`: one
line and exit 2 when it cannot be had), a read-only journal of the console's own (it may
read everything and write only to the command queue), the app, the server.

`start_console(app, host, port)` binds the socket first (a port in use is one line,
`ConsoleSetupError`, never uvicorn's `sys.exit` inside a task), then runs uvicorn's
server as a task of the running loop. The server installs no signal handlers: SIGTERM,
SIGINT and SIGHUP stay the daemon's. `ConsoleServer.stop()` closes it (open connections
get `graceful_seconds` to finish). Accepted connections get TCP_NODELAY.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import uvicorn

from bot.clock import Clock
from bot.config import Settings
from bot.console.access import ConsoleSetupError, console_token
from bot.console.app import create_app
from bot.console.remotes import RemoteBots, RemoteSetupError, remotes_of
from bot.console.sources import AlertRecord, ConsoleSources
from bot.journal import Journal
from bot.ops.status_file import DaemonStatus

__all__ = ["ConsoleServer", "serve_console", "start_console"]

START_SECONDS: Final = 10.0


class _EmbeddedServer(uvicorn.Server):
    """uvicorn's server without its signal handling (the daemon owns the signals)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Install nothing: the daemon's own handlers stay in place."""
        yield


class ConsoleServer:
    """A running console: its URL, its task, and how to stop it."""

    def __init__(self, server: _EmbeddedServer, task: asyncio.Task[None], url: str) -> None:
        self._server = server
        self.task = task
        self.url = url
        """`http://HOST:PORT` as bound (port 0 resolved)."""
        self.on_stop: list[Callable[[], None]] = []
        """Run after the server stopped (closing the console's journal)."""

    async def stop(self) -> None:
        """Stop accepting, let open requests finish (bounded), wait for the task."""
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
        for close in self.on_stop:
            close()


def _bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port` (IPv4 or IPv6), TCP_NODELAY set."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family = infos[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise ConsoleSetupError(f"[console].host {host!r}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(infos[0][4])
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise ConsoleSetupError(
            f"[console] cannot listen on {host}:{port}: {exc.strerror or exc}"
        ) from None
    return sock


async def start_console(
    app: Any, host: str, port: int, *, graceful_seconds: int = 5
) -> ConsoleServer:
    """Serve `app` on `host:port` as a task of the running loop; returns once it listens.

    Raises:
        ConsoleSetupError: the address cannot be bound (in use, unknown host), or the
            server did not start.
    """
    sock = _bind(host, port)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=graceful_seconds,
        server_header=False,
    )
    server = _EmbeddedServer(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name="console")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_SECONDS
    while not server.started:
        if task.done() or loop.time() > deadline:
            server.should_exit = True
            with contextlib.suppress(BaseException):
                await task
            sock.close()
            raise ConsoleSetupError(f"[console] did not start on {host}:{port}")
        await asyncio.sleep(0.01)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if ":" in str(bound[0]) else str(bound[0])
    return ConsoleServer(server, task, f"http://{shown}:{bound[1]}")


async def serve_console(
    settings: Settings,
    *,
    settings_now: Callable[[], Settings],
    status: Callable[[], DaemonStatus | None],
    clock: Clock,
    alerts: Callable[[], Sequence[AlertRecord]] | None = None,
    quote_of: Callable[[str, str], str] | None = None,
    label: Callable[[str], str] | None = None,
    wallet: str | None = None,
) -> ConsoleServer:
    """Start the console of `settings.console` in the running loop (the daemon's call).

    `wallet`: the daemon's wallet: the console reads its rows and queues its commands.

    `settings_now`, `status`, `alerts`, `label`: see `ConsoleSources` (called in worker
    threads). The remotes of `[console].remotes` are read once here (their token files).

    Raises:
        ConsoleSetupError: no usable token, a host beyond loopback without one, an
            address that cannot be bound, a remote's token file that cannot be read.
        JournalError: the journal cannot be opened read-only.
    """
    token = console_token(settings)
    try:
        remotes = remotes_of(settings)
    except RemoteSetupError as exc:
        raise ConsoleSetupError(str(exc)) from None
    journal = Journal.open(settings.journal.url, readonly=True, wallet=wallet)
    try:
        sources = ConsoleSources(journal, settings_now, status, alerts, quote_of, label)
        bots = RemoteBots(remotes, clock) if remotes else None
        app = create_app(sources, token=token.get_secret_value(), clock=clock, remotes=bots)
        server = await start_console(app, settings.console.host, settings.console.port)
    except BaseException:
        journal.close()
        raise
    server.on_stop.append(journal.close)
    return server
