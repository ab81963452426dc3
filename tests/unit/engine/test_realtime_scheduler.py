"""The real-time scheduler on an injected wall clock that is stepped while it runs.

The clock under test is the event loop's monotonic time plus an offset the test changes:
a step of the wall clock (by hand, or NTP after a suspend) as the scheduler sees it,
while asyncio's sleeps go on in real time.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.clock import ClockSteps
from bot.engine.scheduling import Job, RealtimeScheduler

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
INTERVAL = 0.2
CHECK = 0.05


class SteppableClock:
    """Wall time that runs with the loop's monotonic clock and can be stepped."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._origin = self._loop.time()
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return START + timedelta(seconds=self._loop.time() - self._origin) + self.offset


async def until(done: Callable[[], bool], timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not done():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


async def test_an_interval_keeps_its_real_cadence_across_a_backward_step_of_an_hour() -> None:
    clock = SteppableClock()
    loop = asyncio.get_running_loop()
    runs: list[float] = []
    fired: list[datetime] = []

    async def tick() -> None:
        runs.append(loop.time())
        fired.append(clock.now())

    trigger = IntervalTrigger(seconds=INTERVAL, start_date=clock.now(), timezone=UTC)
    scheduler = RealtimeScheduler(misfire_grace_seconds=30, clock=clock, check_seconds=CHECK)
    scheduler.add(Job("tick", trigger, tick))
    scheduler.start()
    try:
        await until(lambda: len(runs) >= 3, timeout=5)
        clock.offset -= timedelta(hours=1)
        stepped_at = len(runs)
        await until(lambda: len(runs) >= stepped_at + 4, timeout=5)
        clock.offset += timedelta(hours=2)  # and forward again: no run skipped as "missed"
        stepped_again = len(runs)
        await until(lambda: len(runs) >= stepped_again + 4, timeout=5)
    finally:
        scheduler.shutdown()
    # Every run within its interval of real time (plus one check and scheduling slack),
    # across both steps; an hour's wait would have timed out above.
    assert max(gaps(runs)) < INTERVAL + CHECK + 0.15, gaps(runs)
    assert min(gaps(runs)) > INTERVAL / 2, gaps(runs)
    # The runs after the backward step happened at the stepped clock's times.
    assert fired[stepped_at] < fired[stepped_at - 1]


async def test_a_cron_time_never_fires_twice_when_the_clock_steps_back() -> None:
    clock = SteppableClock()
    loop = asyncio.get_running_loop()
    runs: list[float] = []
    fire_times: list[datetime] = []
    job: Job

    async def tick() -> None:
        runs.append(loop.time())
        assert job.last_fire is not None
        fire_times.append(job.last_fire)

    job = Job("every-second", CronTrigger(second="*", timezone=UTC), tick)
    scheduler = RealtimeScheduler(misfire_grace_seconds=30, clock=clock, check_seconds=CHECK)
    scheduler.add(job)
    scheduler.start()
    try:
        await until(lambda: len(runs) >= 2, timeout=5)
        step_back = 1.5
        clock.offset -= timedelta(seconds=step_back)
        before = len(runs)
        await until(lambda: len(runs) >= before + 2, timeout=10)
    finally:
        scheduler.shutdown()
    # Wall-clock meaning: each second fires once, in order, even though the clock showed
    # some of them again after the step...
    assert fire_times == sorted(set(fire_times)), fire_times
    # ...and the wait across the step is at most the step plus one period.
    assert max(gaps(runs)) < step_back + 1.0 + CHECK + 0.15, gaps(runs)


async def test_a_failing_job_runs_again_and_a_removed_busy_one_finishes() -> None:
    clock = SteppableClock()
    failures = 0
    finished = asyncio.Event()
    release = asyncio.Event()

    async def fails() -> None:
        nonlocal failures
        failures += 1
        raise RuntimeError("boom")

    async def slow() -> None:
        await release.wait()
        finished.set()

    def every(seconds: float) -> IntervalTrigger:
        return IntervalTrigger(seconds=seconds, start_date=clock.now(), timezone=UTC)

    scheduler = RealtimeScheduler(misfire_grace_seconds=30, clock=clock, check_seconds=CHECK)
    scheduler.add(Job("fails", every(INTERVAL), fails))
    scheduler.add(Job("slow", every(60), slow))
    scheduler.start()
    try:
        await until(lambda: failures >= 3, timeout=5)
        scheduler.remove("slow")  # its run is under way: it finishes, nothing more
        release.set()
        await asyncio.wait_for(finished.wait(), timeout=5)
    finally:
        scheduler.shutdown()


def test_clock_steps_tell_steps_from_drift() -> None:
    wall = [START]
    mono = [100.0]
    steps = ClockSteps(SteppableWall(wall), lambda: mono[0])

    def move(wall_seconds: float, mono_seconds: float) -> timedelta:
        wall[0] += timedelta(seconds=wall_seconds)
        mono[0] += mono_seconds
        return steps.step()

    assert move(10, 10) == timedelta(0)
    assert move(10.0004, 10) == timedelta(0)  # NTP slewing: drift, absorbed
    assert move(5 - 3600, 5) == timedelta(hours=-1)
    assert move(5, 5) == timedelta(0)  # reported once
    assert move(30 + 5, 5) == timedelta(seconds=30)


class SteppableWall:
    """A clock reading the test's own wall time."""

    def __init__(self, wall: list[datetime]) -> None:
        self._wall = wall

    def now(self) -> datetime:
        return self._wall[0]
