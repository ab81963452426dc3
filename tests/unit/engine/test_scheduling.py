"""The driver on a stepped clock: a stop request is seen between steps, and time stays put."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.clock import SteppedClock
from bot.config import Schedule
from bot.engine.scheduling import Driver, Job, make_trigger

START = datetime(2026, 1, 1, tzinfo=UTC)


async def test_a_stop_set_by_another_task_ends_a_stepped_run_where_it_was() -> None:
    clock = SteppedClock(START)
    runs: list[datetime] = []

    async def tick() -> None:  # never suspends, like an in-process paper world call
        runs.append(clock.now())

    driver = Driver(clock, [Job("tick", make_trigger(Schedule(interval_seconds=60), START), tick)])
    stop = asyncio.Event()

    async def stop_soon() -> None:
        while len(runs) < 5:
            await asyncio.sleep(0)
        stop.set()

    far = START + timedelta(days=36_500)
    stopper = asyncio.create_task(stop_soon())
    await asyncio.wait_for(driver.run_until(far, stop), timeout=10)
    await stopper
    # The other task got its turn within a step or two, and the clock did not jump to `far`
    # (a stepped paper world would then simulate a century when asked for a price).
    assert 5 <= len(runs) <= 7
    assert clock.now() == runs[-1] < START + timedelta(hours=1)


async def test_an_unstopped_stepped_run_ends_at_its_end_time() -> None:
    clock = SteppedClock(START)
    runs = 0

    async def tick() -> None:
        nonlocal runs
        runs += 1

    driver = Driver(clock, [Job("t", make_trigger(Schedule(interval_seconds=600), START), tick)])
    await driver.run_until(START + timedelta(hours=1, minutes=5))
    assert runs == 7  # 0:00, 0:10, … 1:00
    assert clock.now() == START + timedelta(hours=1, minutes=5)
