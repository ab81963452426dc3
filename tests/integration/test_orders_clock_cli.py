"""`bot orders` on an embedded paper world's stepped clock: ages on the clock the orders
were made on, not the wall clock; prices in the configured convention."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.chain import new_key_file
from bot.clock import SteppedClock
from bot.config import load_settings
from bot.engine.actions import CreateLimit
from bot.ops.status_file import DaemonStatus, status_path, write_status
from tests.support.cli import run_bot

START = datetime(2026, 3, 1, tzinfo=UTC)


def write_config(tmp_path: Path, extra: str = "") -> Path:
    key_file = tmp_path / "wallet.key"
    wallet = str(new_key_file(key_file))
    config = tmp_path / "bot.toml"
    config.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        f'[daemon]\nlock_dir = "{tmp_path / "locks"}"\n'
        f'[wallet]\nkey_file = "{key_file}"\n'
        '[paper]\nclock = "stepped"\nstart = "2026-03-01T00:00:00Z"\norder_style = "escrow"\n'
        f'funding = [{{ wallet = "{wallet}", token = "USDC", amount = "100" }}]\n' + extra
    )
    return config


async def trade(config: Path) -> dict[str, str]:
    """Two limit orders at the paper start, one filling; then two paper hours of polls."""
    from bot.app.runtime import Runtime
    from bot.engine.tracker import OrderTracker

    runtime = await Runtime.open(load_settings(config))
    async with runtime:
        assert runtime.executor is not None and runtime.wallet is not None
        assert isinstance(runtime.clock, SteppedClock) and runtime.clock.now() == START
        ids = {}
        for key, rate in (("waits", "1"), ("fills", "0.05")):  # ≤ 1 and ≤ 20 USDC per APT
            action = CreateLimit(
                key=key,
                sell="USDC",
                buy="APT",
                amount=Decimal(20),
                rate=Decimal(rate),
                expiry_value=1,
                expiry_period="day",
            )
            result = await runtime.executor.execute("ladder", action)
            assert result.state == "confirmed" and result.order_id, result
            ids[key] = result.order_id
        tracker = OrderTracker(runtime.client, runtime.journal, runtime.clock, runtime.wallet)
        for _ in range(12):
            runtime.clock.advance(timedelta(minutes=10))
            await tracker.poll()
        runtime.save_world()
    return ids


@pytest.fixture
def traded(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    config = write_config(tmp_path)
    return config, asyncio.run(trade(config))


def bot(config: Path, *args: str) -> str:
    result = run_bot("-c", str(config), *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_ages_and_expiries_are_on_the_paper_clock(traded: tuple[Path, dict[str, str]]) -> None:
    config, ids = traded
    rows = {r["id"]: r for r in json.loads(bot(config, "orders", "--json"))}
    # Made at the paper start, last recorded two paper hours later (whatever the wall
    # clock says: the world's stepped clock never moves by itself).
    assert {r["age_seconds"] for r in rows.values()} == {7200}
    waiting, filled = rows[ids["waits"]], rows[ids["fills"]]
    assert filled["status"] == "filled" and waiting["status"] == "active"
    assert waiting["expire_at"] == "2026-03-02T00:00:00+00:00"
    assert waiting["price_unit"] == "USDC per APT" and waiting["limit_price"] == "≤ 1"
    assert filled["limit_price"] == "≤ 20" and filled["average_price"] is not None
    spent, received = Decimal(filled["amount_spent"]), Decimal(filled["to_amount_received"])
    assert abs(Decimal(filled["average_price"]) - spent / received) < Decimal("0.0001")

    table = bot(config, "orders").splitlines()
    assert table[0].split() == [
        "ID", "KIND", "PAIR", "PROGRESS", "LIMIT", "(USDC", "per", "APT)",
        "AVG", "PRICE", "(USDC", "per", "APT)", "STATUS", "AGE",
    ]  # fmt: skip
    assert all(line.split()[-1] == "2h" for line in table[1:3])
    assert table[-1] == "times on the paper world's stepped clock, now 2026-03-01T02:00:00+00:00"

    shown = bot(config, "orders", "show", ids["waits"])
    assert "expires        2026-03-02T00:00:00+00:00 (in 22h)" in shown
    assert "created        2026-03-01T00:00:00+00:00 (2h ago)" in shown
    assert "limit price    buy APT at ≤ 1 USDC per APT" in shown


def test_a_running_daemons_clock_counts_from_its_status_file(
    traded: tuple[Path, dict[str, str]],
) -> None:
    config, _ids = traded
    settings = load_settings(config)
    later = START + timedelta(hours=5)
    write_status(
        status_path(settings.journal.url, settings.daemon.status_file),
        DaemonStatus(
            pid=1,
            state="running",
            started_at=START.isoformat(),
            updated_at=START.isoformat(),
            mode="paper",
            wallet=None,
            version="test",
            market_now=later.isoformat(),
            clock="stepped",
        ),
    )
    rows = json.loads(bot(config, "orders", "--json"))
    assert {r["age_seconds"] for r in rows} == {5 * 3600}


def test_a_filled_order_shows_its_fills_with_times_and_cannot_be_cancelled(
    traded: tuple[Path, dict[str, str]],
) -> None:
    config, ids = traded
    shown = bot(config, "orders", "show", ids["fills"])
    lines = shown.splitlines()
    fills = [line.strip() for line in lines[lines.index("fills: 2") + 1 :]]
    fill_lines = [line for line in fills if " filled " in line]
    assert fill_lines, shown
    for line in fill_lines:
        when = datetime.fromisoformat(line.split()[0])
        assert START <= when <= START + timedelta(hours=2)  # paper time, not wall time
        assert " USDC → " in line and line.endswith(" USDC per APT")
    refused = run_bot("-c", str(config), "cancel", ids["fills"])
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("cannot be cancelled: it is already filled")
    cancelled = run_bot("-c", str(config), "cancel", ids["waits"])
    assert cancelled.returncode == 0, cancelled.stderr
    again = run_bot("-c", str(config), "cancel", ids["waits"])
    assert again.returncode == 0 and "is already cancelled: nothing to cancel" in again.stdout
    assert "HTTP" not in again.stdout + again.stderr
