"""Retention of the journal's price ticks: downsampling and dropping, checked by hand."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.history.retention import apply_retention
from bot.journal import Journal, JournalError, PriceTickRow, prices

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
OLD_DAY = datetime(2026, 1, 10, tzinfo=UTC)  # well before NOW - 90 days
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def at(day: datetime, hh: int, mm: int) -> datetime:
    return day + timedelta(hours=hh, minutes=mm)


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as opened:
        old = [(0, 0), (0, 20), (0, 40), (1, 10), (1, 50), (2, 5)]
        opened.add_price_ticks(
            PriceTickRow(at(OLD_DAY, h, m), APT, Decimal(f"5.{h}{m:02d}")) for h, m in old
        )
        # USDC: inserted newest first, so the first of a bucket is not the first row id.
        opened.add_price_ticks(
            PriceTickRow(at(OLD_DAY, 0, m), USDC, Decimal(f"1.{m:02d}")) for m in (59, 30, 1)
        )
        recent = NOW - timedelta(days=1)
        opened.add_price_ticks(
            PriceTickRow(recent + timedelta(minutes=m), APT, Decimal(6)) for m in range(3)
        )
        yield opened


def stamps(journal: Journal, token: str) -> list[datetime]:
    return [t.timestamp for t in journal.price_ticks(token)]


@pytest.mark.parametrize("batch", [20_000, 3, 2, 1])
def test_downsampling_keeps_the_first_tick_of_each_bucket_per_token(
    journal: Journal, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prices, "_DOWNSAMPLE_BATCH", batch)  # batch edges must not change a thing
    report = apply_retention(journal, NOW, retention_days=90, downsample_seconds=3600)
    assert report is not None
    assert (report.mode, report.deleted, report.kept) == ("downsample", 5, 4)
    assert report.cutoff == NOW - timedelta(days=90)
    recent = NOW - timedelta(days=1)
    assert stamps(journal, APT) == [
        at(OLD_DAY, 0, 0),  # 00:00 of the 00:00-01:00 bucket (00:20, 00:40 go)
        at(OLD_DAY, 1, 10),  # first of 01:00-02:00 (01:50 goes)
        at(OLD_DAY, 2, 5),
        *(recent + timedelta(minutes=m) for m in range(3)),  # newer than the cutoff: all kept
    ]
    assert [t.usd_price for t in journal.price_ticks(APT)][:3] == [
        Decimal("5.000"),
        Decimal("5.110"),
        Decimal("5.205"),
    ]
    assert stamps(journal, USDC) == [at(OLD_DAY, 0, 1)]  # the earliest, not the first stored
    again = apply_retention(journal, NOW, retention_days=90, downsample_seconds=3600)
    assert again is not None and (again.deleted, again.kept) == (0, 4)  # nothing more to do


def test_buckets_are_aligned_to_the_epoch(journal: Journal) -> None:
    report = apply_retention(journal, NOW, retention_days=90, downsample_seconds=2 * 3600)
    assert report is not None
    # Two-hour buckets from midnight: 00:00-02:00 keeps 00:00, 02:00-04:00 keeps 02:05.
    assert stamps(journal, APT)[:2] == [at(OLD_DAY, 0, 0), at(OLD_DAY, 2, 5)]
    assert report.deleted == 4 + 2


def test_dropping_deletes_every_old_tick_and_nothing_newer(journal: Journal) -> None:
    report = apply_retention(journal, NOW, retention_days=90, downsample_seconds=None)
    assert report is not None
    assert (report.mode, report.deleted, report.kept) == ("drop", 9, 0)
    assert len(stamps(journal, APT)) == 3 and stamps(journal, USDC) == []
    assert "dropped 9" in report.line()


def test_a_tick_exactly_at_the_cutoff_is_kept(journal: Journal) -> None:
    now = at(OLD_DAY, 0, 40) + timedelta(days=1)  # cutoff = 00:40 of the old day
    apply_retention(journal, now, retention_days=1, downsample_seconds=3600)
    assert stamps(journal, APT)[:5] == [
        at(OLD_DAY, 0, 0),  # 00:20 went; 00:40 is not older than the cutoff
        at(OLD_DAY, 0, 40),
        at(OLD_DAY, 1, 10),
        at(OLD_DAY, 1, 50),
        at(OLD_DAY, 2, 5),
    ]


def test_no_retention_keeps_everything(journal: Journal) -> None:
    assert apply_retention(journal, NOW, retention_days=None, downsample_seconds=3600) is None
    assert len(stamps(journal, APT)) == 9


def test_a_read_only_journal_is_refused(tmp_path: Path, journal: Journal) -> None:
    with (
        Journal.open(f"sqlite:///{tmp_path / 'bot.db'}", readonly=True) as reader,
        pytest.raises(JournalError, match="read-only"),
    ):
        apply_retention(reader, NOW, retention_days=90, downsample_seconds=3600)
