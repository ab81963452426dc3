"""Verbs that trade or settle a wallet see its daemon on another machine (PostgreSQL).

The daemon of the wallet is "elsewhere": this test holds the wallet's lock with another
lock folder (another machine's files) on the same PostgreSQL journal, as a daemon there
would. `bot reconcile`, `bot strategies pause` and `bot cancel` here find no file lock
held in their own folder; they must still see that the wallet is traded, from the
database's advisory lock, and neither settle, sign nor write the pause themselves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app.opening import wallet_lock
from bot.chain import new_key_file
from bot.config import load_settings
from bot.engine.pauses import paused_strategies
from bot.engine.wallet_lock import WalletLock
from bot.journal import CommandView, Journal
from tests.support.cli import clean_env, run_bot


@pytest.fixture
def elsewhere(tmp_path: Path, pg_database_url: str) -> Iterator[tuple[Path, str]]:
    """A config for this machine, and the wallet's lock held by "another machine"."""
    wallet = str(new_key_file(tmp_path / "wallet.key"))
    config = tmp_path / "bot.toml"
    config.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "{pg_database_url}"\n'
        f'[wallet]\nkey_file = "{tmp_path / "wallet.key"}"\n'
        f'[daemon]\nlock_dir = "{tmp_path / "here"}"\n'
        '[[strategies]]\nname = "dca"\nplugin = "recurring_dca"\n'
        "schedule = { interval_seconds = 3600 }\n"
        'params = { from_token = "USDC", to_token = "APT", amount_per_order = "5",'
        ' interval = "1 day", orders = 2 }\n'
    )
    with Journal.open(pg_database_url):  # migrated, as the daemon there left it
        pass
    other = WalletLock(tmp_path / "there", wallet, database=pg_database_url)
    assert other.try_acquire()
    try:
        yield config, wallet
    finally:
        other.release()


def test_the_lock_of_a_verb_includes_the_databases(elsewhere: tuple[Path, str]) -> None:
    config, wallet = elsewhere
    lock = wallet_lock(load_settings(config), wallet)
    assert not lock.try_acquire()  # the file here is free; the database's lock is not
    assert "advisory lock" in lock.blocked_by


def test_reconcile_here_refuses_while_a_daemon_elsewhere_holds_the_wallet(
    elsewhere: tuple[Path, str],
) -> None:
    config, _ = elsewhere
    result = run_bot("-c", str(config), "reconcile", env=clean_env())
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().endswith("the daemon holds this wallet and reconciles by itself")


def test_a_pause_here_is_carried_out_by_the_daemon_elsewhere(
    elsewhere: tuple[Path, str], pg_database_url: str
) -> None:
    config, wallet = elsewhere
    stop = threading.Event()
    taken: list[CommandView] = []

    def daemon_there() -> None:  # its command queue: take the pause, answer it
        with Journal.open(pg_database_url, wallet=wallet) as journal:
            while not stop.is_set():
                command = journal.take_command(at=datetime.now(UTC))
                if command is not None:
                    taken.append(command)
                    journal.finish_command(command.id, True, "dca paused", at=datetime.now(UTC))
                    return
                time.sleep(0.1)

    thread = threading.Thread(target=daemon_there)
    thread.start()
    try:
        result = run_bot("-c", str(config), "strategies", "pause", "dca", env=clean_env())
    finally:
        stop.set()
        thread.join(timeout=10)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "dca paused (by the running daemon)"
    assert [(c.kind, c.payload) for c in taken] == [("pause", {"strategy": "dca"})]
    with Journal.open(pg_database_url, wallet=wallet, readonly=True) as journal:
        assert paused_strategies(journal) == {}  # not written behind the daemon's back
