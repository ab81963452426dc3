"""The recorder against an embedded paper world on a stepped clock (no sockets, real files)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.aptos.tokens import Token
from bot.clock import SteppedClock
from bot.config import PaperFaultSettings, PaperSettings
from bot.history.recorder import PriceRecorder, SeriesFile
from bot.journal import Journal
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.core.series import load_series
from bot.paper.world import PaperWorld, build_world
from tests.support.paper_rig import no_wait

T0 = datetime(2026, 1, 1, tzinfo=UTC)
APT_KEY = "0x1::aptos_coin::AptosCoin"


@asynccontextmanager
async def world_client(
    attempts: int = 4, **paper: Any
) -> AsyncIterator[tuple[PaperWorld, PanoraClient]]:
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            **paper,
        )
    )
    client = PanoraClient(
        base_url="http://paper",
        api_key=SecretStr("k"),
        transport=httpx.ASGITransport(app=world.app),
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
        sleep=no_wait,
        max_attempts=attempts,
    )
    try:
        yield world, client
    finally:
        await client.aclose()


def clock_of(world: PaperWorld) -> SteppedClock:
    clock = world.market.clock
    assert isinstance(clock, SteppedClock)
    return clock


def tokens(world: PaperWorld, *names: str) -> list[Token]:
    return [world.market.tokens.find(name) for name in names]


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as opened:
        yield opened


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
async def test_n_polls_give_n_ticks_per_token_in_journal_and_file(
    tmp_path: Path, journal: Journal, suffix: str
) -> None:
    out = tmp_path / f"prices{suffix}"
    async with world_client() as (world, client):
        apt, usdc = tokens(world, "APT", "USDC")
        recorder = PriceRecorder(
            client,
            clock_of(world),
            [apt, usdc],
            every_seconds=60,
            origin="paper",
            journal=journal,
            out=SeriesFile(out),
        )
        shown = []
        for minute in range(4):
            clock_of(world).advance_to(T0 + timedelta(minutes=minute, seconds=0.75))
            report = await recorder.poll()
            assert (report.ok, report.recorded, report.journal_added, report.file_added) == (
                True,
                2,
                2,
                2,
            )
            shown.append(world.market.prices.usd(apt.address, clock_of(world).now()))
    ticks = journal.price_ticks(apt.address)
    assert [t.timestamp for t in ticks] == [T0 + timedelta(minutes=m) for m in range(4)]  # whole s
    assert [t.usd_price for t in ticks] == shown  # exactly what the provider showed
    assert len(journal.price_ticks(usdc.address)) == 4
    paths, report = load_series(out)
    assert (report.rows, report.skipped, report.duplicates) == (8, 0, 0)
    assert paths[apt.address].prices == shown
    assert paths[apt.address].times == [t.timestamp for t in ticks]
    assert recorder.polls == 4 and recorder.recorded == 8 and recorder.failed == 0


async def test_a_duplicate_timestamp_is_skipped_and_logged(
    tmp_path: Path, journal: Journal
) -> None:
    out = tmp_path / "prices.csv"
    async with world_client() as (world, client):
        (apt,) = tokens(world, "APT")
        recorder = PriceRecorder(
            client,
            clock_of(world),
            [apt],
            every_seconds=60,
            origin="paper",
            journal=journal,
            out=SeriesFile(out),
        )
        first = await recorder.poll()
        with structlog.testing.capture_logs() as logs:
            again = await recorder.poll()  # the clock has not moved: same timestamp
    assert (first.journal_added, first.file_added, first.duplicates) == (1, 1, 0)
    assert (again.journal_added, again.file_added, again.duplicates) == (0, 0, 2)
    assert "duplicate" in again.line()
    assert [e["event"] for e in logs if e["log_level"] != "debug"] == ["record.duplicate"]
    assert len(journal.price_ticks(apt.address)) == 1
    assert load_series(out)[1].rows == 1


async def test_a_restarted_recorder_skips_what_the_file_already_has(tmp_path: Path) -> None:
    out = tmp_path / "prices.parquet"
    async with world_client() as (world, client):
        (apt,) = tokens(world, "APT")
        clock = clock_of(world)
        first = PriceRecorder(
            client, clock, [apt], every_seconds=60, origin="paper", out=SeriesFile(out)
        )
        await first.poll()
        clock.advance(timedelta(minutes=1))
        await first.poll()
        # A second run of a stepped world starts at the same time: its first tick is old.
        restarted = PriceRecorder(
            client, clock, [apt], every_seconds=60, origin="paper", out=SeriesFile(out)
        )
        assert (await restarted.poll()).file_added == 0
        clock.advance(timedelta(minutes=1))
        assert (await restarted.poll()).file_added == 1
    assert load_series(out)[0][apt.address].times == [T0 + timedelta(minutes=m) for m in range(3)]


async def test_failing_polls_are_logged_and_the_recorder_goes_on(journal: Journal) -> None:
    faults = PaperFaultSettings(seed=3, server_error=Decimal("0.5"), endpoints=["/prices"])
    async with world_client(attempts=1, faults=faults) as (world, client):
        apt, usdc = tokens(world, "APT", "USDC")
        recorder = PriceRecorder(
            client, clock_of(world), [apt, usdc], every_seconds=60, origin="paper", journal=journal
        )
        reports = []
        with structlog.testing.capture_logs() as logs:
            for _ in range(12):
                reports.append(await recorder.poll())
                clock_of(world).advance(timedelta(minutes=1))
    failed = [r for r in reports if not r.ok]
    good = [r for r in reports if r.ok]
    assert failed and good  # the seed gives both
    assert all(r.recorded == 0 and "poll failed" in r.line() for r in failed)
    assert recorder.failed == len(failed)
    assert len(journal.price_ticks(apt.address)) == len(good)
    assert len(journal.price_ticks(usdc.address)) == len(good)
    events = [entry["event"] for entry in logs]
    assert events.count("record.poll_failed") == len(failed)
    # A good poll after failed ones (once there was a good one) is logged as a gap.
    expected_gaps, last_good = [], None
    for report in good:
        if last_good is not None and report.at - last_good > timedelta(seconds=60):
            expected_gaps.append(int((report.at - last_good).total_seconds()))
        last_good = report.at
    assert expected_gaps  # the seed gives a failure between good polls
    assert [r.gap_seconds for r in good if r.gap_seconds is not None] == expected_gaps
    assert events.count("record.gap") == len(expected_gaps)


async def test_a_token_without_a_price_is_reported_and_the_others_recorded(
    journal: Journal,
) -> None:
    async with world_client() as (world, client):
        prices = world.market.prices
        hidden = next(t for t in world.market.tokens if not prices.is_visible(t.address))
        (apt,) = tokens(world, "APT")
        recorder = PriceRecorder(
            client,
            clock_of(world),
            [apt, hidden],
            every_seconds=60,
            origin="paper",
            journal=journal,
        )
        with structlog.testing.capture_logs() as logs:
            report = await recorder.poll()
    assert (report.recorded, report.missing) == (1, (hidden.symbol,))
    assert "no price" in report.line()
    assert [e["event"] for e in logs if e["log_level"] != "debug"] == ["record.no_price"]
    assert journal.price_ticks(hidden.address) == []


async def test_a_failed_file_write_is_logged_and_the_journal_still_records(
    tmp_path: Path, journal: Journal
) -> None:
    out = tmp_path / "prices.csv"
    async with world_client() as (world, client):
        (apt,) = tokens(world, "APT")
        recorder = PriceRecorder(
            client,
            clock_of(world),
            [apt],
            every_seconds=60,
            origin="paper",
            journal=journal,
            out=SeriesFile(out),
        )
        out.mkdir()  # the file's place is taken by a folder: every append fails
        with structlog.testing.capture_logs() as logs:
            report = await recorder.poll()
            clock_of(world).advance(timedelta(minutes=1))
            second = await recorder.poll()
    assert (report.journal_added, report.file_added) == (1, 0)
    assert report.error is not None and "file write failed" in report.error
    assert second.journal_added == 1
    assert [e["event"] for e in logs].count("record.write_failed") == 2


def test_an_out_file_must_be_csv_or_parquet(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        SeriesFile(tmp_path / "prices.txt")
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="not a readable series file"):
        SeriesFile(tmp_path / "junk.parquet")


async def test_a_recording_is_replayed_by_the_paper_world(tmp_path: Path) -> None:
    out = tmp_path / "recorded.csv"
    async with world_client(seed=9) as (world, client):
        apt, usdc = tokens(world, "APT", "USDC")
        recorder = PriceRecorder(
            client,
            clock_of(world),
            [apt, usdc],
            every_seconds=300,
            origin="paper",
            out=SeriesFile(out),
        )
        seen = {}
        for step in range(3):
            clock_of(world).advance_to(T0 + timedelta(minutes=5 * step))
            await recorder.poll()
            seen[clock_of(world).now()] = world.market.prices.usd(
                apt.address, clock_of(world).now()
            )
    replay = PaperMarket(MarketConfig(prices_file=str(out)), SteppedClock(T0))
    for moment, price in seen.items():
        assert replay.prices.usd(apt.address, moment + timedelta(seconds=59)) == price
    # Its FA spelling finds the same replayed path (the paper world merges the identities).
    assert apt.fa_address is not None
    assert replay.prices.usd(apt.fa_address, T0) == seen[T0]
