"""Does the series cover the window? One warning line per thing a user should know.

A backtest runs on whatever prices it is given: a window reaching past the data's end
holds the last price to the end (a DCA keeps buying at a price that never moves), and an
untidy file loses rows (skipped, or a repeated (token, time) replaced by the later row).
The run goes on either way — these are warnings, not errors — but each is one line in
the result, on stderr and in the report, so a figure is never read without knowing it.

A window starting before a traded token's first price is an error of the runner
(`BacktestError`, exit 2), not a warning: there is no price to start from.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Final

from bot.backtest.feed import Feed, TokenSeries
from bot.clock import MICROSECOND, from_micros, to_micros

__all__ = ["MIN_SLACK", "data_warnings", "describe_span"]

MIN_SLACK: Final = timedelta(hours=1)
"""A window may end this long after the last price point (or two mean steps of the
series, if longer) without a warning: the last point of a series holds until the next."""


def data_warnings(
    feed: Feed, symbols: Mapping[str, str], start: datetime, end: datetime
) -> list[str]:
    """The warnings of a run on `feed` over [start, end].

    Args:
        feed: the prices as read (its counts of skipped and repeated rows).
        symbols: the tokens the run prices from the feed (key → symbol); pegged stable
            coins without a series are not in the feed and need no coverage.
        start: the window's start.
        end: the window's end.
    """
    found: list[str] = []
    short = []  # (last point, symbol) of the series that end before the window does
    for key, symbol in symbols.items():
        series = feed.series.get(key)
        if series is None or not len(series):
            continue
        last_us = int(series.times_us[-1])
        if to_micros(end) - last_us > _slack(series) // MICROSECOND:
            short.append((from_micros(last_us), symbol))
    if short:
        last, _ = min(short)
        names = ", ".join(symbol for _, symbol in sorted(short))
        found.append(
            f"the prices of {names} end at {_iso(last)}, {describe_span(end - last)} before "
            f"the window's end {_iso(end)}: the last price is held to the end"
        )
    problems = []
    if feed.skipped and feed.skipped_line is None:
        problems.append(f"{feed.skipped} bad row(s) skipped")
    if feed.duplicates and feed.source != "journal":  # the journal merges a token's spellings
        problems.append(f"{feed.duplicates} repeated (token, time) row(s) replaced by the later")
    if feed.skipped_line is not None:  # where and why, in one line (`bot.skipped_rows`)
        repeated = f"; {problems[0]}" if problems else ""
        found.append(f"{feed.skipped_line}{repeated} (docs/price-series.md)")
    elif problems:
        found.append(f"{feed.source}: {' and '.join(problems)} (docs/price-series.md)")
    return found


def _slack(series: TokenSeries) -> timedelta:
    """How long after its last point a series still counts as covering the window."""
    count = len(series)
    if count < 2:
        return MIN_SLACK
    mean_step_us = (int(series.times_us[-1]) - int(series.times_us[0])) // (count - 1)
    return max(MIN_SLACK, 2 * timedelta(microseconds=mean_step_us))


def describe_span(span: timedelta) -> str:
    """A duration in words for a warning: `9 days 4 h`, `3 h 20 min`, `45 min`."""
    minutes = int(span.total_seconds() // 60)
    days, rest = divmod(minutes, 1440)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"{days} day{'s' if days != 1 else ''}" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    return f"{minutes} min"


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
