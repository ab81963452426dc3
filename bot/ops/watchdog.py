"""Is the daemon healthy? The verdict behind systemd's watchdog (`WATCHDOG=1`).

Healthy means three things at once:

1. the event loop is responsive — the sender of `WATCHDOG=1` is itself an asyncio task,
   so a loop blocked by synchronous code sends nothing (and logs `event_loop.blocked`
   with the seconds lost once it runs again);
2. no job (a strategy tick, the order poll, the command queue) has been running longer
   than `[daemon].watchdog_stall_seconds` — a job stuck awaiting forever is caught even
   though the loop still turns;
3. the scheduler made progress recently — a *pulse* job scheduled with the others marks
   progress each time it runs, so a scheduler that stopped dispatching is caught.

Times here are real (monotonic) seconds: systemd's watchdog counts real time, whatever
clock the market runs on.

Apart from that verdict, `degraded()` says when the daemon runs but the market does not go
as it should: orders disappeared from the provider within the last
`DISAPPEARED_WINDOW_SECONDS`, or a strategy is stuck (its every action refused or failed
for `[daemon].stuck_ticks` ticks, or its key held by an intent whose outcome is unknown).
A degraded daemon still sends `WATCHDOG=1` (a restart would not bring an order back);
`bot status` and the heartbeat say `degraded` and why.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from bot.logging import get_logger
from bot.ops.notify import Notifier

__all__ = ["DISAPPEARED_WINDOW_SECONDS", "HealthMonitor", "pulse_seconds", "send_watchdog"]

DISAPPEARED_WINDOW_SECONDS: Final = 900.0
"""How long (real seconds) a disappeared order keeps the daemon `degraded`."""


def pulse_seconds(stall_seconds: float) -> float:
    """How often the pulse job should mark progress: well inside the stall limit."""
    return max(0.25, min(stall_seconds / 4, 5.0))


@dataclass(frozen=True)
class _Running:
    name: str
    since: float


class HealthMonitor:
    """Tracks running jobs and the scheduler's pulse; tells what is wrong, if anything."""

    def __init__(
        self, stall_seconds: float, *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.stall_seconds = stall_seconds
        self._monotonic = monotonic
        self._running: dict[int, _Running] = {}
        self._tokens = itertools.count()
        self._last_progress = monotonic()
        self._disappeared: list[tuple[float, str]] = []  # (when, "kind order id → status")

    def progress(self) -> None:
        """The scheduler dispatched the pulse job: it is alive."""
        self._last_progress = self._monotonic()

    @contextmanager
    def job(self, name: str) -> Iterator[None]:
        """Count the body as job `name` running (for the stuck-job check)."""
        token = next(self._tokens)
        self._running[token] = _Running(name, self._monotonic())
        try:
            yield
        finally:
            del self._running[token]

    def running(self) -> list[str]:
        """Names of the jobs running now."""
        return [r.name for r in self._running.values()]

    def problem(self) -> str | None:
        """None when healthy, else one line saying what is wrong."""
        now = self._monotonic()
        for run in sorted(self._running.values(), key=lambda r: r.since):
            if now - run.since > self.stall_seconds:
                return f"job {run.name} running for {int(now - run.since)} s"
        quiet = now - self._last_progress
        if quiet > self.stall_seconds:
            return f"scheduler made no progress for {int(quiet)} s"
        return None

    def order_disappeared(self, kind: str, order_id: str, status: str) -> None:
        """The provider no longer knows one of our orders (now `missing` or `lost`)."""
        self._disappeared.append((self._monotonic(), f"{kind} {order_id[:12]} → {status}"))

    def degraded(
        self,
        missing: int = 0,
        stuck: Mapping[str, str] | None = None,
        unsettled: Sequence[str] = (),
    ) -> str | None:
        """None, or one line naming every reason the daemon trades less than it should.

        Orders disappeared within the window; `missing`: the wallet's orders the journal
        holds as `missing` now (live, but the provider no longer lists them), however long
        ago they disappeared; `stuck`: strategies that tick without getting anywhere, and
        why (`bot.engine.progress`); `unsettled`: intents whose outcome is still unknown
        long after they were sent, one line each.
        """
        reasons: list[str] = []
        since = self._monotonic() - DISAPPEARED_WINDOW_SECONDS
        self._disappeared = [d for d in self._disappeared if d[0] >= since]
        if self._disappeared:
            count = len(self._disappeared)
            reasons.append(
                f"{_orders(count)} disappeared from the provider in the last "
                f"{int(DISAPPEARED_WINDOW_SECONDS // 60)} min "
                f"(latest: {self._disappeared[-1][1]}; see bot orders)"
            )
        elif missing:
            reasons.append(
                f"{_orders(missing)} missing: the provider no longer lists "
                f"{'it' if missing == 1 else 'them'} (see bot orders --status all)"
            )
        for name, why in (stuck or {}).items():
            reasons.append(f"strategy {name} stuck: {why}")
        reasons.extend(unsettled)
        return "degraded: " + "; ".join(reasons) if reasons else None


def _orders(count: int) -> str:
    return f"{count} order{'' if count == 1 else 's'}"


async def send_watchdog(notifier: Notifier, monitor: HealthMonitor, interval: float) -> None:
    """Send `WATCHDOG=1` every `interval` seconds while healthy (runs until cancelled)."""
    log = get_logger("watchdog")
    reported: str | None = None
    while True:
        problem = monitor.problem()
        if problem is None:
            notifier.watchdog()
            if reported is not None:
                log.info("watchdog.healthy")
        elif reported is None:  # once per spell of trouble, not every interval
            log.warning("watchdog.unhealthy", problem=problem)
        reported = problem
        asleep = time.monotonic()
        await asyncio.sleep(interval)
        late = time.monotonic() - asleep - interval
        if late > max(1.0, interval):
            # Nothing could be said while it happened: say it now, for the operator.
            log.warning("event_loop.blocked", seconds=round(late, 1))
