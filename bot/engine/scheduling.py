"""One schedule definition, three ways of driving it.

Each job (a strategy's tick, the order tracker's poll, the command queue) has an
APScheduler trigger made from the config (`make_trigger`). The real-time daemon hands the
jobs to APScheduler's asyncio scheduler. Simulated time cannot use APScheduler (it has no
pluggable clock, and freezegun does not move asyncio's loop), so `Driver` asks the *same*
trigger objects for their next fire times (`get_next_fire_time`) and moves time itself:
a `SteppedClock` jumps straight to the next fire time (tests, backtests), an
`AcceleratedClock` is waited for (the paper demo). Missed runs are coalesced: a job that
should have fired several times during a pause runs once.

Both keep a live job set: `add` and `remove` change it while it runs (the daemon's
SIGHUP reload schedules added strategies and unschedules removed ones).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.clock import AcceleratedClock, Clock, SteppedClock
from bot.config import Schedule

__all__ = ["Driver", "Job", "RealtimeScheduler", "make_trigger", "start_realtime"]


def make_trigger(schedule: Schedule, start: datetime) -> BaseTrigger:
    """The trigger of a schedule: every N seconds from `start`, or a cron line in UTC."""
    if schedule.interval_seconds is not None:
        return IntervalTrigger(seconds=schedule.interval_seconds, start_date=start, timezone=UTC)
    assert schedule.cron is not None
    return CronTrigger.from_crontab(schedule.cron, timezone=UTC)


@dataclass
class Job:
    """A named coroutine function and its trigger."""

    name: str
    trigger: BaseTrigger
    run: Callable[[], Awaitable[Any]]
    last_fire: datetime | None = None
    next_fire: datetime | None = field(default=None)

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
            job.schedule_next(clock.now())

    def add(self, job: Job) -> None:
        """Schedule one more job (a job of the same name is replaced)."""
        self.remove(job.name)
        job.last_fire = None
        job.schedule_next(self.clock.now())
        self.jobs.append(job)

    def remove(self, name: str) -> None:
        """Unschedule the job called `name` (a run already under way finishes)."""
        self.jobs[:] = [j for j in self.jobs if j.name != name]

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
                job.schedule_next(now + timedelta(microseconds=1))
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


class RealtimeScheduler:
    """APScheduler's asyncio scheduler with our jobs: real time."""

    def __init__(self, *, misfire_grace_seconds: int) -> None:
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        self.misfire_grace_seconds = misfire_grace_seconds
        self.scheduler = AsyncIOScheduler(timezone=UTC)

    def add(self, job: Job) -> None:
        """Schedule one job (a job of the same name is replaced)."""
        # An interval fires at its start, as under the Driver: by the time the scheduler
        # asks, `start` is a moment past and the trigger alone would answer start + N.
        start = job.trigger.start_date if isinstance(job.trigger, IntervalTrigger) else None
        first = {} if start is None else {"next_run_time": start}
        self.scheduler.add_job(
            job.run,
            job.trigger,
            id=job.name,
            name=job.name,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=self.misfire_grace_seconds,
            replace_existing=True,
            **first,
        )

    def remove(self, name: str) -> None:
        """Unschedule the job called `name` (a run already under way finishes)."""
        from apscheduler.jobstores.base import JobLookupError

        with contextlib.suppress(JobLookupError):  # not scheduled: nothing to do
            self.scheduler.remove_job(name)

    def start(self) -> None:
        """Start dispatching (inside the running event loop)."""
        self.scheduler.start()

    def shutdown(self, wait: bool = True) -> None:
        """Stop dispatching."""
        self.scheduler.shutdown(wait=wait)


def start_realtime(jobs: list[Job], *, misfire_grace_seconds: int) -> RealtimeScheduler:
    """Hand the jobs to APScheduler's asyncio scheduler (real time) and start it."""
    scheduler = RealtimeScheduler(misfire_grace_seconds=misfire_grace_seconds)
    for job in jobs:
        scheduler.add(job)
    scheduler.start()
    return scheduler
