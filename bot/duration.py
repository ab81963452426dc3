"""Durations: the one grammar the bot reads them in, and the API's period form beside it.

A duration is a whole number ≥ 1 and a unit, with or without a space, any case:

    90s   15m   6h   1d   2w   "6 hour"   "1 day"   "2 days"   "30 minutes"   "1 month"

Units: `s`/`sec`/`second`, `m`/`min`/`minute`, `h`/`hour`, `d`/`day`, `w`/`week`,
`month` (the word forms take a plural `s`). `m` is a minute; a month is written out and
counts 30 days where a length is needed; a capital `M` is refused (minute or month?), and an
order period takes no bare `m` at all. A bare number is seconds (`"3600"`).

The same grammar reads strategy periods (`interval = "1 day"`, `cooldown = "12h"`), the
recorder's `--every`/`--step` and the backtest's `--schedule`. The provider's orders take
a period as `{value, timePeriod}` (`TIME_PERIODS`): `order_period` converts one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from bot.domain import TIME_PERIODS

__all__ = ["Duration", "order_period", "parse_duration"]

_SECONDS: Final = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86_400,
    "week": 604_800,
    "month": 2_592_000,
}
_ALIASES: Final = {
    "s": "second", "sec": "second", "secs": "second", "second": "second", "seconds": "second",
    "m": "minute", "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute",
    "h": "hour", "hour": "hour", "hours": "hour",
    "d": "day", "day": "day", "days": "day",
    "w": "week", "week": "week", "weeks": "week",
    "month": "month", "months": "month",
}  # fmt: skip
_PATTERN: Final = re.compile(r"(\d+)\s*([a-z]*)")
_HINT: Final = (
    "use a whole number ≥ 1 and a unit (s, m, h, d, w, or second, minute, hour, day, week, "
    "month), e.g. '6h' or '1 day'"
)


@dataclass(frozen=True)
class Duration:
    """A parsed duration: `value` of `unit` (second, minute, hour, day, week or month)."""

    value: int
    unit: str

    @property
    def seconds(self) -> int:
        """Its length in whole seconds (a month counts 30 days)."""
        return self.value * _SECONDS[self.unit]

    @property
    def length(self) -> timedelta:
        """Its length as a `timedelta` (a month counts 30 days)."""
        return timedelta(seconds=self.seconds)

    def __str__(self) -> str:
        return f"{self.value} {self.unit}"


def parse_duration(text: str, *, field: str | None = None) -> Duration:
    """Read a duration in the bot's one grammar (see the module docstring).

    Args:
        text: what the user wrote, e.g. `"6h"`, `"1 day"`, `"90"`.
        field: the option or setting it came from, put first in the error (`--every`).

    Raises:
        ValueError: one line naming `field` and the text, for anything else (`0`, `1.5h`,
            `1 hr`, `-5m`).
    """
    match = _PATTERN.fullmatch(text.strip().lower())
    if match and match.group(2) == "m" and "M" in text:  # minute or month? refuse to guess
        prefix = f"{field}: " if field else ""
        raise ValueError(f"{prefix}{text!r} is ambiguous: write 'min' or 'month'")
    unit = _ALIASES.get(match.group(2)) if match and match.group(2) else "second"
    if match is None or unit is None or int(match.group(1)) < 1:
        prefix = f"{field}: " if field else ""
        raise ValueError(f"{prefix}{text!r} is not a duration: {_HINT}")
    return Duration(int(match.group(1)), unit)


def order_period(duration: Duration) -> tuple[int, str]:
    """The API's `(value, timePeriod)` form of a duration: `6h` → `(6, "hour")`.

    A unit the API names is kept as written (`"24 hour"` stays 24 hours, `"1 month"` a
    month); seconds become the largest unit that divides them (`"3600s"` → 1 hour).

    Raises:
        ValueError: a duration that is not a whole number of minutes, naming it.
    """
    if duration.unit in TIME_PERIODS:
        return duration.value, duration.unit
    seconds = duration.seconds
    for unit in ("week", "day", "hour", "minute"):
        if seconds % _SECONDS[unit] == 0:
            return seconds // _SECONDS[unit], unit
    raise ValueError(
        f"'{duration}' is not a whole number of minutes: an order period is counted in "
        f"{', '.join(TIME_PERIODS)}"
    )
