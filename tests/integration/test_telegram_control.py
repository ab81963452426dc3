"""`bot run` commanded from Telegram: the real daemon, a paper world, a fake Bot API.

The daemon runs as a subprocess on an embedded paper world (accelerated clock: an hour
of market every 6 s, the DCA ticking every real second) with `[alerts].control_enabled`;
the Bot API is a fake on 127.0.0.1 (`tests.support.fake_telegram`) that the test feeds
messages and taps. Every command is answered from the daemon's own knowledge, controls
act only after a tap and are journaled with who tapped, an unknown chat hears nothing,
and Telegram hanging or down never stops the strategies ticking nor delays shutdown.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.journal import Journal
from bot.journal.views import OrderView
from tests.support.cli import clean_env
from tests.support.fake_telegram import TOKEN, FakeBotApi, fake_bot_api
from tests.support.user_folder import HOURLY_DCA, new_user_folder, wait_for

ME, STRANGER = 1001, 4242
DCA = HOURLY_DCA.replace("interval_seconds = 3600", "interval_seconds = 600").replace(
    "orders = 2", "orders = 6"
)


@dataclass
class Bot:
    """The user's folder, the fake Bot API and the running daemon."""

    path: Path
    api: FakeBotApi
    process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot", "--log-format", "json", "-c", "config.toml", "run"],
            stdout=(self.path / "out.txt").open("w"),
            stderr=(self.path / "err.txt").open("w"),
            text=True,
            env=clean_env(BOT_ALERTS__TELEGRAM_BOT_TOKEN=TOKEN),
            cwd=self.path,
        )

    def stop(self, within: float = 30.0) -> float:
        """SIGTERM; how long the daemon took to exit (exit code 0 asserted)."""
        assert self.process is not None
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=within) == 0, self.err()
        return time.monotonic() - started

    def err(self) -> str:
        return (self.path / "err.txt").read_text()

    def logs(self, event: str) -> list[dict[str, Any]]:
        records = [json.loads(line) for line in self.err().splitlines() if line.startswith("{")]
        return [r for r in records if r.get("event") == event]

    def status(self) -> dict[str, Any]:
        path = self.path / "data" / "status.json"
        try:
            data: dict[str, Any] = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return data

    def ticks(self) -> int:
        return int(self.status().get("strategies", {}).get("dca", {}).get("ticks", 0))

    def orders(self) -> list[OrderView]:
        try:
            with Journal.open(f"sqlite:///{self.path / 'data' / 'journal.db'}", readonly=True) as j:
                return j.orders(kind="dca")
        except Exception:  # not created yet
            return []

    def commands(self) -> list[Any]:
        with Journal.open(f"sqlite:///{self.path / 'data' / 'journal.db'}", readonly=True) as j:
            return [c for c in (j.command(i) for i in range(1, 50)) if c is not None]

    def ask(self, text: str, answer: str, what: str = "", timeout: float = 30.0) -> str:
        """Say `text` as the user; the first new reply containing `answer`."""
        seen = len(self.api.texts(ME))
        self.api.say(ME, text)
        found: list[str] = []

        def replied() -> bool:
            found[:] = [t for t in self.api.texts(ME)[seen:] if answer in t]
            return bool(found)

        wait_for(replied, what or f"a reply to {text} with {answer!r}", timeout)
        return found[0]

    def confirm(self, text: str, result: str) -> str:
        """Say a control, tap its Confirm button; the command's result message."""
        before = len(self.api.buttons())
        self.api.say(ME, text)
        wait_for(lambda: len(self.api.buttons()) >= before + 2, f"the buttons of {text}")
        seen = len(self.api.texts(ME))
        self.api.tap(ME, self.api.buttons()[-2], user_id=77, username="carol")
        found: list[str] = []

        def done() -> bool:
            found[:] = [t for t in self.api.texts(ME)[seen:] if t.startswith("command ")]
            return bool(found)

        wait_for(done, f"the result of {text}")
        assert result in found[0], found[0]
        return found[0]


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[Bot]:
    with fake_bot_api() as api:
        new_user_folder(
            tmp_path,
            paper='clock = "accelerated"\nspeed = 600',
            daemon="heartbeat_seconds = 1",
            strategies=DCA,
        )
        with (tmp_path / "config.toml").open("a") as config:
            config.write(
                f'\n[alerts]\ntelegram_chat_id = "{ME}"\ntelegram_api_url = "{api.url}"\n'
                f'control_enabled = true\ncontrol_chat_ids = ["{ME}"]\ncontrol_poll_seconds = 1\n'
            )
        running = Bot(tmp_path, api)
        try:
            yield running
        finally:
            if running.process is not None and running.process.poll() is None:
                running.process.kill()
                running.process.wait(timeout=10)


def test_every_command_from_the_phone(bot: Bot) -> None:
    bot.start()
    assert bot.ask("/status", "bot running").startswith("bot running (paper mode)")
    wait_for(lambda: any((o.amount_spent or 0) > 0 for o in bot.orders()), "a first slice")
    live = [o for o in bot.orders() if o.status in ("active", "partially_filled")]
    assert live
    order_id = live[0].order_id
    assert order_id in bot.ask("/orders", "open order")
    profit = bot.ask("/profit", "cost basis FIFO")
    assert profit.startswith("dca (") and "invested " in profit and "USDC" in profit
    assert "the last 2 days (UTC)" in bot.ask("/daily 2", "the last 2 days")
    balance = bot.ask("/balance", "wallet 0x")
    assert "APT: " in balance and "USDC: " in balance and "unknown" not in balance
    assert bot.ask("/pause ghost", "unknown strategy") == "unknown strategy 'ghost' (known: dca)"

    bot.api.say(STRANGER, "/status")
    bot.api.say(STRANGER, "/pause dca")

    bot.confirm("/pause dca", "done: dca paused")
    wait_for(lambda: bot.status().get("strategies", {}).get("dca", {}).get("paused"), "paused")
    bot.confirm(f"/cancel {order_id[:12]}", "done: confirmed")
    wait_for(
        lambda: any(o.order_id == order_id and o.status == "cancelled" for o in bot.orders()),
        "the order cancelled in the journal",
    )
    bot.confirm("/reconcile", "done: reconciled")
    bot.confirm("/resume dca", "done: dca resumed")
    bot.confirm("/stopentry", "done: entries stopped: paused dca")
    bot.stop()

    kinds = [(c.kind, c.state) for c in bot.commands()]
    assert kinds == [
        ("pause", "done"),
        ("cancel", "done"),
        ("reconcile", "done"),
        ("resume", "done"),
        ("stopentry", "done"),
    ]
    for command in bot.commands():
        assert command.payload["by"] == {
            "via": "telegram",
            "chat_id": str(ME),
            "user_id": 77,
            "username": "carol",
        }
    assert bot.api.texts(STRANGER) == []
    assert [e["chat_id"] for e in bot.logs("telegram.unknown_chat")] == [str(STRANGER)]
    everything = bot.err() + (bot.path / "out.txt").read_text()
    assert TOKEN not in everything and TOKEN.split(":")[1] not in everything
    assert all(TOKEN in p for p in bot.api.paths)  # the fake saw the real token, only it


def test_telegram_hanging_or_down_never_stops_trading(bot: Bot) -> None:
    bot.api.mode = "hang"  # from the start: every request held
    bot.start()
    wait_for(lambda: bot.ticks() >= 2, "ticks while Telegram hangs")
    first = bot.ticks()
    time.sleep(3)
    assert bot.ticks() >= first + 2

    bot.api.mode = "down"
    wait_for(lambda: bool(bot.logs("telegram.poll_failed")), "a failed poll logged")
    during = bot.ticks()
    time.sleep(3)
    assert bot.ticks() >= during + 2

    bot.api.mode = "ok"
    assert bot.ask("/status", "bot running", timeout=90).startswith("bot running")

    bot.api.mode = "hang"
    time.sleep(1.5)  # a poll is held by the fake now
    assert bot.stop(within=30) < 10  # shutdown does not wait for Telegram
    assert TOKEN not in bot.err()


def test_control_is_off_by_default_and_a_reload_turns_it_on(bot: Bot) -> None:
    config = bot.path / "config.toml"
    text = config.read_text()
    config.write_text(text.replace("control_enabled = true", "control_enabled = false"))
    bot.start()
    wait_for(lambda: bot.ticks() >= 2, "the daemon ticking")
    bot.api.say(ME, "/status")
    time.sleep(2)
    assert bot.api.polls == 0  # nobody asks Telegram for messages
    assert [t for t in bot.api.texts(ME) if not t.startswith("[")] == []  # alerts only

    config.write_text(text)  # control_enabled = true again
    assert bot.process is not None
    bot.process.send_signal(signal.SIGHUP)
    assert bot.ask("/status", "bot running").startswith("bot running")
    bot.stop()
