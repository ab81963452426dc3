"""Starting in bad weather: the provider and node down at start, then back.

A real `bot run` is started against a served paper world that is not there yet (its port
refuses connections). The daemon must not exit: one line says it starts anyway, `bot
status` says `degraded`, and once `bot paper serve` comes up on that port the daemon
reconciles, runs and trades.
"""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.chain import new_key_file
from bot.journal import Journal
from tests.support.cli import ROOT, clean_env, run_bot
from tests.support.loopback import closed_port
from tests.support.paper_server import write_config

STRATEGY = """
[[strategies]]
name = "weekly-apt"
plugin = "recurring_dca"
schedule = { interval_seconds = 3600 }
params = { from_token = "USDC", to_token = "APT", amount_per_order = "25", \
interval = "1 day", orders = 7 }
"""


@contextmanager
def process(*args: str) -> Iterator[subprocess.Popen[str]]:
    child = subprocess.Popen(
        [sys.executable, "-m", "bot", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=clean_env(),
    )
    try:
        yield child
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def wait_for_line(child: subprocess.Popen[str], needle: str, timeout: float) -> str:
    assert child.stderr is not None
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline and child.poll() is None:
        ready, _, _ = select.select([child.stderr], [], [], 0.2)
        if ready:
            line = child.stderr.readline()
            seen.append(line)
            if needle in line:
                return line
    raise AssertionError(f"no line with {needle!r} (exit {child.poll()}): {''.join(seen)[-3000:]}")


def eventually(check: object, timeout: float) -> subprocess.CompletedProcess[str]:
    deadline = time.monotonic() + timeout
    while True:
        result = check()  # type: ignore[operator]
        if result.returncode == 0 or time.monotonic() > deadline:
            return result  # type: ignore[no-any-return]
        time.sleep(0.5)


def test_a_daemon_started_while_the_services_are_down_waits_degraded_then_trades(
    tmp_path: Path,
) -> None:
    port = closed_port()
    key = tmp_path / "wallet.key"
    wallet = str(new_key_file(key))
    funding = "".join(
        f'[[paper.funding]]\nwallet = "{wallet}"\ntoken = "{token}"\namount = "{amount}"\n'
        for token, amount in (("APT", "10"), ("USDC", "500"))
    )
    server = write_config(tmp_path / "server.toml", "\n" + funding)
    journal = f"sqlite:///{tmp_path / 'bot.db'}"
    config = write_config(
        tmp_path / "bot.toml",
        f'url = "http://127.0.0.1:{port}"\n\n[wallet]\nkey_file = "{key}"\n\n'
        f'[journal]\nurl = "{journal}"\n\n[daemon]\nlock_dir = "{tmp_path / "locks"}"\n'
        "heartbeat_seconds = 1\n" + STRATEGY,
    )

    def status() -> subprocess.CompletedProcess[str]:
        return run_bot("-c", str(config), "status", timeout=60)

    with process("-c", str(config), "run") as daemon:
        line = wait_for_line(daemon, "starting anyway, retrying with back-off", timeout=60)
        assert "opening the provider and the node" in line and line[-1] == "\n"
        degraded = status()
        assert degraded.returncode == 1, degraded.stdout + degraded.stderr
        assert "degraded" in degraded.stdout, degraded.stdout

        with process("-c", str(server), "paper", "serve", "--port", str(port)):
            healthy = eventually(status, timeout=90)
            assert healthy.returncode == 0, healthy.stdout + healthy.stderr
            deadline = time.monotonic() + 60
            intents: list[object] = []
            while not intents and time.monotonic() < deadline:
                with Journal.open(journal, readonly=True) as reader:
                    intents = list(reader.intents())
                time.sleep(0.5)
            assert intents, "the daemon never traded after the services came back"
        assert daemon.poll() is None  # it kept running throughout
