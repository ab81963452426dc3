"""One schedule definition, three ways of driving it.

Each job (a strategy's tick, the order tracker's poll, the command queue) has an
APScheduler trigger made from the config (`make_trigger`); only the triggers are
APScheduler's. APScheduler's schedulers have no pluggable clock, so we drive the *same*
trigger objects (`get_next_fire_time`) ourselves. `Driver` moves simulated time: a
`SteppedClock` jumps straight to the next fire time (tests, backtests), an
`AcceleratedClock` is waited for (the paper demo). `RealtimeScheduler` runs the daemon on
real time: one task per job, the time read from the injected clock, steps of the wall
clock noticed and absorbed (see the class). Missed runs are coalesced: a job that should
have fired several times during a pause runs once.

Both keep a live job set: `add` and `remove` change it while it runs (the daemon's
SIGHUP reload schedules added strategies and unschedules removed ones).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.clock import (
    MICROSECOND,
    AcceleratedClock,
    Clock,
    ClockSteps,
    RealClock,
    SteppedClock,
)
from bot.config import Schedule
from bot.cron import cron_trigger
from bot.logging import get_logger

__all__ = ["Driver", "Job", "RealtimeScheduler", "make_trigger", "start_realtime"]


def make_trigger(schedule: Schedule, start: datetime) -> BaseTrigger:
    """The trigger of a schedule: every N seconds from `start`, or a cron line in UTC."""
    if schedule.interval_seconds is not None:
        return IntervalTrigger(seconds=schedule.interval_seconds, start_date=start, timezone=UTC)
    if schedule.cron is None:  # Schedule's own validator allows exactly one of the two
        raise ValueError("a schedule needs interval_seconds or cron")
    return cron_trigger(schedule.cron)


@dataclass
class Job:
    """A named coroutine function and its trigger."""

    name: str
    trigger: BaseTrigger
    run: Callable[[], Awaitable[Any]]
    last_fire: datetime | None = None
    next_fire: datetime | None = field(default=None)
    first_fire: datetime | None = None
    """A run before the trigger's first (a cron strategy's tick at start), or None."""

    def schedule_first(self, now: datetime) -> None:
        """Set the first fire time: `first_fire`, or an interval's start, or the trigger's."""
        self.last_fire = None
        if isinstance(self.trigger, IntervalTrigger):
            # An interval fires at its start: the trigger alone would answer start + N for
            # a start already (just) past.
            self.next_fire = self.trigger.start_date
        else:
            self.schedule_next(now)
        if self.first_fire is not None and (
            self.next_fire is None or self.first_fire < self.next_fire
        ):
            self.next_fire = self.first_fire

    def schedule_next(self, now: datetime) -> None:
        """Ask the trigger for the next fire time after `now` (coalescing the missed ones)."""
        self.next_fire = self.trigger.get_next_fire_time(self.last_fire, now)
        # A trigger answers with the first fire ≥ its start; skip every one already past.
        while self.next_fire is not None and self.next_fire < now:
            self.last_fire = self.next_fire
            self.next_fire = self.trigger.get_next_fire_time(self.last_fire, now)


class Driver:
    """Runs jobs on simulated time: jumps a stepped clock, waits for an accelerated one."""

    def __init__(
        self, clock: Clock, jobs: list[Job], on_time: Callable[[datetime], Any] | None = None
    ) -> None:
        if not isinstance(clock, SteppedClock | AcceleratedClock):
            raise TypeError(
                "the driver needs a stepped or accelerated clock (real time: use start_realtime)"
            )
        self.clock = clock
        self.jobs = jobs
        self.on_time = on_time
        for job in jobs:
            job.schedule_first(clock.now())

    def add(self, job: Job) -> None:
        """Schedule one more job (a job of the same name is replaced)."""
        self.remove(job.name)
        job.schedule_first(self.clock.now())
        self.jobs.append(job)

    def remove(self, name: str) -> None:
        """Unschedule the job called `name` (a run already under way finishes)."""
        self.jobs[:] = [j for j in self.jobs if j.name != name]

    def next_fire_of(self, name: str) -> datetime | None:
        """When the job called `name` runs next (None: no such job, or no more runs)."""
        return next((j.next_fire for j in self.jobs if j.name == name), None)

    def next_fire(self) -> datetime | None:
        """When the next job is due."""
        times = [j.next_fire for j in self.jobs if j.next_fire is not None]
        return min(times) if times else None

    async def _reach(self, moment: datetime) -> None:
        if isinstance(self.clock, SteppedClock):
            self.clock.advance_to(max(moment, self.clock.now()))
        else:
            wait = (moment - self.clock.now()).total_seconds() / self.clock.factor
            if wait > 0:
                await asyncio.sleep(wait)
        if self.on_time is not None:
            result = self.on_time(self.clock.now())
            if asyncio.iscoroutine(result):
                await result

    async def step(self) -> list[str]:
        """Move to the next fire time and run every job due then; returns their names."""
        due = self.next_fire()
        if due is None:
            return []
        await self._reach(due)
        now = self.clock.now()
        ran = []
        for job in list(self.jobs):  # a job may add or remove jobs while it runs
            if job not in self.jobs:
                continue
            if job.next_fire is not None and job.next_fire <= now:
                job.last_fire = job.next_fire
                await job.run()
                ran.append(job.name)
                job.schedule_next(now + MICROSECOND)
        return ran

    async def run_until(self, end: datetime, stop: asyncio.Event | None = None) -> int:
        """Step until `end` (or `stop` is set); returns how many job runs happened."""
        runs = 0
        while (due := self.next_fire()) is not None and due <= end:
            if stop is not None and stop.is_set():
                return runs  # stopped: the clock stays where the last jobs ran
            runs += len(await self.step())
            if isinstance(self.clock, SteppedClock):
                # A stepped clock never waits: let signals, heartbeats and stop requests
                # in between steps.
                await asyncio.sleep(0)
        if isinstance(self.clock, SteppedClock) and self.clock.now() < end:
            await self._reach(end)
        return runs


@dataclass
class _Running:
    """One job in the real-time scheduler: its task, and whether a run is under way."""

    job: Job
    task: asyncio.Task[None] | None = None
    busy: bool = False
    removed: bool = False


class RealtimeScheduler:
    """Our jobs on real time: one task per job, time read from the injected clock.

    APScheduler's own scheduler is not used here: it reads the wall clock itself and, after
    a backward step of the clock, waits out the whole step before the next run (an hour
    back: no strategy tick, order poll or watchdog pulse for an hour). Here each job sleeps
    on the event loop's monotonic clock, at most `check_seconds` at a time, and a step of
    the clock (`ClockSteps`) moves every interval job's schedule by the step, so intervals
    stay intervals of real time. Cron jobs keep their wall-clock meaning: after a backward
    step they fire when the clock shows their time again (at most the step later), never
    twice for one time; after a forward one, a run missed by more than the grace is
    skipped, as any late run.

    Runs of one job never overlap; missed runs are coalesced into one; a run later than
    `misfire_grace_seconds` is skipped; a job that raises is logged and runs again at its
    next time.
    """

    def __init__(
        self,
        *,
        misfire_grace_seconds: int,
        clock: Clock | None = None,
        check_seconds: float = 1.0,
    ) -> None:
        self.misfire_grace_seconds = misfire_grace_seconds
        self.clock: Clock = clock if clock is not None else RealClock()
        self.check_seconds = check_seconds
        self._jobs: dict[str, _Running] = {}
        self._steps: ClockSteps | None = None
        self._log = get_logger("scheduler")

    @property
    def running(self) -> bool:
        """Started and not shut down."""
        return self._steps is not None

    def add(self, job: Job) -> None:
        """Schedule one job (a job of the same name is replaced)."""
        self.remove(job.name)
        job.schedule_first(self.clock.now())
        entry = _Running(job)
        self._jobs[job.name] = entry
        if self.running:
            entry.task = asyncio.create_task(self._drive(entry), name=f"job {job.name}")

    def next_fire_of(self, name: str) -> datetime | None:
        """When the job called `name` runs next (None: no such job, or no more runs)."""
        entry = self._jobs.get(name)
        return None if entry is None else entry.job.next_fire

    def remove(self, name: str) -> None:
        """Unschedule the job called `name` (a run already under way finishes)."""
        entry = self._jobs.pop(name, None)
        if entry is None:
            return
        entry.removed = True
        if entry.task is not None and not entry.busy:
            entry.task.cancel()

    def start(self) -> None:
        """Start dispatching (inside the running event loop)."""
        loop = asyncio.get_running_loop()
        self._steps = ClockSteps(self.clock, loop.time)
        for entry in self._jobs.values():
            entry.task = asyncio.create_task(self._drive(entry), name=f"job {entry.job.name}")

    def shutdown(self, wait: bool = True) -> None:
        """Stop dispatching: every job's task is cancelled, runs under way included."""
        self._steps = None
        for entry in self._jobs.values():
            entry.removed = True
            if entry.task is not None:
                entry.task.cancel()

    def _notice_steps(self) -> None:
        """Move every interval job by a step of the clock (noticed once, for all jobs)."""
        step = self._steps.step() if self._steps is not None else timedelta(0)
        if not step:
            return
        self._log.warning(
            "clock.stepped",
            seconds=round(step.total_seconds(), 3),
            message="the clock was stepped; interval jobs keep their real-time cadence",
        )
        for entry in self._jobs.values():
            job = entry.job
            if isinstance(job.trigger, IntervalTrigger):
                job.next_fire = None if job.next_fire is None else job.next_fire + step
                job.last_fire = None if job.last_fire is None else job.last_fire + step

    async def _drive(self, entry: _Running) -> None:
        job = entry.job
        while not entry.removed:
            self._notice_steps()
            now = self.clock.now()
            if job.next_fire is None:
                return  # the trigger has no more fire times
            wait = (job.next_fire - now).total_seconds()
            if wait > 0:
                await asyncio.sleep(min(wait, self.check_seconds))
                continue
            job.last_fire = job.next_fire
            if -wait <= self.misfire_grace_seconds:
                await self._run(entry)
            else:
                self._log.warning("job.missed", job=job.name, late_seconds=round(-wait, 3))
            self._notice_steps()
            job.schedule_next(self.clock.now() + MICROSECOND)

    async def _run(self, entry: _Running) -> None:
        entry.busy = True
        try:
            await entry.job.run()
        except Exception as exc:  # one job's failure never stops it or the others
            self._log.error("job.failed", job=entry.job.name, error=f"{type(exc).__name__}: {exc}")
        finally:
            entry.busy = False


def start_realtime(
    jobs: list[Job], *, misfire_grace_seconds: int, clock: Clock | None = None
) -> RealtimeScheduler:
    """Schedule the jobs on real time (`clock`, the wall clock by default) and start."""
    scheduler = RealtimeScheduler(misfire_grace_seconds=misfire_grace_seconds, clock=clock)
    for job in jobs:
        scheduler.add(job)
    scheduler.start()
    return scheduler
