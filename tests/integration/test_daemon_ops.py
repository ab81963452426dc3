"""`bot run` as systemd runs it: the notify protocol, the watchdog, SIGHUP reloads.

Each test runs the real daemon as a subprocess on an embedded paper world, with
`$NOTIFY_SOCKET` naming a datagram socket the test binds (abstract namespace) and a small
`$WATCHDOG_USEC`. A user plugin in a strategy folder blocks the event loop (`time.sleep`)
or hangs (`await asyncio.sleep`) when its trigger file appears.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bot.chain import new_key_file
from bot.journal import Journal

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
"""Test plugin: nothing, or trouble when its trigger file appears."""

import asyncio
import time
from pathlib import Path

from bot.engine.strategy import Action, Context, Strategy, StrategyParams


class BlockerParams(StrategyParams):
    trigger: str
    label: str = ""


class Blocker(Strategy):
    """`block N` in the trigger file blocks the loop N seconds; `hang N` awaits N seconds."""

    name = "blocker"
    Params = BlockerParams

    async def on_tick(self, ctx: Context) -> list[Action]:
        trigger = Path(self.params.trigger)
        if trigger.exists():
            how, seconds = trigger.read_text().split()
            trigger.unlink()
            if how == "block":
                time.sleep(float(seconds))
            else:
                await asyncio.sleep(float(seconds))
        return []
'''


@dataclass
class Inbox:
    """The test's end of `$NOTIFY_SOCKET`: every datagram with its arrival time."""

    sock: socket.socket
    address: str
    messages: list[tuple[float, str]] = field(default_factory=list)

    def texts(self) -> list[str]:
        return [text for _, text in self.messages]

    def wait_for(self, done: Callable[[list[str]], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not done(self.texts()):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; received {self.texts()[-12:]}")
            self.receive(0.1)

    def receive(self, wait: float) -> None:
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(4096)
        except TimeoutError:
            return
        self.messages.append((time.monotonic(), data.decode()))

    def drain(self, quiet: float = 0.3) -> None:
        count = -1
        while count != len(self.messages):
            count = len(self.messages)
            self.receive(quiet)

    def times_of(self, text: str, after: float = 0.0) -> list[float]:
        return [t for t, m in self.messages if m == text and t >= after]


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    name = f"bot-daemon-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        yield Inbox(sock, "@" + name)


@dataclass
class Setup:
    folder: Path
    config: Path
    wallet: str

    def write(self, strategies: dict[str, str], *, clock: str, extra: str = "") -> None:
        entries = "".join(
            f'\n[[strategies]]\nname = "{name}"\nplugin = "blocker"\n'
            f"schedule = {{ interval_seconds = {60 if clock == 'accelerated' else 1} }}\n"
            f'params = {{ trigger = "{self.folder / ("trigger-" + name)}", label = "{label}" }}\n'
            for name, label in strategies.items()
        )
        speed = "speed = 60.0\n" if clock == "accelerated" else ""
        self.config.write_text(
            f'[journal]\nurl = "sqlite:///{self.folder / "bot.db"}"\n'
            f'[wallet]\nkey_file = "{self.folder / "wallet.key"}"\n'
            f'[scheduler]\nstrategy_dirs = ["{self.folder / "plugins"}"]\n'
            "tracker_interval_seconds = 2\n"
            "[daemon]\nheartbeat_seconds = 1\nwatchdog_stall_seconds = 2\n"
            f'lock_dir = "{self.folder / "locks"}"\n'
            f'[paper]\nclock = "{clock}"\n{speed}api_keys = ["k"]\n'
            "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
            f'funding = [{{ wallet = "{self.wallet}", token = "APT", amount = "3" }}]\n'
            + extra
            + entries
        )

    def trigger(self, name: str, how: str) -> None:
        (self.folder / f"trigger-{name}").write_text(how)

    def status(self) -> dict[str, Any]:
        path = self.folder / "status.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def wait_status(self, done: Callable[[dict[str, Any]], bool], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while not done(self.status()):
            if time.monotonic() > deadline:
                raise AssertionError(f"status file never got there: {self.status()}")
            time.sleep(0.1)


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "blocker.py").write_text(PLUGIN)
    wallet = str(new_key_file(tmp_path / "wallet.key"))
    return Setup(tmp_path, tmp_path / "bot.toml", wallet)


@pytest.fixture
def start_bot(setup: Setup, inbox: Inbox) -> Iterator[Callable[[int], subprocess.Popen[str]]]:
    processes: list[subprocess.Popen[str]] = []

    def start(watchdog_usec: int) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
        env |= {"NOTIFY_SOCKET": inbox.address, "WATCHDOG_USEC": str(watchdog_usec)}
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "--log-format", "json", "-c", str(setup.config), "run"],
            stdout=(setup.folder / "out.txt").open("w"),
            stderr=(setup.folder / "err.txt").open("w"),
            text=True,
            env=env,
            cwd=ROOT,
        )
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def log_events(setup: Setup, event: str) -> list[dict[str, Any]]:
    lines = (setup.folder / "err.txt").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.startswith("{")]
    return [r for r in records if r.get("event") == event]


def watchdogs_after_ready(texts: list[str], count: int) -> bool:
    ready = next((i for i, t in enumerate(texts) if t.startswith("READY=1")), None)
    return ready is not None and texts[ready:].count("WATCHDOG=1") >= count


def test_systemd_hears_ready_status_watchdog_in_order_then_stopping(
    setup: Setup, inbox: Inbox, start_bot: Callable[[int], subprocess.Popen[str]]
) -> None:
    setup.write({"a": ""}, clock="real")
    process = start_bot(500_000)  # WATCHDOG=1 every 0.25 s
    inbox.wait_for(
        lambda texts: (
            watchdogs_after_ready(texts, 4)
            and any(t.startswith("STATUS=running") and "none yet" not in t for t in texts)
        )
    )
    stop(process)
    inbox.drain()
    texts = inbox.texts()

    ready = next(i for i, t in enumerate(texts) if t.startswith("READY=1"))
    assert texts[ready] == "READY=1\nSTATUS=running: 1 strategy, 0 open orders, last tick none yet"
    assert "WATCHDOG=1" not in texts[:ready]  # nothing is vouched for before start-up ends
    assert any(t.startswith("STATUS=starting") for t in texts[:ready])
    running = [t for t in texts[ready + 1 :] if t.startswith("STATUS=running: 1 strategy")]
    assert any("last tick" in t and "none yet" not in t for t in running), running
    stopping = texts.index("STOPPING=1")
    assert stopping > ready and "WATCHDOG=1" not in texts[stopping:]
    assert texts[-1].startswith("STATUS=stopped")
    assert setup.status()["state"] == "stopped"
    # Its heartbeat row in the journal (`bot status --all`) says so too.
    with Journal.open(f"sqlite:///{setup.folder / 'bot.db'}", readonly=True) as journal:
        (row,) = journal.daemons()
    assert (row.wallet, row.state, row.strategies, row.pid) == (
        setup.wallet,
        "stopped",
        1,
        setup.status()["pid"],
    )
    # JSON logs: nothing on stdout, the console's lines are `console` events of the log.
    assert (setup.folder / "out.txt").read_text() == ""
    assert log_events(setup, "console")[-1]["text"] == "bot stopped"


def test_watchdog_goes_quiet_while_the_loop_is_blocked_or_a_job_hangs(
    setup: Setup, inbox: Inbox, start_bot: Callable[[int], subprocess.Popen[str]]
) -> None:
    setup.write({"a": ""}, clock="real")
    process = start_bot(400_000)  # WATCHDOG=1 every 0.2 s while healthy
    inbox.wait_for(lambda texts: watchdogs_after_ready(texts, 3))

    # time.sleep in a strategy: the event loop is blocked, nothing at all is sent.
    blocked_at = time.monotonic()
    setup.trigger("a", "block 3")
    inbox.wait_for(lambda _: len(inbox.times_of("WATCHDOG=1", blocked_at + 3.5)) >= 3)
    beats = inbox.times_of("WATCHDOG=1", blocked_at)
    assert max(b - a for a, b in itertools.pairwise(beats)) >= 2.5

    # A tick awaiting forever: the loop turns (STATUS lines go on) but the job is stuck.
    hung_at = time.monotonic()
    setup.trigger("a", "hang 5")
    inbox.wait_for(lambda texts: any("unhealthy (job strategy:a running" in t for t in texts))
    inbox.wait_for(lambda _: len(inbox.times_of("WATCHDOG=1", hung_at + 5.5)) >= 3)
    beats = inbox.times_of("WATCHDOG=1", hung_at)
    gap, (quiet_from, quiet_to) = max((b - a, (a, b)) for a, b in itertools.pairwise(beats))
    assert gap >= 2.0
    during = [m for t, m in inbox.messages if quiet_from < t < quiet_to]
    assert any(m.startswith("STATUS=running, unhealthy") for m in during)
    stop(process)
    # Said in the log once the loop runs again (a loaded machine may add short stalls).
    blocked = log_events(setup, "event_loop.blocked")
    assert any(b["seconds"] >= 2.5 for b in blocked), blocked
    unhealthy = log_events(setup, "watchdog.unhealthy")
    assert any(u["problem"].startswith("job strategy:a running for") for u in unhealthy)


@pytest.mark.parametrize("clock", ["real", "accelerated"])
def test_sighup_applies_a_changed_config_and_refuses_a_bad_one(
    clock: str, setup: Setup, inbox: Inbox, start_bot: Callable[[int], subprocess.Popen[str]]
) -> None:
    setup.write({"a": "", "b": ""}, clock=clock)
    process = start_bot(2_000_000)
    setup.wait_status(lambda s: s.get("state") == "running" and len(s["strategies"]) == 2)

    # a removed, b re-parameterised, c added; [api] changed (needs a restart).
    setup.write({"b": "v2", "c": ""}, clock=clock, extra="[api]\nread_timeout_seconds = 7.0\n")
    process.send_signal(signal.SIGHUP)
    setup.wait_status(
        lambda s: sorted(s["strategies"]) == ["b", "c"] and s["strategies"]["c"]["ticks"] >= 1
    )
    assert setup.status()["reloaded_at"] is not None
    [applied] = log_events(setup, "reload.applied")
    assert applied["summary"] == "added c; removed a; rebuilt b; 0 unchanged"
    [restart] = log_events(setup, "reload.restart_needed")
    assert restart["message"] == "restart needed for [api]"
    inbox.wait_for(ready_after_reload)

    # A plugin that does not exist, then an invalid value: refused, one line each.
    setup.write({"b": "v2", "c": "", "d": ""}, clock=clock)
    config = setup.config.read_text().replace(
        'name = "d"\nplugin = "blocker"', 'name = "d"\nplugin = "nope"'
    )
    setup.config.write_text(config)
    process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while len(log_events(setup, "reload.refused")) < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    setup.write({"b": "v2"}, clock=clock, extra="")
    setup.config.write_text(
        setup.config.read_text().replace("heartbeat_seconds = 1", "heartbeat_seconds = 0")
    )
    process.send_signal(signal.SIGHUP)
    while len(log_events(setup, "reload.refused")) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    plugin, value = log_events(setup, "reload.refused")
    assert "'nope'" in plugin["reason"] and "\n" not in plugin["reason"]
    assert value["reason"].startswith("daemon.heartbeat_seconds:") and "(got 0)" in value["reason"]
    ticks = setup.status()["strategies"]["c"]["ticks"]
    setup.wait_status(lambda s: s["strategies"].get("c", {}).get("ticks", 0) > ticks)
    assert sorted(setup.status()["strategies"]) == ["b", "c"]  # the old config runs on
    stop(process)


def ready_after_reload(texts: list[str]) -> bool:
    reload = next((i for i, t in enumerate(texts) if t.startswith("RELOADING=1")), None)
    return reload is not None and any(t.startswith("READY=1") for t in texts[reload:])
