"""The µs/epoch helpers of `bot.clock`: exact integers at every edge, both ways."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from bot.clock import EPOCH, MICROS_PER_SECOND, MICROSECOND, from_micros, to_micros


def test_epoch_is_zero_and_one_micro_is_one() -> None:
    assert to_micros(EPOCH) == 0
    assert from_micros(0) == EPOCH
    assert to_micros(EPOCH + MICROSECOND) == 1
    assert to_micros(EPOCH + timedelta(seconds=1)) == MICROS_PER_SECOND


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 11, 24, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 11, 25, 0, 0, 0, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_998, tzinfo=UTC),
        datetime(2038, 1, 19, 3, 14, 7, 999_999, tzinfo=UTC),
    ],
)
def test_exact_at_microsecond_edges(moment: datetime) -> None:
    """Where a float `timestamp()` loses the last µs (year 9999), the integers do not."""
    micros = to_micros(moment)
    assert micros % MICROS_PER_SECOND == moment.microsecond
    assert from_micros(micros) == moment
    assert to_micros(from_micros(micros + 1)) == micros + 1
    assert to_micros(from_micros(micros - 1)) == micros - 1


def test_float_timestamp_would_lose_the_last_microsecond() -> None:
    """The reason for integer arithmetic: the float path is wrong at large times."""
    moment = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    assert int(moment.timestamp() * 1_000_000) != to_micros(moment)


def test_negative_micros_round_trip() -> None:
    """Before 1970 is negative, and floors: 1 µs before the epoch is -1, not 0."""
    before = EPOCH - MICROSECOND
    assert to_micros(before) == -1
    assert from_micros(-1) == before
    half = EPOCH - timedelta(milliseconds=500)
    assert to_micros(half) == -500_000
    assert from_micros(to_micros(half)) == half


def test_offsets_are_honoured_and_results_are_utc() -> None:
    plus_two = datetime(2026, 1, 1, 2, 0, tzinfo=timezone(timedelta(hours=2)))
    assert to_micros(plus_two) == to_micros(datetime(2026, 1, 1, tzinfo=UTC))
    assert from_micros(to_micros(plus_two)).utcoffset() == timedelta(0)


def test_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        to_micros(datetime(2026, 1, 1))
