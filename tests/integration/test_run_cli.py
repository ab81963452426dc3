"""`bot run`, `bot once` and `bot strategies` as a user runs them (real subprocesses)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.journal import Journal
from tests.support.cli import clean_env
from tests.support.cli import run_bot as bot

ROOT = Path(__file__).resolve().parents[2]


def test_strategies_list_and_check() -> None:
    listed = bot("-c", "config.example.toml", "strategies", "list")
    assert listed.returncode == 0, listed.stderr
    for name in ("recurring_dca", "limit_ladder", "dip_buyer", "take_profit", "rebalancer"):
        assert name in listed.stdout
    checked = bot("-c", "config.example.toml", "strategies", "check", "weekly-apt")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("weekly-apt: OK (recurring_dca")


def test_a_bad_strategy_parameter_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    config.write_text(
        '[[strategies]]\nname = "x"\nplugin = "recurring_dca"\n'
        "schedule = { interval_seconds = 60 }\n"
        'params = { from_token = "USDC", to_token = "APT", '
        'amount_per_order = "-5", orders = 3, interval = "1 day" }\n'
    )
    result = bot("-c", str(config), "strategies", "check", "x")
    assert result.returncode == 2
    assert "strategy 'x' (recurring_dca): params.amount_per_order" in result.stderr


def test_once_dry_run_shows_and_sends_nothing(tmp_path: Path) -> None:
    from bot.chain import new_key_file

    key = tmp_path / "wallet.key"
    new_key_file(key)
    config = tmp_path / "bot.toml"
    example = (ROOT / "config.example.toml").read_text()
    config.write_text(
        example.replace("[wallet]\n", f'[wallet]\nkey_file = "{key}"\n').replace(
            'url = "sqlite:///data/bot.db"', f'url = "sqlite:///{tmp_path / "bot.db"}"'
        )
    )
    result = bot("-c", str(config), "once", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "[dry run] weekly-apt: create DCA: 25 USDC per order → APT" in result.stdout
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        assert journal.intents() == []  # nothing was even intended


def test_run_paper_demo_stops_cleanly_and_restarts_without_duplicates(tmp_path: Path) -> None:
    def run_for(seconds: float) -> str:
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "run", "--paper"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(BOT_DAEMON__LOCK_DIR=str(tmp_path / "locks")),
            cwd=tmp_path,
        )
        time.sleep(seconds)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert out.strip().splitlines()[-1] == "bot stopped"
        return out

    first = run_for(6)
    assert "demo-dca: create DCA" in first and "→ confirmed" in first
    second = run_for(4)
    assert "bot running" in second
    with Journal.open(f"sqlite:///{tmp_path / 'data' / 'paper-demo.db'}") as journal:
        keys = [(i.strategy, i.idempotency_key) for i in journal.intents()]
        dcas = [o for o in journal.orders(kind="dca") if o.status in ("active", "missing")]
    assert len(keys) == len(set(keys))  # every key once
    assert len(dcas) <= 1  # never two live DCAs for the one recurring strategy


@pytest.mark.parametrize("verb", [["once", "--dry-run", "--paper"], ["run", "--paper"]])
def test_paper_on_a_live_config_is_refused(tmp_path: Path, verb: list[str]) -> None:
    config = tmp_path / "live.toml"
    config.write_text(f'mode = "live"\n[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n')
    done = subprocess.run(
        [sys.executable, "-m", "bot", "-c", str(config), *verb],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("bot: error: --paper with a live config would record")
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "bot.db").exists()
