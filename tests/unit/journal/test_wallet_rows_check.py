"""The cross-wallet check of bench/many_wallets.py (`harness.many_wallets.wallet_rows`).

On a real SQLite journal written by journals scoped to two wallets, and one to a third:
the check counts each wallet's rows and names every row of a wallet it was not told about,
so a bench run that mixed wallets could not pass.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.journal import Journal
from harness.many_wallets import wallet_rows

A, B, C = ("0x" + c * 64 for c in "abc")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _write(url: str, wallet: str) -> None:
    journal = Journal.open(url, wallet=wallet)
    try:
        journal.record_intent("dca", wallet, "swap", "dca:1", {"n": 1}, at=T0)
        journal.set_state("dca", "last", "1", at=T0)
    finally:
        journal.close()


def test_rows_of_a_wallet_not_in_the_run_are_named(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    for wallet in (A, B, C):
        _write(url, wallet)  # the same strategy name and key in every wallet

    found = wallet_rows(url, {A, B, C})
    assert found.foreign == [] and found.duplicate_intents == 0
    assert found.rows["intents"] == {A: 1, B: 1, C: 1}
    assert found.rows["strategy_state"] == {A: 1, B: 1, C: 1}

    found = wallet_rows(url, {A, B})
    assert sorted(found.foreign) == [f"intents: 1 rows of {C}", f"strategy_state: 1 rows of {C}"]
