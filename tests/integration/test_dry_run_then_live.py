"""Issue 22, item 1, as a user types it: `bot once --dry-run` twice, then `bot once`.

A dry run used to write the strategies' saved state into the journal: the ladder it only
showed was then "already placed" for the second dry run and for the live run. Now both
dry runs show the same five actions, the live run places all five, and the dry runs leave
the journal's strategy state as they found it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from bot.journal import Journal
from tests.support.cli import ROOT, run_bot

EXAMPLE_WALLET = "0x" + "5a" * 32
WALLET = "0x" + "7b" * 32
LADDER = """
[[strategies]]
name = "apt-ladder"
plugin = "limit_ladder"
schedule = { interval_seconds = 300 }
[strategies.params]
sell_token = "USDC"
buy_token = "APT"
rungs = 4
spacing_percent = "2"
amount_per_rung = "40"
redrift_percent = "5"
expiry = "1 day"
"""


def test_dry_runs_then_live_show_and_place_the_same_actions(tmp_path: Path) -> None:
    def bot(*args: str) -> str:
        result = run_bot(*args, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        return result.stdout

    # The README's path: copy the example config, make a key, fund it in the paper world.
    shutil.copy(ROOT / "config.example.toml", tmp_path / "config.toml")
    wallet = bot("keys", "new", "--out", "wallet.key").strip()
    config = tmp_path / "config.toml"
    text = config.read_text().replace(EXAMPLE_WALLET, wallet)
    text = text.replace("[wallet]\n", '[wallet]\nkey_file = "wallet.key"\n')
    text = text.replace("[daemon]\n", f'[daemon]\nlock_dir = "{tmp_path / "locks"}"\n')
    config.write_text(text + LADDER)

    def shown(out: str) -> list[str]:
        return sorted(re.sub(r"[≤≥] \S+", "≤ R", line) for line in out.splitlines())

    first = bot("-c", "config.toml", "once", "--dry-run")
    lines = [line for line in first.splitlines() if line.startswith("[dry run] ")]
    assert len(lines) == 5, first
    assert sum("weekly-apt: create DCA" in line for line in lines) == 1
    assert sum("apt-ladder: create limit" in line for line in lines) == 4
    second = bot("-c", "config.toml", "once", "--dry-run")
    assert shown(second) == shown(first)  # the same actions (the market may have moved)
    with Journal.open("sqlite:///" + str(tmp_path / "data" / "bot.db"), readonly=True) as journal:
        assert journal.states("apt-ladder") == journal.states("weekly-apt") == {}
        assert journal.intents() == []

    live = bot("-c", "config.toml", "once")
    placed = [line for line in live.splitlines() if "→ confirmed order " in line]
    assert len(placed) == 5, live
    assert sum(line.startswith("apt-ladder: create limit") for line in placed) == 4
    journal_url = "sqlite:///" + str(tmp_path / "data" / "bot.db")
    with Journal.open(journal_url, readonly=True, wallet=wallet) as journal:  # its state
        assert sorted(i.idempotency_key for i in journal.intents(states=["confirmed"])) == [
            *(f"apt-ladder:ladder:0:{k}" for k in range(1, 5)),
            "weekly-apt:dca:0",
        ]
        assert journal.states("apt-ladder")["generation"] == 0


def test_the_configured_price_convention_reaches_what_a_tick_prints(tmp_path: Path) -> None:
    """`[display].price_quote` once: the ladder's limits read in the chosen unit."""
    shutil.copy(ROOT / "config.example.toml", tmp_path / "config.toml")
    config = tmp_path / "config.toml"
    config.write_text(config.read_text().replace("[wallet]\n", f'[wallet]\naddress = "{WALLET}"\n'))
    shown = {}
    for quote in ("USDC", "APT"):
        text = re.sub(r"price_quote = \[[^\]]*\]", f'price_quote = ["{quote}"]', config.read_text())
        config.write_text(text if LADDER in text else text + LADDER)
        result = run_bot("-c", "config.toml", "once", "--dry-run", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        shown[quote] = [
            line for line in result.stdout.splitlines() if "apt-ladder: create limit" in line
        ]
    assert len(shown["USDC"]) == len(shown["APT"]) == 4
    assert all(re.search(r"at ≤ [0-9.]+ USDC per APT,", line) for line in shown["USDC"])
    assert all(re.search(r"at ≥ [0-9.]+ APT per USDC,", line) for line in shown["APT"])
