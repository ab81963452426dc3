"""Starting in bad weather: a provider or node that is down at start-up is waited for.

The daemon's start needs both services (the token list, reconciling what a crash left in
flight, letting in-flight transactions land). When one is unreachable, the daemon does not
exit: it says so in one line, reports `degraded` (status file, `bot status`, systemd
`STATUS=`) and tries again with back-off until it works or the daemon is stopped. Exit
codes stay for configuration errors: a refused key or a wrong chain is not weather.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Final, TypeVar

from bot import __version__
from bot.api.errors import (
    MalformedResponse,
    NotSent,
    OutcomeUnknown,
    RateLimited,
    ServerError,
)
from bot.chain.errors import MalformedNodeResponse, NodeError, NodeUnavailable
from bot.clock import Clock, RealClock
from bot.logging import get_logger, redact
from bot.ops.heartbeat import iso
from bot.ops.notify import Notifier
from bot.ops.status_file import DaemonStatus, write_status
from bot.retry import Backoff

__all__ = [
    "BACKOFF_CAP_SECONDS",
    "early_reporter",
    "first_line",
    "is_bad_weather",
    "starting_status",
    "until_reachable",
]

BACKOFF_CAP_SECONDS: Final = 60.0
_BACKOFF: Final = Backoff(base=1.0, cap=BACKOFF_CAP_SECONDS)
_WEATHER: Final = (
    NotSent,
    OutcomeUnknown,
    MalformedResponse,
    RateLimited,
    ServerError,
    NodeUnavailable,
    MalformedNodeResponse,
)

_T = TypeVar("_T")


def is_bad_weather(exc: BaseException) -> bool:
    """An unreachable, overloaded or garbled service: worth waiting for, not a config error."""
    if isinstance(exc, _WEATHER):
        return True
    return isinstance(exc, NodeError) and (exc.status >= 500 or exc.status == 429)


async def until_reachable(
    what: str,
    attempt: Callable[[], Awaitable[_T]],
    *,
    stop: asyncio.Event,
    on_down: Callable[[str, float], None],
) -> _T | None:
    """`attempt()` until it succeeds; None when `stop` is set while waiting.

    Bad weather (`is_bad_weather`) calls `on_down(reason, delay)` and waits `delay`
    seconds (exponential with jitter, at most `BACKOFF_CAP_SECONDS`); anything else
    propagates.
    """
    failures = 0
    log = get_logger("daemon")
    while True:
        try:
            return await attempt()
        except Exception as exc:
            if not is_bad_weather(exc):
                raise
            failures += 1
            delay = _BACKOFF.delay(failures)
            reason = redact(f"{what}: {exc}")
            log.warning("daemon.degraded", reason=reason, retry_in_seconds=round(delay, 1))
            on_down(reason, delay)
        try:
            await asyncio.wait_for(stop.wait(), delay)
        except TimeoutError:
            continue
        return None


def starting_status(
    path: Path, *, clock: Clock, mode: str, started_at: datetime, problem: str
) -> None:
    """The status file of a daemon that cannot open its services yet (`bot status`)."""
    write_status(
        path,
        DaemonStatus(
            pid=os.getpid(),
            state="starting",
            started_at=iso(started_at) or "",
            updated_at=iso(clock.now()) or "",
            mode=mode,
            wallet=None,
            version=__version__,
            healthy=False,
            problem=problem,
        ),
    )


def first_line(reason: str) -> str:
    """The one console line the first time start-up has to wait."""
    return f"bot: {reason}: starting anyway, retrying with back-off"


def early_reporter(
    status_file: Path | None, *, mode: str, notifier: Notifier, echo: Callable[[str], None]
) -> Callable[[str, float], None]:
    """`on_down` before the runtime is open: one console line, the status file, `STATUS=`."""
    clock = RealClock()
    started = clock.now()
    told: list[str] = []

    def report(reason: str, delay: float) -> None:
        if not told:
            echo(first_line(reason))
            told.append(reason)
        problem = f"degraded: {reason}; retrying in {delay:.0f} s"
        notifier.status(f"starting, unhealthy ({problem})")
        if status_file is not None:
            # The journal's folder may not exist yet: systemd's STATUS still says it.
            with contextlib.suppress(OSError):
                starting_status(
                    status_file, clock=clock, mode=mode, started_at=started, problem=problem
                )

    return report
