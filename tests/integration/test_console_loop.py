"""The console never blocks trading: it runs in the daemon's loop beside a ticking job.

`start_console` serves the API as a task of the test's own event loop (as the daemon
would); a ticking coroutine measures how late the loop wakes it while a client reads one
byte a second, and while journal reads take half a second each.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import statistics
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.clock import SteppedClock
from bot.console import (
    ConsoleSetupError,
    ConsoleSources,
    create_app,
    serve_console,
    start_console,
)
from bot.console.server import ConsoleServer
from bot.journal import Journal
from bot.journal.views import OrderView
from tests.support.console_rig import TOKEN, daemon_status, fill_journal, settings_for

AUTH = {"Authorization": f"Bearer {TOKEN}"}
TICK = 0.01


class SlowJournal(Journal):
    """A journal whose order listing takes half a second (a slow disk, a big table)."""

    def orders(self, **filters: Any) -> list[OrderView]:
        time.sleep(0.5)
        return super().orders(**filters)


@asynccontextmanager
async def running_console(tmp_path: Path, journal_class: type[Journal]) -> AsyncIterator[str]:
    fill_journal(tmp_path / "bot.db")
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    settings = settings_for(url)
    status = daemon_status()
    journal = journal_class.open(url, readonly=True)
    sources = ConsoleSources(journal, lambda: settings, lambda: status)
    app = create_app(sources, token=TOKEN, clock=SteppedClock(datetime(2026, 5, 3, tzinfo=UTC)))
    server: ConsoleServer = await start_console(app, "127.0.0.1", 0, graceful_seconds=1)
    try:
        yield server.url
    finally:
        await server.stop()
        journal.close()


async def tick_lateness(seconds: float) -> list[float]:
    """How late each 10 ms sleep of a ticking job wakes, for `seconds`."""
    loop = asyncio.get_running_loop()
    late: list[float] = []
    end = loop.time() + seconds
    while loop.time() < end:
        before = loop.time()
        await asyncio.sleep(TICK)
        late.append(loop.time() - before - TICK)
    return late


def in_thread(work: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


async def test_a_client_reading_one_byte_a_second_stalls_nothing(tmp_path: Path) -> None:
    async with running_console(tmp_path, Journal) as url:
        host, port = url.removeprefix("http://").split(":")
        stop = threading.Event()
        got: list[bytes] = []

        def slow_reader() -> None:
            with socket.socket() as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect((host, int(port)))
                request = f"GET /openapi.json HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
                sock.sendall(request * 300)  # megabytes of answers, pipelined
                while not stop.is_set():
                    got.append(sock.recv(1))
                    stop.wait(1.0)

        fast: list[float] = []

        def fast_client() -> None:
            with httpx.Client(base_url=url, headers=AUTH, timeout=5) as client:
                for _ in range(10):
                    started = time.monotonic()
                    assert client.get("/api/v1/orders").status_code == 200
                    fast.append(time.monotonic() - started)
                    time.sleep(0.2)

        reader = in_thread(slow_reader)
        await asyncio.sleep(0.3)  # the reader's answers pile up on its connection
        requests = in_thread(fast_client)
        late = await tick_lateness(3.0)
        await asyncio.to_thread(requests.join, 10)
        stop.set()
        await asyncio.to_thread(reader.join, 5)
    assert 2 <= len(got) <= 5 and got[0] == b"H"  # it really did read a byte a second
    assert len(fast) == 10 and max(fast) < 1.0
    assert statistics.median(late) < 0.02, statistics.median(late)
    assert max(late) < 0.25, max(late)


async def test_slow_journal_reads_run_beside_the_loop(tmp_path: Path) -> None:
    async with (
        running_console(tmp_path, SlowJournal) as url,
        httpx.AsyncClient(base_url=url, headers=AUTH, timeout=10) as client,
    ):
        ticking = asyncio.create_task(tick_lateness(1.2))
        answers = await asyncio.gather(*(client.get("/api/v1/orders") for _ in range(3)))
        late = await ticking
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert max(late) < 0.25, max(late)  # on the loop, each read would hold it 0.5 s


async def test_the_server_leaves_the_daemons_signals_alone(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    async with running_console(tmp_path, Journal) as url:
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
        async with httpx.AsyncClient(base_url=url, headers=AUTH) as client:
            assert (await client.get("/api/v1/health")).status_code == 200
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


async def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(ConsoleSetupError, match=rf"cannot listen on 127.0.0.1:{port}"):
            await start_console(object(), "127.0.0.1", port)


async def test_serve_console_as_the_daemon_would(tmp_path: Path) -> None:
    fill_journal(tmp_path / "bot.db")
    settings = settings_for(f"sqlite:///{tmp_path / 'bot.db'}", port=free_port())
    status = daemon_status()
    server = await serve_console(
        settings,
        settings_now=lambda: settings,
        status=lambda: status,
        clock=SteppedClock(datetime(2026, 5, 3, tzinfo=UTC)),
    )
    try:
        token = (tmp_path / "console.token").read_text().strip()  # loopback, none configured
        async with httpx.AsyncClient(base_url=server.url) as client:
            assert (await client.get("/api/v1/status")).status_code == 401
            mine = {"Authorization": f"Bearer {token}"}
            answer = await client.post("/api/v1/strategies/dca-apt/pause", headers=mine)
            assert answer.status_code == 202
    finally:
        await server.stop()
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        (command,) = journal.commands()
    assert command.kind == "pause" and command.payload["source"] == "console"
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/api/v1/health")


async def test_serve_console_refuses_an_open_host_without_a_token(tmp_path: Path) -> None:
    fill_journal(tmp_path / "bot.db")
    # The config refuses it already when enabled (tests/unit/console); this is the last
    # line of defence, whatever settings the daemon is handed.
    settings = settings_for(f"sqlite:///{tmp_path / 'bot.db'}", host="0.0.0.0", enabled=False)
    with pytest.raises(ConsoleSetupError, match="is not loopback"):
        await serve_console(
            settings,
            settings_now=lambda: settings,
            status=lambda: None,
            clock=SteppedClock(datetime(2026, 5, 3, tzinfo=UTC)),
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
