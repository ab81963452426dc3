"""The daemon's watch on its wallet lock (`bot.app.lock_watch`), with a fake lock.

The lock is lost, seen lost at the next question (a tick's or a heartbeat's), taken again
only when free and paced by the back-off, and trading resumes only after the journal was
reconciled under it. A database that does not answer counts as lost, and its hung
question is not asked again beside it.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.app.lock_watch import LOST_LINE, LockWatch, Pauses, holder
from bot.clock import SteppedClock
from bot.engine.wallet_lock import WalletLock
from bot.journal import DaemonView
from bot.ops.reload import ReloadGate
from bot.retry import Backoff

START = datetime(2026, 3, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32


class FakeLock:
    """A wallet lock whose database answers what the test says."""

    can_be_lost = True

    def __init__(self) -> None:
        self.held = True
        self.free = True
        self.asked = 0
        self.regains = 0
        self.hang = threading.Event()  # set: the next question hangs until `release` is set
        self.release = threading.Event()
        self.blocked_by = "advisory lock 'wallet:0xabab…' in postgresql://… held by another"

    def still_held(self) -> bool:
        self.asked += 1
        if self.hang.is_set():
            self.release.wait(5)
        return self.held

    def regain(self) -> bool:
        self.regains += 1
        if not self.held and self.free:
            self.held = True
        return self.held


class Rig:
    def __init__(self, *, timeout: float = 1.0) -> None:
        self.clock = SteppedClock(START)
        self.lock = FakeLock()
        self.changes: list[str | None] = []
        self.settled = 0
        self.settle_fails = False
        self.who: str | None = None
        self.gate = ReloadGate()
        self.watch = LockWatch(
            self.clock,
            self.gate,
            self.changes.append,
            holder=lambda: self.who,
            timeout_seconds=timeout,
            backoff=Backoff(10.0, 40.0, random.Random(1)),
        )
        self.watch.attach(self.lock, self.settle, heartbeat_seconds=10)

    async def settle(self) -> bool:
        if self.settle_fails:
            raise ConnectionError("provider down")
        self.settled += 1
        return True


async def test_a_lock_never_attached_is_never_lost() -> None:
    """SQLite (the file lock alone) or a dry run: nothing is asked, nothing pauses."""
    changes: list[str | None] = []
    watch = LockWatch(SteppedClock(START), ReloadGate(), changes.append)
    assert await watch.confirm()
    await watch.beat()
    assert watch.held and changes == []


async def test_a_file_lock_alone_is_never_asked(tmp_path: Path) -> None:
    """SQLite: the file lock cannot be lost; not a question per tick."""
    lock = WalletLock(tmp_path, WALLET, database=f"sqlite:///{tmp_path / 'bot.db'}")
    assert lock.try_acquire() and not lock.can_be_lost
    try:
        watch = LockWatch(SteppedClock(START), ReloadGate(), lambda _: None)

        async def settle() -> None:
            raise AssertionError("never settled")

        watch.attach(lock, settle, heartbeat_seconds=1)
        lock.release()  # even released (which never happens while running): not asked
        assert await watch.confirm()
        await watch.beat()
        assert watch.held
    finally:
        lock.release()


async def test_lost_is_paused_until_free_then_reconciled_and_resumed() -> None:
    rig = Rig()
    assert await rig.watch.confirm() and rig.lock.asked == 1

    rig.lock.held, rig.lock.free = False, False  # dropped; another daemon holds it now
    rig.who = "host-b pid 77"
    assert not await rig.watch.confirm()
    assert rig.changes[0] == f"{LOST_LINE} (its database connection dropped)"
    assert not await rig.watch.confirm()  # known lost: the database is not asked again
    assert rig.lock.asked == 2 and rig.lock.regains == 0

    await rig.watch.beat()  # the first beat tries at once: not free, says who holds it
    assert rig.lock.regains == 1 and not rig.watch.held
    assert rig.changes[-1] == f"{LOST_LINE} (held by host-b pid 77)"
    assert rig.watch.lost == rig.changes[-1]
    await rig.watch.beat()  # before the back-off's delay (5–10 s): no attempt
    assert rig.lock.regains == 1
    rig.clock.advance(timedelta(seconds=10))
    rig.who = None
    await rig.watch.beat()
    assert rig.lock.regains == 2
    assert rig.changes[-1] == f"{LOST_LINE} ({rig.lock.blocked_by})"
    assert rig.settled == 0 and not await rig.watch.confirm()

    rig.lock.free = True  # the other daemon stopped
    rig.clock.advance(timedelta(seconds=20))
    await rig.watch.beat()
    assert rig.settled == 1 and rig.watch.held and rig.changes[-1] is None
    assert await rig.watch.confirm()
    assert len(rig.changes) == 4  # lost, held by, not free, resumed: each said once


async def test_a_failed_reconciliation_keeps_trading_paused_until_one_succeeds() -> None:
    rig = Rig()
    rig.lock.held = False
    rig.settle_fails = True
    await rig.watch.beat()  # lost, regained at once, but the journal cannot be reconciled
    assert rig.lock.held and not rig.watch.held
    assert rig.watch.lost is not None and "reconciling the journal failed" in rig.watch.lost
    assert "ConnectionError: provider down" in rig.watch.lost
    assert not await rig.watch.confirm()
    rig.settle_fails = False
    rig.clock.advance(timedelta(seconds=10))
    await rig.watch.beat()
    assert rig.watch.held and rig.settled == 1 and rig.changes[-1] is None


async def test_the_reconciliation_runs_alone_no_job_beside_it() -> None:
    rig = Rig()
    rig.lock.held = False
    order: list[str] = []

    async def settle() -> None:
        order.append("settle")

    rig.watch.attach(rig.lock, settle, heartbeat_seconds=10)

    async def job() -> None:
        async with rig.gate.job():
            order.append("job starts")
            await asyncio.sleep(0.05)
            order.append("job ends")

    running = asyncio.create_task(job())
    await asyncio.sleep(0)
    await rig.watch.beat()
    await running
    assert order == ["job starts", "job ends", "settle"]


async def test_a_database_that_does_not_answer_counts_as_lost_and_is_not_asked_twice() -> None:
    rig = Rig(timeout=0.05)
    rig.lock.hang.set()
    try:
        assert not await rig.watch.confirm()
        assert rig.changes == [f"{LOST_LINE} (the database did not answer within 0.05 s)"]
        await rig.watch.beat()  # the hung question is waited for, not asked again beside it
        assert rig.lock.asked == 1 and rig.lock.regains == 0
        assert rig.watch.lost == f"{LOST_LINE} (no answer from the database within 0.05 s)"
    finally:
        rig.lock.release.set()
    rig.lock.hang.clear()
    rig.clock.advance(timedelta(seconds=10))
    await rig.watch.beat()  # the database answers again: the lock is still ours
    assert rig.lock.regains == 1 and rig.watch.held and rig.settled == 1


def test_pauses_keep_one_reason_per_cause() -> None:
    pauses = Pauses()
    assert pauses.reason is None
    assert pauses.hold("wallet_lock", "lock lost") and not pauses.hold("wallet_lock", "still")
    assert pauses.hold("foreign_signer", "foreign signer detected")
    assert pauses.reason == "still; foreign signer detected"
    assert pauses.lift("wallet_lock") and not pauses.lift("wallet_lock")
    assert pauses.reason == "foreign signer detected" and "foreign_signer" in pauses


class Rows:
    def __init__(self, rows: list[DaemonView] | Exception) -> None:
        self.rows = rows

    def daemons(self) -> list[DaemonView]:
        if isinstance(self.rows, Exception):
            raise self.rows
        return self.rows


def row(host: str, pid: int) -> DaemonView:
    return DaemonView(
        wallet=WALLET,
        host=host,
        pid=pid,
        mode="paper",
        state="running",
        health="ok",
        version="0",
        strategies=1,
        heartbeat_seconds=60,
        started_at=START,
        beat_at=START,
        last_tick_at=None,
    )


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([row("host-b", 77)], "host-b pid 77"),
        ([row(socket.gethostname(), os.getpid())], None),  # our own row of before
        ([], None),
        (ConnectionError("down"), None),
    ],
)
def test_the_holder_is_named_by_its_daemons_row(
    rows: list[DaemonView] | Exception, expected: str | None
) -> None:
    assert holder(Rows(rows), WALLET) == expected


async def test_two_questions_at_once_see_one_loss() -> None:
    """A tick's question and the heartbeat's overlap: one loss, said (and alerted) once."""
    rig = Rig()
    rig.lock.held = False
    answers = await asyncio.gather(rig.watch.confirm(), rig.watch.confirm())
    assert answers == [False, False]
    assert rig.changes == [f"{LOST_LINE} (its database connection dropped)"]
