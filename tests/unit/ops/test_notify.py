"""sd_notify over a real AF_UNIX datagram socket: paths, the abstract namespace, no-ops."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.ops.notify import Notifier, watchdog_interval


@pytest.fixture
def short_dir() -> Iterator[Path]:
    # AF_UNIX paths are limited to 108 bytes; pytest's tmp_path can be longer.
    directory = Path("/tmp") / f"bot-notify-{uuid.uuid4().hex[:8]}"
    directory.mkdir()
    yield directory
    for child in directory.iterdir():
        child.unlink()
    directory.rmdir()


def listen(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(2)
    return sock


def test_messages_reach_a_socket_path_in_order(short_dir: Path) -> None:
    path = str(short_dir / "notify.sock")
    with listen(path) as sock:
        notifier = Notifier.from_environ({"NOTIFY_SOCKET": path})
        assert notifier.enabled
        assert notifier.ready("running: 2 strategies")
        assert notifier.watchdog()
        assert notifier.stopping()
        received = [sock.recv(4096).decode() for _ in range(3)]
        notifier.close()
    assert received == ["READY=1\nSTATUS=running: 2 strategies", "WATCHDOG=1", "STOPPING=1"]


def test_the_abstract_namespace_form_is_understood() -> None:
    name = f"bot-test-{uuid.uuid4().hex}"
    with listen("\0" + name) as sock:
        notifier = Notifier(f"@{name}")
        assert notifier.status("starting")
        assert sock.recv(4096) == b"STATUS=starting"
        notifier.close()


def test_reloading_carries_the_monotonic_time(short_dir: Path) -> None:
    path = str(short_dir / "n.sock")
    with listen(path) as sock:
        notifier = Notifier(path)
        notifier.reloading()
        lines = sock.recv(4096).decode().splitlines()
        notifier.close()
    assert lines[0] == "RELOADING=1"
    assert lines[1].startswith("MONOTONIC_USEC=") and int(lines[1].split("=")[1]) > 0


def test_status_is_one_line_and_bounded(short_dir: Path) -> None:
    path = str(short_dir / "n.sock")
    with listen(path) as sock:
        notifier = Notifier(path)
        notifier.status("two\nlines " + "x" * 500)
        message = sock.recv(4096).decode()
        notifier.close()
    assert "\n" not in message and message.startswith("STATUS=two lines x")
    assert len(message) <= len("STATUS=") + 200


def test_without_notify_socket_nothing_is_sent_and_nothing_fails() -> None:
    notifier = Notifier.from_environ({})
    assert not notifier.enabled
    assert notifier.ready() is False and notifier.watchdog() is False


def test_a_missing_socket_never_raises(short_dir: Path) -> None:
    notifier = Notifier(str(short_dir / "nobody-listens.sock"))
    assert notifier.watchdog() is False
    assert notifier.watchdog() is False


def test_watchdog_interval_is_half_the_timeout_and_only_for_our_pid() -> None:
    pid = os.getpid()
    assert watchdog_interval({"WATCHDOG_USEC": "120000000"}, pid) == 60.0
    assert watchdog_interval({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(pid)}, pid) == 0.5
    assert watchdog_interval({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"}, pid) is None
    assert watchdog_interval({}, pid) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}, pid) is None
    assert watchdog_interval({"WATCHDOG_USEC": "soon"}, pid) is None
