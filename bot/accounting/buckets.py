"""Day, week and month buckets in the user's time zone.

A trade belongs to the bucket of its local calendar date in the chosen IANA zone
(`Europe/Berlin`; UTC by default): a day runs from local midnight to local midnight (23
or 25 hours across a daylight-saving change), a week from Monday (ISO 8601), a month from
its first day. A bucket is named by its first local date.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, tzinfo
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.clock import ensure_utc

__all__ = ["BucketPeriod", "bucket_keys", "bucket_label", "bucket_of", "zone_of"]


class BucketPeriod(StrEnum):
    """How trades are grouped in time."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"


def zone_of(name: str | tzinfo | None) -> tzinfo:
    """The IANA time zone `name` (None or "UTC": UTC; a `tzinfo` is itself).

    Raises:
        ValueError: `name` is no time zone this system knows (the message names it).
    """
    if isinstance(name, tzinfo):
        return name
    if name is None or name.strip().upper() == "UTC":
        return UTC
    text = name.strip()
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"unknown time zone {name!r} (an IANA name like Europe/Berlin)") from None


def bucket_of(moment: datetime, period: BucketPeriod, zone: tzinfo) -> date:
    """The first local date of the `period` bucket `moment` falls in, in `zone`."""
    return _first_of(ensure_utc(moment).astimezone(zone).date(), period)


def bucket_keys(period: BucketPeriod, zone: tzinfo) -> Callable[[datetime], date]:
    """`bucket_of(moment, period, zone)` for many moments: the local date's bucket memoised.

    For a year of trades: in UTC the local date is the moment's own date (no conversion),
    and each local date's bucket is worked out once.
    """
    firsts: dict[date, date] = {}

    def key(moment: datetime) -> date:
        if zone is UTC and moment.tzinfo is UTC:
            local = moment.date()
        else:
            local = ensure_utc(moment).astimezone(zone).date()
        first = firsts.get(local)
        if first is None:
            first = firsts[local] = _first_of(local, period)
        return first

    return key


def _first_of(local: date, period: BucketPeriod) -> date:
    """The first local date of the `period` bucket holding the local date `local`."""
    if period is BucketPeriod.DAY:
        return local
    if period is BucketPeriod.WEEK:
        return local - timedelta(days=local.weekday())
    return local.replace(day=1)


def bucket_label(first: date, period: BucketPeriod) -> str:
    """How a bucket is named: `2026-11-24`, `2026-W48` (ISO week), `2026-11`."""
    if period is BucketPeriod.DAY:
        return first.isoformat()
    if period is BucketPeriod.WEEK:
        year, week, _ = first.isocalendar()
        return f"{year}-W{week:02d}"
    return f"{first.year}-{first.month:02d}"
