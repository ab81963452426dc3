"""Issue 22, item 2, as a user types it: `bot once` before the wallet is funded, then after.

It used to end `unknown` (account_not_found) and then `failed (already done under this
key)` on every tick for good. Now the first attempt fails as "not sent" (nothing was
signed: nothing to reconcile), and once the wallet is funded the same key runs again and
the DCA is created.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.journal import Journal
from tests.support.cli import ROOT, run_bot
from tests.support.paper_server import paper_serve


def test_an_unfunded_attempt_fails_not_sent_and_the_funded_retry_creates_the_dca(
    tmp_path: Path,
) -> None:
    def bot(*args: str) -> str:
        result = run_bot("-c", "config.toml", *args, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    config = tmp_path / "config.toml"
    shutil.copy(ROOT / "config.example.toml", config)
    wallet = run_bot("keys", "new", "--out", "wallet.key", cwd=tmp_path).stdout.strip()
    text = config.read_text().replace("[wallet]\n", '[wallet]\nkey_file = "wallet.key"\n')
    config.write_text(text.replace("[daemon]\n", f'[daemon]\nlock_dir = "{tmp_path / "locks"}"\n'))
    with paper_serve(config) as (url, _process):
        config.write_text(config.read_text().replace('\nurl = ""\n', f'\nurl = "{url}"\n'))

        unfunded = bot("once")
        [line] = unfunded.splitlines()
        assert line.startswith("weekly-apt: create DCA: 25 USDC per order → APT")
        assert "→ failed (not sent: " in line and "fund it first" in line, line
        with Journal.open(f"sqlite:///{tmp_path / 'data' / 'bot.db'}", readonly=True) as journal:
            [intent] = journal.intents()
            assert (intent.state, intent.tx_hash) == ("failed", None)
            assert (intent.error or "").startswith("not sent: ")
        # Nothing in flight: `bot reconcile` has nothing to settle.
        assert bot("reconcile").splitlines()[:-1] == []

        bot("paper", "fund", wallet, "USDC", "1000")
        bot("paper", "fund", wallet, "APT", "10")
        funded = bot("once")
        [line] = funded.splitlines()
        assert line.startswith("weekly-apt: create DCA") and "→ confirmed order 0x" in line, line
        again = bot("once")  # the live DCA: nothing more to do
        assert again.strip() == ""

    with Journal.open(f"sqlite:///{tmp_path / 'data' / 'bot.db'}", readonly=True) as journal:
        retired, fresh = journal.intents()
        assert (retired.id, retired.state) == (intent.id, "failed")
        assert retired.idempotency_key == f"weekly-apt:dca:0~failed-{intent.id}"
        assert (fresh.idempotency_key, fresh.state) == ("weekly-apt:dca:0", "confirmed")
        assert fresh.order_id and fresh.tx_hash
        [order] = journal.orders(kind="dca")
        assert (order.order_id, order.intent_id, order.status) == (
            fresh.order_id,
            fresh.id,
            "active",
        )
