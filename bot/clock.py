"""The one clock abstraction: real, accelerated or stepped time, always aware UTC.

Code that needs the time takes a `Clock` and calls `now()`; nothing reads the wall clock
directly. asyncio and APScheduler still run on real time (they cannot follow a simulated
clock), so simulated runs are driven by stepping a `SteppedClock` from our own driver.

A wall clock can be stepped (by hand, by NTP after a long suspend): `ClockSteps` notices
it by comparing the clock with a monotonic counter, so a scheduler can keep intervals in
real time instead of waiting out a backward step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final, Protocol, runtime_checkable

__all__ = [
    "EPOCH",
    "MICROSECOND",
    "MICROS_PER_SECOND",
    "AcceleratedClock",
    "Clock",
    "ClockSteps",
    "RealClock",
    "SteppedClock",
    "clock_kind",
    "ensure_utc",
    "from_micros",
    "parse_utc",
    "to_micros",
]

EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
"""The Unix epoch, aware UTC: µs times (the chain's, the backtest's arrays) count from it."""
MICROSECOND: Final = timedelta(microseconds=1)
"""One µs: `delta // MICROSECOND` is a timedelta in whole µs, exactly."""
MICROS_PER_SECOND: Final = 1_000_000
"""µs in a second, for integer times in seconds (expirations) and µs arrays."""


def to_micros(moment: datetime) -> int:
    """µs since the epoch, exact (integer arithmetic, never float; negative before 1970).

    `moment` must be aware (a naive one is refused, as by `ensure_utc`); any offset is
    honoured.
    """
    if moment.tzinfo is None:
        raise ValueError(f"naive datetime {moment.isoformat()} (use timezone-aware UTC)")
    return (moment - EPOCH) // MICROSECOND


def from_micros(micros: int) -> datetime:
    """The aware UTC time `micros` µs after the epoch (before it when negative); exact."""
    return EPOCH + timedelta(microseconds=micros)


def ensure_utc(moment: datetime) -> datetime:
    """`moment` as aware UTC; a naive datetime is refused (it has no defined meaning here)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment.isoformat()} (use timezone-aware UTC)")
    return moment.astimezone(UTC)


def parse_utc(text: str) -> datetime:
    """Parse an ISO-8601 time; `Z` and offsets accepted, a missing offset means UTC."""
    parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


@runtime_checkable
class Clock(Protocol):
    """Tells the current time as an aware UTC datetime."""

    def now(self) -> datetime:
        """The current time (aware, UTC)."""
        ...


class RealClock:
    """The wall clock."""

    def now(self) -> datetime:
        """The current wall-clock time in UTC."""
        return datetime.now(UTC)


class SteppedClock:
    """Time that moves only when told: tests, paper demos and backtests.

    It never moves backwards: `advance_to` an earlier time is refused.
    """

    def __init__(self, start: datetime) -> None:
        self._now = ensure_utc(start)

    def now(self) -> datetime:
        """The current simulated time."""
        return self._now

    def advance(self, delta: timedelta) -> datetime:
        """Move forward by `delta` (≥ 0); returns the new time."""
        if delta < timedelta(0):
            raise ValueError("a stepped clock does not move backwards")
        self._now += delta
        return self._now

    def advance_to(self, moment: datetime) -> datetime:
        """Move forward to `moment` (not before the current time); returns it."""
        target = ensure_utc(moment)
        if target < self._now:
            raise ValueError(
                f"cannot move back from {self._now.isoformat()} to {target.isoformat()}"
            )
        self._now = target
        return self._now


class AcceleratedClock:
    """Real time sped up by `factor` from a chosen start: an hour per minute at ×60.

    Derived from a monotonic counter, so changes of the wall clock do not make it jump.
    """

    def __init__(self, start: datetime, factor: float) -> None:
        if factor <= 0:
            raise ValueError("factor must be positive")
        self._start = ensure_utc(start)
        self._factor = factor
        self._origin = time.monotonic()

    @property
    def factor(self) -> float:
        """Simulated seconds per real second."""
        return self._factor

    def now(self) -> datetime:
        """Start plus elapsed real time × factor."""
        elapsed = (time.monotonic() - self._origin) * self._factor
        return self._start + timedelta(seconds=elapsed)


def clock_kind(clock: Clock) -> str:
    """What a person should know of a clock: "real", "stepped" or "accelerated ×60"."""
    if isinstance(clock, AcceleratedClock):
        return f"accelerated ×{clock.factor:g}"
    if isinstance(clock, SteppedClock):
        return "stepped"
    return "real"


STEP_TOLERANCE_SECONDS: Final = 1.0
"""Smaller differences between a clock and the monotonic counter are drift, not steps."""


class ClockSteps:
    """Notices steps of `clock` (a wall clock) against a monotonic counter.

    `step()` tells how far the clock jumped since the previous call: positive forward,
    negative backward, zero when it only drifted by less than the tolerance (NTP slews by
    at most half a millisecond a second; drift is absorbed call by call).
    """

    def __init__(
        self,
        clock: Clock,
        monotonic: Callable[[], float] = time.monotonic,
        *,
        tolerance_seconds: float = STEP_TOLERANCE_SECONDS,
    ) -> None:
        self._clock = clock
        self._monotonic = monotonic
        self._tolerance = tolerance_seconds
        self._offset = self._read()

    def _read(self) -> float:
        """Clock time minus monotonic time, in seconds (constant while nothing steps)."""
        return self._clock.now().timestamp() - self._monotonic()

    def step(self) -> timedelta:
        """How far the clock stepped since the last call (zero: no step)."""
        offset = self._read()
        jump, self._offset = offset - self._offset, offset
        if abs(jump) < self._tolerance:
            return timedelta(0)
        return timedelta(seconds=jump)
