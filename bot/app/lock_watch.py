"""The daemon's watch on its wallet lock, and the one record of why trading is paused.

A daemon on a PostgreSQL journal holds its wallet's advisory lock on a connection of its
own (`bot.engine.wallet_lock`). When that connection drops the server lets the lock go,
and another daemon of the wallet may take it: from then on this daemon must not trade.
`LockWatch` asks the database whether the lock is still held — at every heartbeat and
before every job that may spend (a strategy's tick, the command queue) — on a thread of
its own, off the event loop, bounded by `CHECK_TIMEOUT_SECONDS` (a hung database cannot
stall the loop; no answer in time counts as lost). Once lost, trading stays paused until
a heartbeat takes the lock again (`WalletLock.regain`, paced by the project's `Backoff`)
and the journal has been reconciled under it (the start-up's reconciliation: another
daemon may have traded meanwhile). With SQLite (the file lock alone) the lock is never lost.

`Pauses` is the daemon's one record of why trading is paused (a foreign signer, a lost
wallet lock): one reason per cause, shown together in the status; while any is held the
engine's broker is a `PausedBroker`, which sends nothing. While none is, the engine's
broker is a `FencedBroker`: every action asks the lock right before it is carried out,
so a strategy's reaction to an order event (run by the order poll, not a tick) or a long
tick's later actions never trade after the lock was lost.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final, Protocol

from bot.aptos.address import Address
from bot.clock import Clock
from bot.engine.actions import Action
from bot.engine.brokers import ActionOutcome
from bot.engine.ports import Broker
from bot.logging import get_logger
from bot.ops.reload import ReloadGate
from bot.retry import Backoff

if TYPE_CHECKING:
    from bot.journal import DaemonView

__all__ = [
    "CHECK_TIMEOUT_SECONDS",
    "FOREIGN_SIGNER",
    "LOCK_LOST",
    "FencedBroker",
    "LockWatch",
    "PausedBroker",
    "Pauses",
    "WalletHold",
    "holder",
]

CHECK_TIMEOUT_SECONDS: Final = 10.0
"""How long one question to the database about the lock may take before it counts as lost."""

REGAIN_CAP_SECONDS: Final = 300.0
"""The longest wait between two attempts to take a lost lock again (heartbeats between)."""

FOREIGN_SIGNER: Final = "foreign_signer"
"""The pause cause of another signer on the wallet (until restart)."""

LOCK_LOST: Final = "wallet_lock"
"""The pause cause of a lost wallet lock (until it is held again)."""

LOST_LINE: Final = "wallet lock lost: trading paused until it is held again"
"""What the log, the alert and the status say first when the lock is lost."""


class Pauses:
    """Why trading is paused: one reason per cause; paused while any is held."""

    def __init__(self) -> None:
        self._reasons: dict[str, str] = {}

    def __contains__(self, cause: object) -> bool:
        return cause in self._reasons

    def hold(self, cause: str, reason: str) -> bool:
        """Pause for `cause` (or say it anew); True when this cause was not pausing yet."""
        new = cause not in self._reasons
        self._reasons[cause] = reason
        return new

    def lift(self, cause: str) -> bool:
        """Stop pausing for `cause`; True when it did pause."""
        return self._reasons.pop(cause, None) is not None

    @property
    def reason(self) -> str | None:
        """Every cause's reason, joined by "; " (None: trading is not paused)."""
        return "; ".join(self._reasons.values()) or None


class PausedBroker:
    """The engine's broker while trading is paused: every action is refused, nothing sent."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def carry_out(self, strategy: str, action: Action) -> ActionOutcome:
        """Send nothing; the action is reported `paused` with the reason."""
        return ActionOutcome("paused", detail=self.reason)


class FencedBroker:
    """The engine's real broker behind the wallet lock: each action asks `confirm` first.

    The lock is confirmed before a tick, but not before a reaction to an order event (the
    order poll runs those) nor again before a long tick's later actions; this is the fence
    right before each one. With a lock that cannot be lost the question costs nothing.
    """

    def __init__(self, broker: Broker, watch: LockWatch) -> None:
        self.broker = broker
        self.watch = watch

    async def carry_out(self, strategy: str, action: Action) -> ActionOutcome:
        """The real broker's outcome while the lock is held; else `paused`, nothing sent."""
        if not await self.watch.confirm():
            return ActionOutcome("paused", detail=self.watch.lost or LOST_LINE)
        return await self.broker.carry_out(strategy, action)


class WalletHold(Protocol):
    """The wallet lock as the watch uses it (`bot.engine.wallet_lock.WalletLock`)."""

    @property
    def can_be_lost(self) -> bool:
        """False for a lock that is held until released (the file lock alone)."""
        ...

    blocked_by: str
    """After `regain` returned False: which lock another process holds, or why not taken."""

    def still_held(self) -> bool:
        """True while every lock is held (asks the database)."""
        ...

    def regain(self) -> bool:
        """Hold every lock again; False while another process holds it or it is unreachable."""
        ...


class DaemonRows(Protocol):
    """The journal's `daemons` table as `holder` reads it."""

    def daemons(self) -> Sequence[DaemonView]:
        """The wallet's daemon row (a journal opened for the wallet)."""
        ...


def holder(journal: DaemonRows, wallet: str | None) -> str | None:
    """Who trades `wallet` now by its `daemons` row (None: unknown, or this process)."""
    try:
        rows = journal.daemons()
    except Exception:  # the database is what is in trouble: say nothing of the holder
        return None
    me, ours = (socket.gethostname(), os.getpid()), _long(wallet)
    for row in rows:
        if _long(row.wallet) == ours and (row.host, row.pid) != me:
            return f"{row.host} pid {row.pid}"
    return None


def _long(address: str | None) -> str | None:
    try:
        return None if address is None else Address.parse(address).long
    except ValueError:
        return address


Settle = Callable[[], Awaitable[object]]
"""The start-up's reconciliation of the journal (drain what is in flight, then reconcile)."""


class LockWatch:
    """Whether this daemon still holds its wallet's lock; takes it again when lost.

    `on_change(reason)` is called with the status's reason when the lock is lost (or the
    reason changes, e.g. another holder is seen) and with None when trading may resume.
    `holder()` names the process holding the wallet now, when known (its `daemons` row).
    Until `attach`, or with a lock that is never lost (SQLite), nothing is ever paused.
    """

    def __init__(
        self,
        clock: Clock,
        gate: ReloadGate,
        on_change: Callable[[str | None], None],
        *,
        holder: Callable[[], str | None] = lambda: None,
        timeout_seconds: float = CHECK_TIMEOUT_SECONDS,
        backoff: Backoff | None = None,
    ) -> None:
        self.clock = clock
        self.gate = gate
        self.on_change = on_change
        self.holder = holder
        self.timeout = timeout_seconds
        self.backoff = backoff
        self.lost: str | None = None
        """Why trading is paused for the lock (the status's reason), or None while held."""
        self._lock: WalletHold | None = None
        self._settle: Settle | None = None
        self._pending: asyncio.Future[bool] | None = None
        self._asking = asyncio.Lock()
        self._attempts = 0
        self._next_try: datetime | None = None
        self._log = get_logger("daemon")

    def attach(self, lock: WalletHold, settle: Settle, heartbeat_seconds: float) -> None:
        """Watch `lock` (taken); `settle` reconciles the journal before trading resumes.

        A lock that cannot be lost (SQLite: the file lock alone) is not watched: no question.
        """
        if not lock.can_be_lost:
            return
        self._lock, self._settle = lock, settle
        if self.backoff is None:
            base = max(float(heartbeat_seconds), 1.0)
            self.backoff = Backoff(base, max(base, REGAIN_CAP_SECONDS))

    @property
    def held(self) -> bool:
        """True unless the lock was seen lost and not taken again yet."""
        return self.lost is None

    async def confirm(self) -> bool:
        """Before a job that may spend: True while the lock is held (the database is asked).

        False once lost (no question asked: the heartbeat takes it again).
        """
        if self.lost is not None:
            return False
        lock = self._lock
        if lock is None:
            return True
        held = await self._ask(lock.still_held)
        if held or self.lost is not None:  # lost meanwhile: a concurrent question said so
            return bool(held) and self.lost is None
        unanswered = held is None
        why = (
            f"the database did not answer within {self.timeout:g} s"
            if unanswered
            else "its database connection dropped"
        )
        self._lose(why)
        return False

    async def beat(self) -> None:
        """At each heartbeat: check the lock; when lost, try to take it again when due."""
        if self._lock is None:
            return
        if self.lost is None:
            await self.confirm()
            if self.lost is None:
                return
        now = self.clock.now()
        if self._next_try is not None and now < self._next_try:
            return
        await self._try_regain()

    async def _try_regain(self) -> None:
        lock, settle = self._lock, self._settle
        assert lock is not None and settle is not None
        regained = await self._ask(lock.regain)
        if not regained:
            who = self.holder() if regained is False else None
            by = f"held by {who}" if who else lock.blocked_by
            if regained is None:
                by = f"no answer from the database within {self.timeout:g} s"
            self._retry_later(f"{LOST_LINE} ({by})")
            return
        try:
            async with self.gate.reload():  # no job runs while the journal is reconciled
                await settle()
        except Exception as exc:  # a provider or node down: reconciled at a later beat
            self._retry_later(
                f"{LOST_LINE} (held again; reconciling the journal failed: "
                f"{type(exc).__name__}: {exc})"
            )
            return
        self.lost, self._attempts, self._next_try = None, 0, None
        self._log.warning("wallet_lock.regained", message="wallet lock held again: trading resumed")
        self.on_change(None)

    def _lose(self, why: str) -> None:
        self._attempts, self._next_try = 0, None
        self.lost = f"{LOST_LINE} ({why})"
        self._log.error("wallet_lock.lost", reason=self.lost)
        self.on_change(self.lost)

    def _retry_later(self, reason: str) -> None:
        assert self.backoff is not None
        self._attempts += 1
        delay = self.backoff.delay(self._attempts)
        self._next_try = self.clock.now() + timedelta(seconds=delay)
        if reason != self.lost:
            self.lost = reason
            self._log.warning("wallet_lock.still_lost", reason=reason, retry_seconds=round(delay))
            self.on_change(reason)

    async def _ask(self, call: Callable[[], bool]) -> bool | None:
        """`call()` in a thread, bounded; None when no answer came in time.

        A question that hangs is not asked again beside it: the next one waits for it
        first (the lock's connection serves one question at a time).
        """
        async with self._asking:  # a tick's question and the heartbeat's never overlap
            if self._pending is not None:
                if not await self._answered(self._pending):
                    return None
                self._pending.exception()  # a late answer is stale: ask again
                self._pending = None
            task = _in_thread(call)
            if not await self._answered(task):
                self._pending = task
                return None
        try:
            return bool(task.result())
        except Exception as exc:  # the lock's own errors are answers; anything else: lost
            self._log.error("wallet_lock.check_failed", error=f"{type(exc).__name__}: {exc}")
            return False

    async def _answered(self, task: asyncio.Future[bool]) -> bool:
        done, _ = await asyncio.wait({task}, timeout=self.timeout)
        return bool(done)


def _in_thread(call: Callable[[], bool]) -> asyncio.Future[bool]:
    """`call()` on a daemon thread of its own; its answer as a future of the running loop.

    Not `asyncio.to_thread`: a question hung on a dead connection must not hold up the
    process's exit (the default executor is waited for at shutdown; this thread is not).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[bool] = loop.create_future()

    def settle(outcome: bool | BaseException) -> None:
        if future.done():
            return
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def run() -> None:
        outcome: bool | BaseException
        try:
            outcome = call()
        except Exception as exc:
            outcome = exc
        with suppress(RuntimeError):  # the loop is closed: nobody waits for the answer
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=run, name="wallet-lock-question", daemon=True).start()
    return future
