"""SIGHUP planning: what changes live, what needs a restart; the gate; live job sets."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from bot.clock import SteppedClock
from bot.config import Schedule, Settings, StrategyEntry
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.ops.reload import ReloadGate, plan_reload


def entry(name: str, **changes: Any) -> StrategyEntry:
    base: dict[str, Any] = {
        "name": name,
        "plugin": "recurring_dca",
        "schedule": Schedule(interval_seconds=60),
        "params": {"amount_per_order": "25"},
    }
    return StrategyEntry(**(base | changes))


def settings(*entries: StrategyEntry, **sections: Any) -> Settings:
    return Settings(strategies=list(entries), **sections)


def test_strategies_added_removed_rebuilt_and_unchanged_are_told_apart() -> None:
    running = settings(entry("keep"), entry("drop"), entry("tune"), entry("move"))
    new = settings(
        entry("keep"),
        entry("tune", params={"amount_per_order": "30"}),
        entry("move", schedule=Schedule(cron="0 * * * *")),
        entry("fresh"),
    )
    plan = plan_reload(running, new)
    assert plan.added == ("fresh",)
    assert plan.removed == ("drop",)
    assert plan.rebuilt == ("tune", "move")
    assert plan.unchanged == ("keep",)
    assert plan.restart_needed == ()
    assert plan.summary() == "added fresh; removed drop; rebuilt tune, move; 1 unchanged"
    assert list(plan.entries) == ["keep", "tune", "move", "fresh"]


def test_a_budget_change_rebuilds_and_disabling_removes() -> None:
    running = settings(entry("a"), entry("b"))
    new = settings(entry("a", budget={"USDC": Decimal(5)}), entry("b", enabled=False))
    plan = plan_reload(running, new)
    assert plan.rebuilt == ("a",) and plan.removed == ("b",)


def test_sections_wired_at_start_need_a_restart_and_are_not_applied() -> None:
    running = settings(entry("a"))
    new = running.model_copy(
        update={
            "mode": "live",
            "api": running.api.model_copy(update={"base_url": "http://127.0.0.1:9"}),
            "scheduler": running.scheduler.model_copy(update={"tracker_interval_seconds": 5}),
            "daemon": running.daemon.model_copy(
                update={"status_file": "/tmp/elsewhere.json", "heartbeat_seconds": 5}
            ),
        }
    )
    plan = plan_reload(running, new)
    assert plan.restart_needed == (
        "mode",
        "[api]",
        "[scheduler].tracker_interval_seconds",
        "[daemon].status_file",
    )
    after = plan.settings
    assert after.mode == "paper" and after.api == running.api
    assert after.scheduler.tracker_interval_seconds == 60
    assert after.daemon.status_file is None and after.daemon.heartbeat_seconds == 5
    assert plan.applied == ("[daemon]",)


def test_risk_alerts_and_live_scheduler_keys_are_applied() -> None:
    running = settings(entry("a"))
    new = running.model_copy(
        update={
            "risk": running.risk.model_copy(update={"max_open_orders": 3}),
            "alerts": running.alerts.model_copy(update={"max_per_minute": 2}),
            "scheduler": running.scheduler.model_copy(update={"strategy_timeout_seconds": 9}),
        }
    )
    plan = plan_reload(running, new)
    assert plan.risk_changed and plan.alerts_changed
    assert plan.applied == ("[risk]", "[alerts]", "[scheduler].strategy_timeout_seconds")
    assert plan.settings.risk.max_open_orders == 3
    assert plan.settings.scheduler.strategy_timeout_seconds == 9
    assert plan.rebuilt == ()  # a timeout change rebuilds nothing


def test_new_strategy_folders_rebuild_every_strategy() -> None:
    running = settings(entry("a"), entry("b"))
    new = running.model_copy(
        update={"scheduler": running.scheduler.model_copy(update={"strategy_dirs": ["/x"]})}
    )
    assert plan_reload(running, new).rebuilt == ("a", "b")


async def test_the_gate_waits_for_running_jobs_and_holds_new_ones() -> None:
    gate = ReloadGate()
    events: list[str] = []
    job_may_finish = asyncio.Event()

    async def job(name: str, wait: asyncio.Event | None = None) -> None:
        async with gate.job():
            events.append(f"{name} start")
            if wait is not None:
                await wait.wait()
            events.append(f"{name} end")

    async def reload() -> None:
        async with gate.reload():
            events.append("reload")

    first = asyncio.create_task(job("first", job_may_finish))
    await asyncio.sleep(0)
    reloading = asyncio.create_task(reload())
    await asyncio.sleep(0)
    second = asyncio.create_task(job("second"))
    await asyncio.sleep(0.01)
    assert events == ["first start"]  # the reload waits; the new job waits behind it
    job_may_finish.set()
    await asyncio.gather(first, reloading, second)
    assert events == ["first start", "first end", "reload", "second start", "second end"]


async def test_the_driver_takes_jobs_added_and_removed_while_it_runs() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = SteppedClock(start)
    ran: list[tuple[str, datetime]] = []
    jobs: list[Job] = []

    def job(name: str, seconds: int, at: datetime) -> Job:
        async def run() -> None:
            ran.append((name, clock.now()))

        return Job(name, make_trigger(Schedule(interval_seconds=seconds), at), run)

    driver = Driver(clock, jobs)
    driver.add(job("a", 60, start))
    await driver.run_until(start + timedelta(seconds=120))
    driver.remove("a")
    driver.add(job("b", 30, clock.now()))
    await driver.run_until(start + timedelta(seconds=180))
    assert [n for n, _ in ran] == ["a", "a", "a", "b", "b", "b"]
    assert ran[3][1] == start + timedelta(seconds=120)
