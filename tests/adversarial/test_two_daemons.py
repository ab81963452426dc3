"""One wallet, one trader: two daemons with two journals on one machine cannot both trade.

Two configs share the wallet's key and the paper world (`bot paper serve`), and differ in
their journal (and so their status file). The wallet lock is keyed by the wallet's address
in one folder per user (`[daemon].lock_dir`, here a temporary folder both configs name, as
the default would be for both), not beside the journal: the second `bot run` refuses to
start with one line and exit code 2, before it reconciles or trades anything (so does a
live `bot once`); `bot cancel`
of the first daemon's config still hands its request to that daemon. Once the first has
stopped, the second starts.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.chain import new_key_file
from bot.journal import Journal
from tests.support.cli import ROOT, clean_env, run_bot
from tests.support.paper_server import PAPER_KEY, paper_serve, write_config

STRATEGY = """
[[strategies]]
name = "dca"
plugin = "recurring_dca"
schedule = { interval_seconds = 1 }
params = { from_token = "USDC", to_token = "APT", amount_per_order = "5", \
interval = "1 day", orders = 2 }
"""


def daemon_config(folder: Path, url: str, key: Path, locks: Path) -> Path:
    """A config of its own journal (in `folder`), on the shared world, key and lock folder."""
    folder.mkdir()
    config = folder / "bot.toml"
    config.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "sqlite:///{folder / "bot.db"}"\n'
        f'[wallet]\nkey_file = "{key}"\n'
        f'[daemon]\nheartbeat_seconds = 1\nlock_dir = "{locks}"\n'
        "[scheduler]\ncommands_interval_seconds = 1\ntracker_interval_seconds = 1\n"
        f'[paper]\nurl = "{url}"\napi_keys = ["{PAPER_KEY}"]\n'
        "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n" + STRATEGY
    )
    return config


def status(folder: Path) -> dict[str, Any]:
    path = folder / "status.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data


def wait_for(done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def intents(folder: Path) -> list[Any]:
    with Journal.open(f"sqlite:///{folder / 'bot.db'}", readonly=True) as journal:
        return journal.intents()


@pytest.fixture
def daemons() -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(config: Path) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "-c", str(config), "run"],
            stdout=(config.parent / "out.txt").open("w"),
            stderr=(config.parent / "err.txt").open("w"),
            text=True,
            env=clean_env(),
            cwd=ROOT,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_a_second_daemon_of_the_wallet_with_another_journal_refuses_to_start(
    tmp_path: Path, daemons: Callable[[Path], subprocess.Popen[str]]
) -> None:
    key = tmp_path / "wallet.key"
    wallet = str(new_key_file(key))
    locks = tmp_path / "locks"
    funding = (
        f'funding = [{{ wallet = "{wallet}", token = "USDC", amount = "500" }}, '
        f'{{ wallet = "{wallet}", token = "APT", amount = "5" }}]\n'
    )
    with paper_serve(write_config(tmp_path / "world.toml", funding)) as (url, _world):
        first = daemon_config(tmp_path / "a", url, key, locks)
        second = daemon_config(tmp_path / "b", url, key, locks)
        running = daemons(first)
        wait_for(lambda: status(first.parent).get("state") == "running", "the first daemon")
        wait_for(lambda: any(i.state == "confirmed" for i in intents(first.parent)), "a trade")

        refused = run_bot("-c", str(second), "run", timeout=60)

        lock = locks / f"wallet-{wallet.removeprefix('0x').rjust(64, '0')}.lock"
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.splitlines() == [
            f"bot: error: another process trades {wallet} (lock {lock})"
        ]
        assert "Traceback" not in refused.stdout + refused.stderr
        once = run_bot("-c", str(second), "once", timeout=60)  # one live tick: the same
        assert (once.returncode, once.stderr) == (2, refused.stderr)
        assert intents(second.parent) == []  # nothing reconciled, nothing traded
        assert status(second.parent) == {}
        assert running.poll() is None  # the first one is not disturbed

        # A second process of the first config still hands its cancel to that daemon.
        [order] = [i for i in intents(first.parent) if i.state == "confirmed"]
        assert order.order_id is not None
        cancelled = run_bot("-c", str(first), "cancel", order.order_id, timeout=90)
        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout.strip().endswith("(through the daemon)")

        stop(running)
        again = daemons(second)  # the wallet is free again: the second one starts
        wait_for(lambda: status(second.parent).get("state") == "running", "the second daemon")
        stop(again)
    assert [p.name for p in locks.iterdir()] == [lock.name]  # one lock for the wallet
    assert not [*tmp_path.glob("[ab]/wallet-*.lock")]  # none beside either journal
