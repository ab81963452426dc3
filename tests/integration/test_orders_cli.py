"""`bot orders`, `bot orders show` and `bot cancel`, run as subprocesses on a paper world."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from bot.chain import account_address, load_private_key, new_key_file
from bot.clock import RealClock
from bot.config import load_settings
from bot.engine.actions import CreateLimit
from bot.engine.commands import process_commands
from bot.engine.wallet_lock import WalletLock, lock_dir
from bot.journal import Journal
from tests.support.paper_server import PAPER_KEY, ROOT, paper_serve


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, str]]:
    key_file = tmp_path / "wallet.key"
    wallet = str(new_key_file(key_file))
    config = tmp_path / "bot.toml"
    config.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        f'[daemon]\nlock_dir = "{tmp_path / "locks"}"\n'
        f'[wallet]\nkey_file = "{key_file}"\n'
        "[paper]\n"
        'clock = "accelerated"\nspeed = 60.0\norder_style = "onchain"\n'
        f'api_keys = ["{PAPER_KEY}"]\n'
        "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
        f'funding = [{{ wallet = "{wallet}", token = "APT", amount = "10" }}]\n'
    )
    with paper_serve(config) as (url, _process):
        config.write_text(config.read_text().replace("[paper]\n", f'[paper]\nurl = "{url}"\n'))
        yield config, key_file, wallet


def bot(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    return subprocess.run(
        [sys.executable, "-m", "bot", "-c", str(config), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


async def create_order(config: Path, rate: Decimal = Decimal(1000), key: str = "l-1") -> str:
    from bot.app.runtime import Runtime

    runtime = await Runtime.open(load_settings(config))
    async with runtime:
        assert runtime.executor is not None
        result = await runtime.executor.execute(
            "s1", CreateLimit(key=key, sell="APT", buy="USDC", amount=Decimal(1), rate=rate)
        )
    assert result.state == "confirmed" and result.order_id, result
    return result.order_id


def test_list_show_and_cancel(setup: tuple[Path, Path, str]) -> None:
    config, _key, _wallet = setup
    order_id = asyncio.run(create_order(config))
    listed = bot(config, "orders", "--status", "active")
    assert listed.returncode == 0, listed.stderr
    assert order_id[:12] in listed.stdout and "APT→USDC" in listed.stdout
    # Prices in the configured convention, the unit in the header; progress with its unit.
    header, row = listed.stdout.splitlines()[:2]
    assert "LIMIT (USDC per APT)" in header and "AVG PRICE (USDC per APT)" in header
    assert "≥ 1000" in row and "0/1 APT" in row
    shown = bot(config, "orders", "show", order_id[:16])
    assert shown.returncode == 0, shown.stderr
    assert "- → active  (create)" in shown.stdout
    assert "limit price    sell APT at ≥ 1000 USDC per APT" in shown.stdout
    assert "expires " in shown.stdout
    cancelled = bot(config, "cancel", order_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.strip() == f"cancelled limit order {order_id}"
    with Journal.open(load_settings(config).journal.url, readonly=True) as journal:
        [intent] = [i for i in journal.intents() if i.kind == "cancel_limit"]
        assert intent.state == "confirmed" and intent.tx_hash  # a signed withdraw
        cancelled_order = journal.order("limit", order_id)
        assert cancelled_order is not None and cancelled_order.status == "cancelled"  # polled
    # Cancelling it again: one line, exit 0, nothing sent.
    again = bot(config, "cancel", order_id[:16])
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == (
        f"limit order {order_id} is already cancelled: nothing to cancel"
    )
    assert "HTTP" not in again.stdout + again.stderr
    with Journal.open(load_settings(config).journal.url, readonly=True) as journal:
        assert len([i for i in journal.intents() if i.kind == "cancel_limit"]) == 1
    assert bot(config, "orders", "--status", "bogus").returncode == 2
    missing = bot(config, "cancel", "0xnope")
    assert missing.returncode == 2
    assert (
        missing.stderr.strip()
        == "bot: error: no order '0xnope' in the journal (bot orders lists them)"
    )
    shown_missing = bot(config, "orders", "show", "0xnope")
    assert shown_missing.returncode == 2 and "--kind" not in shown_missing.stderr


def test_an_order_that_filled_since_the_journal_saw_it_cannot_be_cancelled(
    setup: tuple[Path, Path, str],
) -> None:
    config, _key, _wallet = setup
    # At least 0.001 USDC per APT: it fills at once in the world, the journal says active.
    filled = asyncio.run(create_order(config, Decimal("0.001"), "l-fills"))
    with Journal.open(load_settings(config).journal.url, readonly=True) as journal:
        before = journal.order("limit", filled)
        assert before is not None and before.status == "active"
    time.sleep(1.5)  # a paper minute and more: the world's keeper runs
    refused = bot(config, "cancel", filled)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (
        f"bot: error: limit order {filled} cannot be cancelled: it is already filled"
    )
    assert "HTTP" not in refused.stdout + refused.stderr
    with Journal.open(load_settings(config).journal.url, readonly=True) as journal:
        after = journal.order("limit", filled)
        assert after is not None and after.status == "filled"
        assert not [i for i in journal.intents() if i.kind == "cancel_limit"]  # none sent
    shown = bot(config, "orders", "show", filled)
    assert shown.returncode == 0, shown.stderr
    [fill] = [line for line in shown.stdout.splitlines() if " filled " in line and "#" in line]
    # A fill with its time, its amounts with their tokens and its price in the convention.
    assert fill.strip().startswith("20") and " APT → " in fill and "USDC per APT" in fill
    assert "average price  " in shown.stdout and "USDC per APT" in shown.stdout


def test_cancel_while_the_daemon_holds_the_wallet_goes_through_the_daemon(
    setup: tuple[Path, Path, str],
) -> None:
    config, key_file, wallet = setup
    settings = load_settings(config)
    order_id = asyncio.run(create_order(config))
    assert str(account_address(load_private_key(key_file, None))) == wallet
    lock = WalletLock(lock_dir(settings.daemon.lock_dir), wallet)
    assert lock.try_acquire()  # this test process plays the running daemon
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
        waiting = subprocess.Popen(
            [sys.executable, "-m", "bot", "-c", str(config), "cancel", order_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )

        async def serve_commands() -> int:
            from bot.app.runtime import Runtime

            runtime = await Runtime.open(settings)
            async with runtime:
                assert runtime.executor is not None
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    if await process_commands(runtime.journal, runtime.executor, RealClock()):
                        return 1
                    await asyncio.sleep(0.2)
            return 0

        assert asyncio.run(serve_commands()) == 1
        out, err = waiting.communicate(timeout=60)
    finally:
        lock.release()
    assert waiting.returncode == 0, err
    assert out.strip() == f"cancelled limit order {order_id} (through the daemon)"


def test_reconcile_settles_a_stranded_intent(setup: tuple[Path, Path, str]) -> None:
    config, _key, wallet = setup
    settings = load_settings(config)
    with Journal.open(settings.journal.url) as journal:
        now = RealClock().now()
        stranded = journal.record_intent(
            "s1",
            wallet,
            "swap",
            "sw-lost",
            {
                "type": "swap",
                "sell": "APT",
                "buy": "USDC",
                "spend_token": "APT",
                "spend_amount": Decimal(1),
            },
            at=now,
        )
        journal.set_intent_state(stranded.id, "sent", at=now)
    result = bot(config, "reconcile")
    assert result.returncode == 0, result.stderr
    assert f"intent {stranded.id}: failed" in result.stdout  # no transaction was ever signed
    assert "orders polled" in result.stdout.splitlines()[-1]
