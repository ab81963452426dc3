"""A daemon whose database connection drops stops trading until it holds the lock again.

A real `bot run` (subprocess, embedded paper world on the real clock, a strategy that
swaps every second) on a PostgreSQL journal of the throwaway cluster. The test ends the
daemon's advisory-lock connection from the server side (`pg_terminate_backend`) and takes
the wallet's advisory lock itself at once (a second process, as another daemon of the
wallet would): the first daemon pauses (status says so, nothing is written or sent for
its strategies), stays paused while the lock is held elsewhere (naming the holder by its
`daemons` row, which it leaves alone), and once the lock is
free takes it again, reconciles the journal as at start-up (a `planned` intent left by
"the other daemon" is settled as never sent) and trades again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from bot.aptos.address import Address
from bot.chain import new_key_file
from bot.journal import DaemonView, IntentView, Journal
from bot.journal.advisory import advisory_key

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
"""Test plugin: a swap of 1 USDC into APT every second."""

from decimal import Decimal
from typing import ClassVar

from bot.engine.strategy import Action, Context, Strategy, StrategyParams, Swap


class Nibble(Strategy):
    """Swap 1 USDC into APT at every tick (one key per second)."""

    name: ClassVar[str] = "nibble"
    Params: ClassVar[type[StrategyParams]] = StrategyParams

    async def on_tick(self, ctx: Context) -> list[Action]:
        second = ctx.now.strftime("%Y%m%dT%H%M%S")
        return [Swap(key=f"{self.instance}:{second}", sell="USDC", buy="APT",
                     sell_amount=Decimal(1))]
'''


def wait_for(done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def daemon_files(tmp_path: Path, pg_database_url: str) -> tuple[Path, str]:
    """The daemon's config (PostgreSQL journal, embedded paper world) and its wallet."""
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "nibble.py").write_text(PLUGIN)
    wallet = str(new_key_file(tmp_path / "wallet.key"))
    config = tmp_path / "bot.toml"
    config.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "{pg_database_url}"\n'
        f'[wallet]\nkey_file = "{tmp_path / "wallet.key"}"\n'
        f'[scheduler]\nstrategy_dirs = ["{tmp_path / "plugins"}"]\n'
        "tracker_interval_seconds = 1\ncommands_interval_seconds = 1\n"
        "[daemon]\nheartbeat_seconds = 1\n"
        f'lock_dir = "{tmp_path / "locks"}"\nstatus_file = "{tmp_path / "status.json"}"\n'
        f'[paper]\nclock = "real"\napi_keys = ["k"]\n'
        f'snapshot_file = "{tmp_path / "world.pickle"}"\n'
        "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
        f'funding = [{{ wallet = "{wallet}", token = "USDC", amount = "500" }}, '
        f'{{ wallet = "{wallet}", token = "APT", amount = "5" }}]\n'
        '[[strategies]]\nname = "nibble"\nplugin = "nibble"\n'
        "schedule = { interval_seconds = 1 }\n"
    )
    return config, wallet


@pytest.fixture
def run_daemon(tmp_path: Path) -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(config: Path) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "--log-format", "json", "-c", str(config), "run"],
            stdout=(tmp_path / "out.txt").open("w"),
            stderr=(tmp_path / "err.txt").open("w"),
            text=True,
            env=env,
            cwd=ROOT,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def status(folder: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((folder / "status.json").read_text())
    except (OSError, ValueError):
        return {}
    return data


def problem(folder: Path) -> str:
    return str(status(folder).get("problem") or "")


def log_events(folder: Path, event: str) -> list[dict[str, Any]]:
    lines = (folder / "err.txt").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.startswith("{")]
    return [r for r in records if r.get("event") == event]


def test_a_daemon_that_loses_its_lock_pauses_until_it_holds_it_again_then_reconciles(
    tmp_path: Path,
    pg_database_url: str,
    daemon_files: tuple[Path, str],
    run_daemon: Callable[[Path], subprocess.Popen[str]],
) -> None:
    config, wallet = daemon_files
    long = Address.parse(wallet).long
    key = advisory_key(f"wallet:{long}")

    def intents() -> list[IntentView]:
        with Journal.open(pg_database_url, readonly=True) as journal:
            return [i for i in journal.intents() if i.strategy == "nibble"]

    daemon = run_daemon(config)
    wait_for(lambda: status(tmp_path).get("state") == "running", "the daemon to run")
    wait_for(lambda: any(i.state == "confirmed" for i in intents()), "a first swap")
    assert problem(tmp_path) == ""

    admin = create_engine(pg_database_url, isolation_level="AUTOCOMMIT")
    rival = admin.connect()  # another daemon of the wallet, on another machine
    try:
        with admin.connect() as conn:  # the server ends the daemon's lock connection
            ended = conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND ((classid::bigint << 32) | objid::bigint) = :key"
                ),
                {"key": key},
            ).scalar()
        assert ended is True
        # Waits for the server to let the lock go, then holds it (the daemon only ever
        # tries without waiting, at its next heartbeat).
        rival.execute(text("SET lock_timeout = '10s'"))
        rival.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})

        wait_for(lambda: "wallet lock lost" in problem(tmp_path), "the daemon to pause")
        assert status(tmp_path).get("healthy") is False
        which = f"(advisory lock 'wallet:{long}' in "
        wait_for(lambda: which in problem(tmp_path), "which lock")
        assert problem(tmp_path).endswith(" held by another session)")
        with Journal.open(pg_database_url, wallet=wallet) as journal:  # the rival's heartbeat
            now = datetime.now(UTC)
            journal.record_daemon(
                DaemonView(
                    wallet=long,
                    host="host-b",
                    pid=77,
                    mode="paper",
                    state="running",
                    health="ok",
                    version="0",
                    strategies=1,
                    heartbeat_seconds=1,
                    started_at=now,
                    beat_at=now,
                    last_tick_at=None,
                )
            )
        wait_for(lambda: "held by host-b pid 77" in problem(tmp_path), "who holds it")
        time.sleep(1.5)  # a tick in flight when the lock went may still land its swap
        before = {(i.id, i.state) for i in intents()}
        # Meanwhile "the other daemon" left an intent it never sent (it then died).
        with Journal.open(pg_database_url, wallet=wallet) as journal:
            left = journal.record_intent(
                "other",
                wallet,
                "swap",
                "other:left-planned",
                {"sell": "USDC", "buy": "APT", "sell_amount": "1"},
                at=datetime.now(UTC),
            )
        time.sleep(4)  # four heartbeats and ticks: nothing for this wallet is written or sent
        assert {(i.id, i.state) for i in intents()} == before
        assert "wallet lock lost" in problem(tmp_path) and daemon.poll() is None
        assert len(log_events(tmp_path, "wallet_lock.lost")) == 1
        assert not log_events(tmp_path, "wallet_lock.regained")
        with Journal.open(pg_database_url, readonly=True) as journal:
            assert [(r.host, r.pid) for r in journal.daemons()] == [("host-b", 77)]
    finally:
        rival.close()  # the other daemon stops: its session ends, the lock is free
        admin.dispose()

    wait_for(lambda: bool(log_events(tmp_path, "wallet_lock.regained")), "the lock again", 60)
    with Journal.open(pg_database_url, readonly=True) as journal:
        settled = journal.intent(left.id)
    assert settled is not None and settled.state == "failed"  # reconciled as at start-up
    assert "never sent" in str(settled.error)
    wait_for(lambda: problem(tmp_path) == "", "the status to clear")
    known = {i.id for i in intents()}
    wait_for(
        lambda: any(i.state == "confirmed" and i.id not in known for i in intents()),
        "a swap after the lock was held again",
    )
    assert len(log_events(tmp_path, "wallet_lock.lost")) == 1
    with Journal.open(pg_database_url, readonly=True) as journal:  # its row is its own again
        wait_for(lambda: [r.pid for r in journal.daemons()] == [daemon.pid], "its row")
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(timeout=30) == 0
