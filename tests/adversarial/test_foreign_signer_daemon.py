"""A second signer on the wallet stops the running daemon's trading, and `bot status` says so.

`bot run` as a subprocess on an embedded paper world whose node lets another signer take
the sequence number of the bot's first transaction (`[paper.node] foreign_first = 1`). A
rebalancer swaps at once; the daemon must detect the foreign signer, sign nothing more,
keep running, report `foreign signer detected` in its status, and stop cleanly.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bot.chain import new_key_file
from bot.journal import Journal

ROOT = Path(__file__).resolve().parents[2]


def write_config(folder: Path, wallet: str) -> Path:
    config = folder / "bot.toml"
    config.write_text(
        f'[journal]\nurl = "sqlite:///{folder / "bot.db"}"\n'
        f'[wallet]\nkey_file = "{folder / "wallet.key"}"\n'
        f'[daemon]\nheartbeat_seconds = 1\nlock_dir = "{folder / "locks"}"\n'
        '[paper]\nclock = "accelerated"\nspeed = 60.0\napi_keys = ["k"]\n'
        "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
        f'funding = [{{ wallet = "{wallet}", token = "APT", amount = "2" }}, '
        f'{{ wallet = "{wallet}", token = "USDC", amount = "1000" }}]\n'
        "[paper.node]\nforeign_first = 1\n"
        '\n[[strategies]]\nname = "mix"\nplugin = "rebalancer"\n'
        "schedule = { interval_seconds = 60 }\n"
        '[strategies.params]\nweights = { APT = "0.6", USDC = "0.4" }\n'
        'band_percent = "5"\nquote_token = "USDC"\nmin_trade = "20"\n'
        'cooldown = "1 minute"\nslippage = "1"\n'
    )
    return config


def status(folder: Path) -> dict[str, Any]:
    path = folder / "status.json"
    try:
        return json.loads(path.read_text()) if path.exists() else {}
    except ValueError:  # caught mid-write
        return {}


def test_the_daemon_pauses_on_a_foreign_signer_and_says_so(tmp_path: Path) -> None:
    wallet = str(new_key_file(tmp_path / "wallet.key"))
    config = write_config(tmp_path, wallet)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    err = (tmp_path / "err.txt").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "--log-format", "json", "-c", str(config), "run"],
        stdout=(tmp_path / "out.txt").open("w"),
        stderr=err,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while "foreign signer detected" not in str(status(tmp_path).get("problem")):
            assert process.poll() is None, (tmp_path / "err.txt").read_text()[-3000:]
            assert time.monotonic() < deadline, status(tmp_path)
            time.sleep(0.2)
        time.sleep(3)  # a few more ticks: they must send nothing
        assert process.poll() is None  # still running, paused
        report = status(tmp_path)
        assert report["healthy"] is False and report["state"] == "running"
        shown = subprocess.run(
            [sys.executable, "-m", "bot", "-c", str(config), "status"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=60,
        )
        assert shown.returncode == 1 and "foreign signer detected" in shown.stdout, shown
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        err.close()
    journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        transactions = journal.transactions()
        assert [t.state for t in transactions] == ["expired"]  # ours never ran; no re-sign
        intents = journal.intents()
        assert intents and all(i.state != "confirmed" for i in intents)
    finally:
        journal.close()
    logs = [json.loads(line) for line in (tmp_path / "err.txt").read_text().splitlines() if line]
    assert [r for r in logs if r.get("event") == "daemon.paused"]
