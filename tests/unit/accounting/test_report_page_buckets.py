"""The HTML report's buckets: local midnights across a DST change and a year's end."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.accounting import BucketPeriod
from bot.app.report_page import bucket_ends, default_period

BERLIN = ZoneInfo("Europe/Berlin")
TICK = timedelta(microseconds=1)


def test_a_day_across_the_spring_change_is_23_hours() -> None:
    # Sunday 29 March 2026: Berlin goes from UTC+1 to UTC+2 at 02:00 local.
    opens = datetime(2026, 3, 28, 12, tzinfo=UTC)
    closes = datetime(2026, 3, 30, 12, tzinfo=UTC)
    ends = bucket_ends(opens, closes, BucketPeriod.DAY, BERLIN)
    assert [label for label, _ in ends] == ["2026-03-28", "2026-03-29", "2026-03-30"]
    # Local midnights: 29 March 00:00 CET = 23:00 UTC; 30 March 00:00 CEST = 22:00 UTC.
    assert ends[0][1] == datetime(2026, 3, 28, 23, tzinfo=UTC) - TICK
    assert ends[1][1] == datetime(2026, 3, 29, 22, tzinfo=UTC) - TICK
    assert ends[2][1] == closes  # the last bucket ends at the valuation


def test_weeks_and_months_roll_over_the_year() -> None:
    opens = datetime(2026, 12, 20, tzinfo=UTC)
    closes = datetime(2027, 1, 10, tzinfo=UTC)
    months = bucket_ends(opens, closes, BucketPeriod.MONTH, UTC)
    assert months == [("2026-12", datetime(2027, 1, 1, tzinfo=UTC) - TICK), ("2027-01", closes)]
    weeks = bucket_ends(opens, closes, BucketPeriod.WEEK, UTC)
    assert [label for label, _ in weeks] == ["2026-W51", "2026-W52", "2026-W53", "2027-W01"]
    assert weeks[0][1] == datetime(2026, 12, 21, tzinfo=UTC) - TICK  # Monday 21 December


def test_the_default_bucket_follows_the_window() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert default_period(start, start + timedelta(days=92)) is BucketPeriod.DAY
    assert default_period(start, start + timedelta(days=93)) is BucketPeriod.WEEK
    assert default_period(start, start + timedelta(days=731)) is BucketPeriod.MONTH
