"""Cron lines mean what crontab(5) says, not what APScheduler 3 numbers days as."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config import Schedule
from bot.cron import cron_trigger

TUESDAY = datetime(2026, 11, 24, tzinfo=UTC)


def next_days(line: str, count: int = 3) -> list[str]:
    trigger, moment, days = cron_trigger(line), TUESDAY, []
    for _ in range(count):
        fire = trigger.get_next_fire_time(None, moment)
        assert fire is not None
        days.append(fire.strftime("%a %d %H:%M"))
        moment = fire.replace(minute=fire.minute + 1)
    return days


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("0 12 * * 1", ["Mon 30 12:00"]),  # APScheduler's from_crontab: Tuesday
        ("0 12 * * 0", ["Sun 29 12:00"]),
        ("0 12 * * 7", ["Sun 29 12:00"]),  # refused by from_crontab
        ("0 12 * * MON", ["Mon 30 12:00"]),
        ("30 8 * * 1-5", ["Tue 24 08:30", "Wed 25 08:30", "Thu 26 08:30"]),
        ("0 0 * * */2", ["Tue 24 00:00", "Thu 26 00:00", "Sat 28 00:00"]),
        ("0 0 * * 5-7", ["Fri 27 00:00", "Sat 28 00:00", "Sun 29 00:00"]),
        ("0 0 * * 6,0", ["Sat 28 00:00", "Sun 29 00:00"]),
        ("0 0 * * 0-7", ["Tue 24 00:00", "Wed 25 00:00", "Thu 26 00:00"]),
        ("0 0 * * 0-7/3", ["Wed 25 00:00", "Sat 28 00:00", "Sun 29 00:00"]),
        ("0 0 * * fri-sun", ["Fri 27 00:00", "Sat 28 00:00", "Sun 29 00:00"]),
        ("0 9 1 * *", ["Tue 01 09:00"]),
    ],
)
def test_days_of_the_week_are_crontabs(line: str, expected: list[str]) -> None:
    assert next_days(line, len(expected)) == expected


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("0 12 * * 8", "'8' is not 0-7 or a day name"),
        ("0 12 * * 5-2", "range '5-2' runs backwards"),
        ("0 9 1 * mon", "not both"),
        ("0 25 * * *", "higher than the maximum value (23)"),
        ("0 12 * *", "give 5 fields"),
    ],
)
def test_a_line_that_cannot_run_as_written_is_refused(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cron_trigger(line)


def test_the_config_refuses_it_when_loaded() -> None:
    with pytest.raises(ValueError, match="higher than the maximum"):
        Schedule(cron="0 25 * * *")
    assert Schedule(cron="0 12 * * 1").cron == "0 12 * * 1"
