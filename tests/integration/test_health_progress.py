"""Issue 22, "health means progress", as a user meets it: a paper daemon in a temporary
folder, typed commands only.

One strategy is refused on every tick (its daily budget is smaller than one order): after
`[daemon].stuck_ticks` ticks `bot status` says `degraded` naming it and why, and the
heartbeat carries it. Another strategy on a weekly cron ticks once at start (no week of
silence) and `bot status` shows its next tick. `bot strategies pause` through the running
daemon silences the stuck one (healthy again), and the pause outlives the daemon.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.clock import parse_utc
from tests.support.cli import clean_env, run_bot
from tests.support.user_folder import new_user_folder, wait_for

SPEED = 600  # the hourly strategies tick about every 6 s
STRATEGIES = """
[[strategies]]
name = "capped"
plugin = "recurring_dca"
schedule = { interval_seconds = 1200 }
budget = { USDC = "10" }
[strategies.params]
from_token = "USDC"
to_token = "APT"
amount_per_order = "25"
orders = 2
interval = "1 hour"

[[strategies]]
name = "weekly"
plugin = "recurring_dca"
schedule = { cron = "0 12 * * 1" }
[strategies.params]
from_token = "USDC"
to_token = "APT"
amount_per_order = "5"
orders = 2
interval = "1 day"
"""


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    new_user_folder(
        tmp_path,
        paper=f'clock = "accelerated"\nspeed = {SPEED}',
        daemon="heartbeat_seconds = 1\nstuck_ticks = 2",
        strategies=STRATEGIES,
    )
    yield tmp_path


def bot(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_bot("-c", "config.toml", *args, cwd=folder)


def status(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(bot(folder, "status", "--json").stdout)
    return data


def test_a_stuck_strategy_degrades_the_daemon_and_a_pause_silences_it(folder: Path) -> None:
    daemon = subprocess.Popen(
        [sys.executable, "-m", "bot", "-c", "config.toml", "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(BOT_LOG__LEVEL="debug"),  # the console format logs info only at debug
        cwd=folder,
    )
    try:

        def stuck() -> bool:
            try:
                return bool(status(folder)["strategies"]["capped"]["stuck"])
            except (ValueError, KeyError, TypeError):
                return False

        wait_for(stuck, "the capped strategy to be stuck", timeout=45)
        data = status(folder)
        assert data["healthy"] is False
        problem = str(data["problem"])
        assert problem.startswith("degraded: strategy capped stuck: no progress for "), problem
        assert "refused: strategy budget" in problem
        weekly = data["strategies"]["weekly"]
        assert weekly["last_tick"] is not None  # ticked at start, not next Monday
        assert weekly["stuck"] is None and weekly["actions"] == 1
        assert weekly["next_tick"].endswith("T12:00:00Z")  # the cron's slot, a Monday
        assert parse_utc(weekly["next_tick"]).weekday() == 0
        assert data["clock"] == f"accelerated ×{SPEED}"

        human = bot(folder, "status")
        assert human.returncode == 1
        assert "health      degraded: strategy capped stuck" in human.stdout
        assert "STUCK: no progress for" in human.stdout
        assert "(times on the paper world's accelerated ×600 clock, now " in human.stdout
        assert "next 2026-" in human.stdout and " (in " in human.stdout

        paused = bot(folder, "strategies", "pause", "capped")
        assert paused.returncode == 0, paused.stderr
        assert paused.stdout.strip() == "capped paused (by the running daemon)"
        wait_for(lambda: status(folder)["healthy"] is True, "health ok once it is paused")
        data = status(folder)
        assert data["strategies"]["capped"]["paused"] is True
        assert "PAUSED: bot strategies resume capped" in bot(folder, "status").stdout
        listed = bot(folder, "strategies", "list").stdout
        assert "(paused: bot strategies resume capped)" in listed
    finally:
        daemon.send_signal(signal.SIGTERM)
        out, err = daemon.communicate(timeout=60)
    assert daemon.returncode == 0, err
    assert "capped: refused create DCA" in out
    heartbeats = [line for line in err.splitlines() if "heartbeat" in line and "stuck" in line]
    assert heartbeats, "no heartbeat named the stuck strategy"
    assert "capped" in heartbeats[-1] or "capped" in heartbeats[0]

    # The pause is the journal's: without a daemon it is read and changed here.
    again = bot(folder, "strategies", "pause", "capped")
    assert again.stdout.strip() == "capped was already paused"
    resumed = bot(folder, "strategies", "resume", "capped")
    assert resumed.stdout.strip() == (
        "capped resumed (no daemon runs now: it applies when the daemon starts)"
    )
    unknown = bot(folder, "strategies", "pause", "nope")
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (
        "bot: error: no configured strategy named 'nope' (configured: capped, weekly)"
    )


def test_a_strategy_removed_while_paused_can_still_be_resumed(folder: Path) -> None:
    assert bot(folder, "strategies", "pause", "weekly").stdout.startswith("weekly paused")
    config = folder / "config.toml"
    text = config.read_text()
    config.write_text(text[: text.index('[[strategies]]\nname = "weekly"')])
    assert "(paused" not in bot(folder, "strategies", "list").stdout
    resumed = bot(folder, "strategies", "resume", "weekly")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("weekly resumed")
    again = bot(folder, "strategies", "resume", "weekly")
    assert again.returncode == 2 and "no configured strategy named 'weekly'" in again.stderr
