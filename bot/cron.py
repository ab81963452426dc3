"""Cron lines as users write them (crontab(5), UTC), as APScheduler 3 triggers.

APScheduler 3 numbers the days of the week from Monday = 0, crontab from Sunday = 0 (7 is
Sunday too): `CronTrigger.from_crontab("0 12 * * 1")` fires on Tuesdays, and `7` is
refused. So the day-of-week field is read here by crontab's rules and handed on as day
names (`1-5` → `mon,tue,wed,thu,fri`, `*/2` → `sun,tue,thu,sat`).

crontab fires when *either* a restricted day of the month or a restricted day of the week
matches; APScheduler only when both do. A line restricting both is refused rather than
run on other days than the user meant.
"""

from __future__ import annotations

from datetime import UTC
from typing import Final

from apscheduler.triggers.cron import CronTrigger

__all__ = ["cron_trigger"]

_DAYS: Final = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def cron_trigger(line: str) -> CronTrigger:
    """The trigger of a 5-field cron line in UTC (minute hour day month weekday).

    Raises:
        ValueError: not 5 fields, a field the scheduler does not accept, or both the day
            of the month and the day of the week restricted.
    """
    fields = line.split()
    if len(fields) != 5:
        raise ValueError(
            f"cron {line!r}: give 5 fields (minute hour day-of-month month day-of-week)"
        )
    minute, hour, day, month, weekday = fields
    if day not in ("*", "?") and weekday not in ("*", "?"):
        raise ValueError(
            f"cron {line!r}: restrict the day of the month or the day of the week, not both "
            "(crontab would fire on either, the scheduler only on both)"
        )
    try:
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=_weekdays(weekday),
            timezone=UTC,
        )
    except ValueError as exc:
        raise ValueError(f"cron {line!r}: {exc}") from None


def _weekdays(field: str) -> str:
    """A crontab day-of-week field as APScheduler day names (`*` stays `*`)."""
    if field in ("*", "?"):
        return "*"
    days: set[int] = set()
    for part in field.split(","):
        days |= _part(part, field)
    return ",".join(_DAYS[d] for d in sorted(days))


def _part(part: str, field: str) -> set[int]:
    span, _, step_text = part.partition("/")
    step = 1
    if step_text:
        if not step_text.isdigit() or int(step_text) == 0:
            raise ValueError(f"day of week {field!r}: bad step {step_text!r}")
        step = int(step_text)
    if span == "*":
        first, last = 0, 6
    elif "-" in span:
        low, _, high = span.partition("-")
        first, last = _day(low, field), _day(high, field)
        if last == 0 and first > 0:  # `fri-sun`: Friday to Sunday
            last = 7
        if last < first:
            raise ValueError(f"day of week {field!r}: range {span!r} runs backwards")
    else:
        first = _day(span, field)
        last = first if not step_text else 7  # `1/2`: from Monday to the end (cronie)
    return {day % 7 for day in range(first, last + 1, step)}


def _day(text: str, field: str) -> int:
    """A day's crontab number, 0-7 (7 is Sunday again: `0-7` is every day); names 0-6."""
    name = text.lower()
    if name in _DAYS:
        return _DAYS.index(name)
    if text.isdigit() and int(text) <= 7:
        return int(text)
    raise ValueError(f"day of week {field!r}: {text!r} is not 0-7 or a day name")
