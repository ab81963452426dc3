"""The bot's one duration grammar and the API's period form (`bot.duration`)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.duration import Duration, order_period, parse_duration
from bot.engine.strategy import parse_period


@pytest.mark.parametrize(
    ("text", "value", "unit", "seconds"),
    [
        ("90s", 90, "second", 90),
        ("60", 60, "second", 60),  # a bare number is seconds (`--every 60`)
        ("15m", 15, "minute", 900),
        ("5 min", 5, "minute", 300),
        ("6h", 6, "hour", 21_600),
        ("6 hour", 6, "hour", 21_600),
        (" 2 Days ", 2, "day", 172_800),
        ("1d", 1, "day", 86_400),
        ("2W", 2, "week", 1_209_600),
        ("30 minutes", 30, "minute", 1800),
        ("1 month", 1, "month", 2_592_000),  # a month's length counts 30 days
    ],
)
def test_the_forms_users_write_today_are_read(
    text: str, value: int, unit: str, seconds: int
) -> None:
    duration = parse_duration(text)
    assert duration == Duration(value, unit)
    assert duration.seconds == seconds
    assert duration.length == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "text", ["", "0", "0s", "0 day", "1.5h", "-5m", "1 hr", "1 fortnight", "m", "5 ms", "1mo"]
)
def test_anything_else_is_one_line_naming_the_value_and_field(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_duration(text, field="--every")
    message = str(caught.value)
    assert message.startswith(f"--every: {text!r} is not a duration: ")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "wire"),
    [
        ("6 hour", (6, "hour")),
        ("24h", (24, "hour")),  # a unit the API names is kept as written
        ("1 month", (1, "month")),
        ("2w", (2, "week")),
        ("120s", (2, "minute")),
        ("3600", (1, "hour")),
        ("172800s", (2, "day")),
    ],
)
def test_the_api_period_form(text: str, wire: tuple[int, str]) -> None:
    assert order_period(parse_duration(text)) == wire


def test_seconds_that_are_not_whole_minutes_have_no_api_form() -> None:
    with pytest.raises(ValueError, match=r"^'90 second' is not a whole number of minutes"):
        order_period(parse_duration("90s"))


@pytest.mark.parametrize("text", ["1M", "6m", "6 m", "12M"])
def test_an_order_period_takes_no_bare_m_minute_or_month(text: str) -> None:
    """A month read as a minute would place an order 43,200 times too often."""
    with pytest.raises(ValueError, match="ambiguous") as info:
        parse_period(text)
    assert "\n" not in str(info.value) and repr(text) in str(info.value)


def test_a_capital_m_is_refused_everywhere_and_a_small_m_is_a_minute_outside_periods() -> None:
    with pytest.raises(ValueError, match="--every: '1M' is ambiguous"):
        parse_duration("1M", field="--every")
    assert parse_duration("15m").seconds == 900
    assert parse_period("15 min") == (15, "minute")
