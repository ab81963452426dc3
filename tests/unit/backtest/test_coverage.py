"""Warnings about the prices: a window past the data's end, rows skipped or replaced."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from bot.backtest.coverage import data_warnings, describe_span
from bot.backtest.feed import feed_from_points, load_feed

APT = "0x1::aptos_coin::AptosCoin"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


def hourly(count: int, step: timedelta = HOUR) -> tuple[list[datetime], list[Decimal]]:
    return [T0 + i * step for i in range(count)], [Decimal(5 + i) for i in range(count)]


def test_a_window_past_the_data_end_is_one_line() -> None:
    feed = feed_from_points({APT: hourly(24)}, "apt.csv")  # last point 23:00 on day 1
    end = T0 + timedelta(days=10)
    (line,) = data_warnings(feed, {APT: "APT"}, T0, end)
    assert line == (
        "the prices of APT end at 2026-01-01T23:00:00Z, 9 days 1 h before the window's end "
        "2026-01-11T00:00:00Z: the last price is held to the end"
    )


def test_the_last_point_holds_for_a_step_or_two_without_a_warning() -> None:
    hourly_feed = feed_from_points({APT: hourly(24)}, "apt.csv")
    assert data_warnings(hourly_feed, {APT: "APT"}, T0, T0 + 24 * HOUR) == []  # 1 h after
    daily = feed_from_points({APT: hourly(10, timedelta(days=1))}, "daily.csv")
    # Ends at day 9 00:00; a window to day 11 00:00 is two steps on: still covered.
    assert data_warnings(daily, {APT: "APT"}, T0, T0 + timedelta(days=11)) == []
    assert len(data_warnings(daily, {APT: "APT"}, T0, T0 + timedelta(days=12))) == 1


def test_tokens_without_a_series_of_their_own_need_no_coverage() -> None:
    feed = feed_from_points({APT: hourly(3)}, "apt.csv")
    assert data_warnings(feed, {}, T0, T0 + timedelta(days=30)) == []  # pegged USDC only


def test_skipped_and_repeated_rows_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "untidy.csv"
    path.write_text(
        "timestamp,token,usdPrice\n"
        f"2026-01-01T00:00:00Z,{APT},5\n"
        f"2026-01-01T01:00:00Z,{APT},\n"  # empty price: skipped
        f"2026-01-01T02:00:00Z,{APT},-1\n"  # not positive: skipped
        f"2026-01-01T03:00:00Z,{APT},6\n"
        f"2026-01-01T03:00:00Z,{APT},6.5\n",  # repeated time: the later row kept
        encoding="utf-8",
    )
    feed = load_feed(path)
    warnings = data_warnings(feed, {APT: "APT"}, T0, T0 + 3 * HOUR)
    assert warnings == [
        f"{path}: skipped 2 of 5 rows (line 3: price '' is not a number; line 4: price '-1' "
        "is not > 0); 1 repeated (token, time) row(s) replaced by the later "
        "(docs/price-series.md)"
    ]


def test_the_journal_merging_a_tokens_spellings_is_not_a_warning() -> None:
    feed = feed_from_points({APT: hourly(3)}, "journal", duplicates=3)
    assert data_warnings(feed, {APT: "APT"}, T0, T0 + 2 * HOUR) == []


def test_spans_in_words() -> None:
    assert describe_span(timedelta(minutes=45)) == "45 min"
    assert describe_span(timedelta(hours=3, minutes=20)) == "3 h 20 min"
    assert describe_span(timedelta(days=1)) == "1 day"
    assert describe_span(timedelta(days=9, hours=4, minutes=5)) == "9 days 4 h"
