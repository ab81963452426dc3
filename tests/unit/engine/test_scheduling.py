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


async def test_a_cron_strategy_ticks_once_at_start_then_on_its_slots() -> None:
    clock = SteppedClock(START + timedelta(hours=5))  # Thursday 05:00; the cron is at noon
    runs: list[datetime] = []

    async def tick() -> None:
        runs.append(clock.now())

    job = Job("t", make_trigger(Schedule(cron="0 12 * * *"), clock.now()), tick)
    job.first_fire = clock.now()
    driver = Driver(clock, [job])
    assert driver.next_fire_of("t") == START + timedelta(hours=5)
    await driver.run_until(START + timedelta(days=1, hours=13))
    assert runs == [
        START + timedelta(hours=5),
        START + timedelta(hours=12),
        START + timedelta(days=1, hours=12),
    ]


async def test_without_a_first_fire_a_cron_waits_for_its_slot() -> None:
    clock = SteppedClock(START + timedelta(hours=5))
    job = Job("t", make_trigger(Schedule(cron="0 12 * * *"), clock.now()), _nothing)
    driver = Driver(clock, [job])
    assert driver.next_fire_of("t") == START + timedelta(hours=12)
    assert driver.next_fire_of("missing") is None


async def _nothing() -> None:
    return None
