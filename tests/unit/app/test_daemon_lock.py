"""The daemon while its wallet lock is lost: nothing ticks or is sent, then it resumes.

The daemon of `test_daemon` (real embedded paper world on a stepped clock, real SQLite
journal, real engine and executor) with a fake wallet lock whose database connection the
test drops: the strategies' ticks, the command queue, the order poll and the reconciler
do not run, the status says why and the wallet's `daemons` row is left alone; the lock
held again, the journal is reconciled first (the start-up's `settle`), then trading
resumes. A foreign signer's pause outlives the lock's.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal

import structlog

from bot.app.lock_watch import LOST_LINE, PausedBroker
from bot.chain.errors import ForeignSigner
from bot.engine.actions import CreateDca
from bot.retry import Backoff

from .test_daemon import HOUR, Folder, dca, folder, schedule, started

__all__ = ["folder"]  # the fixture, shared with test_daemon


class FakeLock:
    """A wallet lock whose database connection the test drops and frees."""

    can_be_lost = True

    def __init__(self) -> None:
        self.held = True
        self.free = True
        self.asked = 0
        self.blocked_by = "advisory lock 'wallet:0x…' in postgresql://… held by another session"

    def still_held(self) -> bool:
        self.asked += 1
        return self.held

    def regain(self) -> bool:
        if not self.held and self.free:
            self.held = True
        return self.held


async def _settled() -> None:
    """A start-up reconciliation with nothing to settle."""


async def test_a_lost_lock_pauses_every_wallet_job_until_held_again_and_reconciled(
    folder: Folder,
) -> None:
    folder.write(dca("a"))
    async with started(folder) as rig:
        daemon, runtime = rig.daemon, rig.runtime
        lock = FakeLock()
        settled: list[str] = []

        async def settle() -> bool:
            settled.append("settled")
            return True

        daemon.watch_lock(lock, settle)
        assert daemon.lock_watch.backoff is not None
        daemon.lock_watch.backoff = Backoff(0.01, 0.01)  # retries within the test
        driver = await schedule(daemon)
        start = runtime.clock.now()
        lock.held, lock.free = False, False  # dropped; another daemon holds it now
        with structlog.testing.capture_logs() as logs:
            await driver.run_until(start + 2 * HOUR)
            await daemon.beat()  # tries to take it again: not free
        assert runtime.journal.intents() == []  # no tick, no command, nothing sent
        assert runtime.journal.daemons() == []  # the row is the lock holder's
        assert daemon.engine.stats["a"].ticks == 0
        assert daemon.engine.last_poll_at is None  # the order poll waited too
        assert [e["event"] for e in logs if e["event"].startswith("wallet_lock")] == [
            "wallet_lock.lost",
            "wallet_lock.still_lost",
        ]
        status = daemon.snapshot()
        assert not status.healthy and (status.problem or "").startswith(LOST_LINE)
        assert "(advisory lock 'wallet:0x…' in postgresql://… held by another session)" in (
            status.problem or ""
        )
        assert isinstance(daemon.engine.broker, PausedBroker) and settled == []

        lock.free = True
        await asyncio.sleep(0.02)
        await daemon.beat()  # held again: reconciled, then trading resumes
        assert settled == ["settled"] and daemon.paused is None
        assert not isinstance(daemon.engine.broker, PausedBroker)
        assert [r.wallet for r in runtime.journal.daemons()] == [runtime.wallet]
        await driver.run_until(start + 3 * HOUR)
        assert daemon.engine.stats["a"].ticks == 1
        [intent] = runtime.journal.intents()
        assert intent.state == "confirmed"


async def test_a_foreign_signer_pause_outlives_the_lock_pause(folder: Folder) -> None:
    folder.write(dca("a"))
    async with started(folder) as rig:
        daemon = rig.daemon
        lock = FakeLock()

        daemon.watch_lock(lock, _settled)
        lock.held = False
        assert not await daemon.lock_watch.confirm()
        daemon.on_foreign_signer(ForeignSigner(rig.runtime.wallet or "", 0, "0xfeed"))
        both = daemon.paused or ""
        assert both.startswith(LOST_LINE) and "; foreign signer detected" in both
        await daemon.beat()  # the lock is free: held again, the foreign signer stays
        assert (daemon.paused or "").startswith("foreign signer detected")
        broker = daemon.engine.broker
        assert isinstance(broker, PausedBroker) and broker.reason == daemon.paused


async def test_an_action_outside_a_tick_asks_the_lock_right_before_it_is_sent(
    folder: Folder,
) -> None:
    """A reaction to an order event runs in the order poll, not a tick: the broker asks."""
    folder.write(dca("a"))
    async with started(folder) as rig:
        daemon = rig.daemon
        lock = FakeLock()

        daemon.watch_lock(lock, _settled)
        action = CreateDca(
            key="reaction",
            sell="USDC",
            buy="APT",
            amount=Decimal(30),
            orders=3,
            interval_value=1,
            interval_period="hour",
        )
        lock.held = False  # dropped since the last question; the watch has not seen it yet
        assert daemon.paused is None
        outcome = await daemon.engine.broker.carry_out("a", action)
        assert outcome.state == "paused" and outcome.detail.startswith(LOST_LINE)
        assert rig.runtime.journal.intents() == []  # nothing journaled, nothing sent
        assert (daemon.paused or "").startswith(LOST_LINE)  # and trading is paused

        lock.held = True
        await daemon.beat()  # held again: the real broker behind its fence
        asked = lock.asked
        outcome = await daemon.engine.broker.carry_out("a", action)
        assert outcome.state == "confirmed" and lock.asked == asked + 1


async def test_the_command_queue_asks_the_lock_between_two_commands(folder: Folder) -> None:
    """A drop while the queue is worked through: the commands after it stay queued."""
    folder.write(dca("a"))
    async with started(folder) as rig:
        daemon, journal = rig.daemon, rig.runtime.journal

        class DropsAfterFirstQuestion(FakeLock):
            def still_held(self) -> bool:
                held = super().still_held()
                self.held = False  # the connection drops once the job was let in
                return held

        daemon.watch_lock(DropsAfterFirstQuestion(), _settled)
        now = rig.runtime.clock.now()
        first = journal.enqueue_command("pause", {"strategy": "a"}, at=now)
        second = journal.enqueue_command("resume", {"strategy": "a"}, at=now)
        [commands] = [job for job in daemon.build_jobs() if job.name == "commands"]
        await commands.run()
        states = {c.id: c.state for c in journal.commands()}
        assert (states[first], states[second]) == ("done", "queued")
        assert (daemon.paused or "").startswith(LOST_LINE)
