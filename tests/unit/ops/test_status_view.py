"""`bot status`'s reading: the wallet lock probe, the verdict, spend against caps, JSON."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.aptos.tokens import TokenBook
from bot.config import Settings
from bot.engine.wallet_lock import WalletLock
from bot.journal import Journal, OrderSnapshot
from bot.ops.status_file import DaemonStatus, StrategyStatus, status_path, write_status
from bot.ops.status_view import (
    LockState,
    judge,
    probe_lock,
    read_view,
    spend_lines,
)
from bot.paper.core.registry import PaperTokens

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WALLET = "0x" + "ab" * 32


@pytest.fixture(scope="module")
def book() -> TokenBook:
    return PaperTokens.from_token_list().book


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def daemon_status(**changes: object) -> DaemonStatus:
    values: dict[str, object] = {
        "pid": os.getpid(),
        "state": "running",
        "started_at": iso(NOW - timedelta(hours=2, minutes=5)),
        "updated_at": iso(NOW - timedelta(seconds=20)),
        "mode": "paper",
        "wallet": WALLET,
        "version": "0.1.0",
        "strategies": {
            "weekly-apt": StrategyStatus(ticks=12, errors=1, last_tick=iso(NOW), last_error="x")
        },
        "last_poll_at": iso(NOW - timedelta(seconds=30)),
        "last_poll_ok_at": iso(NOW - timedelta(seconds=30)),
        "apt_balance": "12.5",
    }
    values.update(changes)
    return DaemonStatus(**values)  # type: ignore[arg-type]


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def settings_for(tmp_path: Path, **extra: Any) -> Settings:
    daemon = {"lock_dir": str(tmp_path), **extra.pop("daemon", {})}  # the locks of this test
    return Settings(journal={"url": f"sqlite:///{tmp_path / 'bot.db'}"}, daemon=daemon, **extra)  # type: ignore[arg-type]


# --- the wallet lock --------------------------------------------------------------------


def test_a_lock_held_by_a_live_process_is_held_and_names_its_pid(tmp_path: Path) -> None:
    lock = WalletLock(tmp_path, WALLET)
    assert lock.try_acquire()
    try:
        probe = probe_lock(lock.path)
        assert probe.held is True and probe.pid == os.getpid()
    finally:
        lock.release()
    after = probe_lock(lock.path)
    assert after.exists and after.held is False
    assert lock.try_acquire()  # the probe left nothing behind
    lock.release()


def test_a_missing_lock_file_is_not_held_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "wallet-x.lock"
    assert probe_lock(path) == LockState(path, exists=False, held=False, pid=None)
    assert not path.exists()


def test_a_lock_naming_a_dead_pid_is_not_held_without_being_touched(tmp_path: Path) -> None:
    path = tmp_path / "wallet-x.lock"
    pid = dead_pid()
    path.write_text(f"{pid}\n")
    probe = probe_lock(path)
    assert probe.held is False and probe.pid == pid


# --- the verdict ------------------------------------------------------------------------


def held(pid: int | None = None) -> LockState:
    return LockState(Path("l"), exists=True, held=True, pid=pid or os.getpid())


def test_a_fresh_status_and_a_held_lock_are_healthy() -> None:
    assert judge(daemon_status(), held(), now=NOW, stale_after_seconds=180) == (
        True,
        os.getpid(),
        None,
    )


def test_a_status_older_than_three_heartbeats_is_stale() -> None:
    old = daemon_status(updated_at=iso(NOW - timedelta(seconds=181)))
    running, _, problem = judge(old, held(), now=NOW, stale_after_seconds=180)
    assert running and problem is not None and problem.startswith("stale: ")
    assert "181 s ago" in problem


def test_no_lock_holder_means_not_running_even_if_the_file_says_running() -> None:
    free = LockState(Path("l"), exists=True, held=False, pid=None)
    running, pid, problem = judge(daemon_status(), free, now=NOW, stale_after_seconds=180)
    assert (running, pid) == (False, None)
    assert problem == f"last status: running at {iso(NOW - timedelta(seconds=20))}"


def test_the_daemons_own_unhealthy_verdict_and_a_stopping_state_are_problems() -> None:
    sick = daemon_status(healthy=False, problem="job 'tick:weekly-apt' running for 300 s")
    assert judge(sick, held(), now=NOW, stale_after_seconds=180)[2] == (
        "job 'tick:weekly-apt' running for 300 s"
    )
    stopping = daemon_status(state="stopping")
    assert judge(stopping, held(), now=NOW, stale_after_seconds=180)[2] == "the daemon is stopping"


def test_a_status_file_of_another_pid_than_the_lock_holder_is_a_problem() -> None:
    _, _, problem = judge(daemon_status(pid=1), held(), now=NOW, stale_after_seconds=180)
    assert problem == f"the status file is from pid 1, not the running pid {os.getpid()}"


def test_a_dry_run_takes_no_lock_so_its_pid_decides() -> None:
    free = LockState(Path("l"), exists=True, held=False, pid=None)
    alive = daemon_status(dry_run=True)
    assert judge(alive, free, now=NOW, stale_after_seconds=180)[0] is True
    gone = daemon_status(dry_run=True, pid=dead_pid())
    assert judge(gone, None, now=NOW, stale_after_seconds=180)[0] is False


# --- spend against caps (the risk check's count, from a real journal) ---------------------


def test_spend_counts_in_flight_and_confirmed_intents_of_the_day_per_scope(
    tmp_path: Path, book: TokenBook
) -> None:
    usdc = book.find("USDC").address
    settings = settings_for(
        tmp_path,
        risk={"daily_spend_caps": {"USDC": Decimal(100)}},
        strategies=[
            {
                "name": "weekly-apt",
                "plugin": "recurring_dca",
                "schedule": {"interval_seconds": 60},
                "budget": {usdc: Decimal(40)},
            }
        ],
    )
    with Journal.open(settings.journal.url) as journal:
        for key, strategy, amount, state, day in (
            ("a", "weekly-apt", "25", "confirmed", NOW),
            ("b", "weekly-apt", "5.5", "unknown", NOW),
            ("c", "dip", "10", "sent", NOW),
            ("d", "dip", "99", "failed", NOW),  # failed: nothing spent
            ("e", "dip", "7", "confirmed", NOW - timedelta(days=1)),  # yesterday
        ):
            intent = journal.record_intent(
                strategy,
                WALLET,
                "swap",
                key,
                {"spend_token": usdc, "spend_amount": amount},
                at=day,
            )
            path = {"confirmed": ["sent"], "unknown": ["sent"], "sent": [], "failed": []}[state]
            for step in [*path, state]:
                journal.set_intent_state(intent.id, step, at=day)
        lines = spend_lines(settings, journal, book, WALLET, NOW.date())
    assert [(x.scope, x.token, x.spent, x.cap) for x in lines] == [
        ("all strategies", "USDC", Decimal("40.5"), Decimal(100)),
        ("weekly-apt", usdc, Decimal("30.5"), Decimal(40)),
    ]
    assert lines[0].to_json() == {
        "scope": "all strategies",
        "token": "USDC",
        "spent": "40.5",
        "cap": "100",
    }


def test_spend_is_unknown_without_a_journal_or_for_a_symbol_not_in_the_list(
    tmp_path: Path, book: TokenBook
) -> None:
    settings = settings_for(tmp_path, risk={"daily_spend_caps": {"NOPE": Decimal(1)}})
    assert spend_lines(settings, None, book, WALLET, NOW.date())[0].spent is None
    with Journal.open(settings.journal.url) as journal:
        assert spend_lines(settings, journal, book, WALLET, NOW.date())[0].spent is None


# --- the whole view ---------------------------------------------------------------------


JSON_KEYS = {
    "clock",
    "market_now",
    "running",
    "healthy",
    "problem",
    "pid",
    "state",
    "mode",
    "wallet",
    "version",
    "dry_run",
    "started_at",
    "updated_at",
    "uptime_seconds",
    "status_age_seconds",
    "stale_after_seconds",
    "strategies",
    "errors",
    "last_poll_at",
    "last_poll_ok_at",
    "open_orders",
    "apt_balance",
    "spend_day",
    "spend_today",
    "status_file",
    "lock_file",
    "journal_problem",
}


def test_a_running_daemon_is_shown_with_orders_strategies_and_gas(
    tmp_path: Path, book: TokenBook
) -> None:
    settings = settings_for(tmp_path, daemon={"heartbeat_seconds": 30}, paper={"clock": "real"})
    with Journal.open(settings.journal.url) as journal:
        for order_id, status in (("1", "active"), ("2", "filled"), ("3", "partially_filled")):
            snapshot = OrderSnapshot(
                kind="limit",
                order_id=order_id,
                wallet=WALLET,
                from_token=book.find("USDC").address,
                to_token=book.find("APT").address,
                status=status,
                amount_total=Decimal(10),
            )
            journal.upsert_order(snapshot, observed_at=NOW, source="test")
    write_status(status_path(settings.journal.url), daemon_status())
    lock = WalletLock(tmp_path, WALLET)
    assert lock.try_acquire()
    try:
        view = read_view(settings, now=NOW, tokens=book)
    finally:
        lock.release()
    assert view.exit_code == 0
    data = view.to_json()
    assert set(data) == JSON_KEYS
    assert data["uptime_seconds"] == 7500 and data["status_age_seconds"] == 20
    assert data["stale_after_seconds"] == 90  # 3 × the configured heartbeat
    assert data["open_orders"] == 2
    assert data["apt_balance"] == "12.5"
    assert data["strategies"]["weekly-apt"]["ticks"] == 12
    text = "\n".join(view.lines())
    assert text.startswith(f"bot running (pid {os.getpid()}, up 2h 5m, paper mode, wallet ")
    assert "health      ok" in text
    assert "weekly-apt" in text and "12 ticks" in text and "(last error: x)" in text
    assert "open orders 2 (journal)" in text
    assert "APT (gas)   12.5" in text


def test_nothing_running_and_no_journal_is_exit_1_with_the_reason(
    tmp_path: Path, book: TokenBook
) -> None:
    view = read_view(settings_for(tmp_path), now=NOW, tokens=book)
    assert view.exit_code == 1 and not view.running
    assert view.lines()[0] == "bot not running (no status file)"
    assert view.to_json()["journal_problem"].startswith("no journal at ")
    assert not (tmp_path / "bot.db").exists()  # status never creates the journal


def test_a_paper_world_on_a_simulated_clock_counts_spend_for_its_own_day(
    tmp_path: Path, book: TokenBook
) -> None:
    settings = settings_for(
        tmp_path, paper={"clock": "stepped"}, risk={"daily_spend_caps": {"USDC": Decimal(5)}}
    )
    Journal.open(settings.journal.url).close()
    simulated = datetime(2026, 1, 7, 3, 0, tzinfo=UTC)
    write_status(
        status_path(settings.journal.url),
        daemon_status(strategies={"dca": StrategyStatus(ticks=1, last_tick=iso(simulated))}),
    )
    view = read_view(settings, now=NOW, tokens=book)
    assert view.to_json()["spend_day"] == "2026-01-07"
    assert "  spend       2026-01-07 (UTC day), against the caps" in view.lines()
