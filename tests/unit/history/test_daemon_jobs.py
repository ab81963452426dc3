"""`[record]` as a side job of the daemon: the jobs `daemon_record_jobs` hands it, run on
the same stepped driver the daemon uses for a paper world."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import structlog

from bot.app.record_jobs import daemon_record_jobs
from bot.app.runtime import Runtime
from bot.config import Settings
from bot.engine.scheduling import Driver
from bot.journal import PriceTickRow
from bot.paper.core.series import load_series

DCA = {
    "name": "dca",
    "plugin": "recurring_dca",
    "schedule": {"interval_seconds": 3600},
    "params": {
        "from_token": "USDC",
        "to_token": "APT",
        "amount_per_order": "25",
        "interval": "1 day",
        "orders": 7,
    },
}


def settings(tmp_path: Path, **record: Any) -> Settings:
    return Settings(
        mode="paper",
        journal={"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        paper={"clock": "stepped"},
        record=record,
        strategies=[DCA],
    )


async def test_recording_and_retention_jobs_run_on_the_daemons_driver(tmp_path: Path) -> None:
    config = settings(
        tmp_path, enabled=True, every_seconds=60, out=str(tmp_path / "p.csv"), retention_days=1
    )
    runtime = await Runtime.open(config, with_signer=False)
    async with runtime:
        start = runtime.clock.now()
        old = start - timedelta(days=2)
        runtime.journal.add_price_ticks(
            PriceTickRow(old + timedelta(minutes=m), "0x1::aptos_coin::AptosCoin", Decimal(4))
            for m in range(3)
        )
        jobs = daemon_record_jobs(config, runtime, start)
        assert [job.name for job in jobs] == ["record-retention", "record"]
        runs = await Driver(runtime.clock, jobs).run_until(start + timedelta(minutes=5))
        apt = runtime.tokens.find("APT").address
        usdc = runtime.tokens.find("USDC").address
        recorded = runtime.journal.price_ticks(apt, since=start)
        assert runs == 1 + 6  # retention at start; polls at 0, 1, …, 5 minutes
        assert [t.timestamp for t in recorded] == [start + timedelta(minutes=m) for m in range(6)]
        assert {t.source for t in recorded} == {"paper"}  # a paper world's prices: simulated
        assert len(runtime.journal.price_ticks(usdc)) == 6  # the strategy's two tokens
        assert len(runtime.journal.price_ticks(apt, until=start)) == 1  # downsampled to 1/h
    paths, report = load_series(tmp_path / "p.csv")
    assert len(paths[apt].times) == 6 and report.sources == {"paper"}


async def test_disabled_recording_adds_no_job(tmp_path: Path) -> None:
    config = settings(tmp_path)
    runtime = await Runtime.open(config, with_signer=False)
    async with runtime:
        assert daemon_record_jobs(config, runtime, runtime.clock.now()) == []


async def test_bad_record_settings_are_logged_and_the_daemon_goes_on(tmp_path: Path) -> None:
    config = settings(
        tmp_path,
        enabled=True,
        tokens=["APT", "NOPE"],
        to_journal=False,
        out=str(tmp_path / "p.txt"),
    )
    runtime = await Runtime.open(config, with_signer=False)
    async with runtime:
        with structlog.testing.capture_logs() as logs:
            jobs = daemon_record_jobs(config, runtime, runtime.clock.now())
    assert jobs == []  # no file and no journal: nowhere to record
    problems = [e.get("problem", e.get("reason")) for e in logs if e["log_level"] == "error"]
    assert any("'NOPE'" in str(p) for p in problems)
    assert any("[record].out" in str(p) for p in problems)
    assert any("nowhere to record" in str(p) for p in problems)
