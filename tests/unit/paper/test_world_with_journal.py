"""A paper world that outlives its runs: one story with its journal (issue 22, item 3).

An embedded world is kept beside its journal and restored; whether made anew (its
snapshot gone) or restored from a snapshot older than the journal (a kill -9 between two
saves), its clock never starts behind the journal's latest time and it never issues an
order id the journal already holds.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.app.runtime import SNAPSHOT_SUFFIX, embedded_snapshot
from bot.config import PaperSettings, Settings
from bot.paper.world import SnapshotError, build_world, make_clock, write_snapshot
from tests.support.paper_service import CREATE, client_for, dca_body, paper_settings

LATER = datetime(2027, 6, 1, 12, tzinfo=UTC)
WALLET = "0x" + "ab" * 32


async def new_dca(world: Any) -> str:
    async with client_for(world.provider_api) as client:
        fund = {"wallet": WALLET, "token": "APT", "amount": "100"}
        assert (await client.post("/paper/v1/fund", json=fund)).status_code == 200
        response = await client.post(CREATE, json=dca_body("1"))
        assert response.status_code == 200, response.text
        order_id: str = response.json()["panoraTxId"]
        return order_id


@pytest.mark.parametrize("clock", ["stepped", "accelerated"])
def test_a_new_world_starts_no_earlier_than_the_journal(clock: str) -> None:
    settings = paper_settings(clock=clock, start="2026-01-01T00:00:00Z")
    hour = timedelta(hours=1)  # an accelerated clock runs on meanwhile (60 × real time)
    assert LATER <= build_world(settings, not_before=LATER).market.now < LATER + hour
    start = datetime(2026, 1, 1, tzinfo=UTC)
    earlier = datetime(2025, 1, 1, tzinfo=UTC)  # a journal behind the start changes nothing
    assert start <= build_world(settings, not_before=earlier).market.now < start + hour


def test_a_real_clock_is_the_real_clock_whatever_the_journal() -> None:
    clock = make_clock(paper_settings(clock="real"), not_before=LATER)
    assert clock.now() < LATER


def test_a_restored_world_continues_from_its_time_or_the_journals_if_later(
    tmp_path: Path,
) -> None:
    settings = paper_settings(snapshot_file=tmp_path / "world.pickle")
    world = build_world(settings, escrow_style="escrow")
    saved = world.market.now
    world.save()
    restored = build_world(settings, not_before=saved - timedelta(days=1))
    assert restored.market.clock.now() == saved
    restored = build_world(settings, not_before=LATER)
    assert restored.market.clock.now() == LATER
    restored.market.sync()  # the market catches up with its clock
    assert restored.market.now == LATER


async def test_an_order_id_the_journal_holds_is_never_issued_again(tmp_path: Path) -> None:
    settings = paper_settings(snapshot_file=tmp_path / "world.pickle")
    first = await new_dca(build_world(settings, escrow_style="escrow"))
    # A new world with the same seed issues the same first id: unless the journal has it.
    assert await new_dca(build_world(settings, escrow_style="escrow")) == first
    world = build_world(settings, escrow_style="escrow", taken_order_ids=[first.upper()])
    second = await new_dca(world)
    assert second != first
    # A snapshot keeps the counter, not the reservations (the journal gives them anew).
    world.save()
    restored = build_world(settings, escrow_style="escrow", taken_order_ids=[first, second])
    third = await new_dca(restored)
    assert third not in (first, second)


def test_a_snapshot_is_written_whole_under_a_name_of_this_process(tmp_path: Path) -> None:
    target = tmp_path / "data" / "world.pickle"  # its folder is made
    write_snapshot(target, b"one")
    write_snapshot(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["world.pickle"]
    assert f".world.pickle.{os.getpid()}.tmp" not in os.listdir(target.parent)


def test_a_snapshot_that_cannot_be_read_is_refused_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / "world.pickle"
    folder.mkdir()  # e.g. a volume mounted at the file's path
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        build_world(paper_settings(snapshot_file=folder))


def settings_for(**values: Any) -> Settings:
    return Settings(**values)


def test_the_embedded_world_lives_beside_its_sqlite_journal(tmp_path: Path) -> None:
    journal = tmp_path / "data" / "journal.db"
    beside = settings_for(mode="paper", journal={"url": f"sqlite:///{journal}"})
    assert embedded_snapshot(beside) == tmp_path / "data" / f"journal{SNAPSHOT_SUFFIX}"
    configured = settings_for(
        mode="paper",
        journal={"url": f"sqlite:///{journal}"},
        paper=PaperSettings(snapshot_file=tmp_path / "mine.pickle"),
    )
    assert embedded_snapshot(configured) == tmp_path / "mine.pickle"
    # No file journal, a served world, live mode: nothing to keep beside.
    assert embedded_snapshot(settings_for(mode="paper", journal={"url": "sqlite://"})) is None
    served = settings_for(
        mode="paper",
        journal={"url": f"sqlite:///{journal}"},
        paper=PaperSettings(url="http://127.0.0.1:8080"),
    )
    assert embedded_snapshot(served) is None
    live = settings_for(mode="live", journal={"url": f"sqlite:///{journal}"})
    assert embedded_snapshot(live) is None
