"""The stored text of exact amounts and times (pure: no database library).

`types` builds its column types on these; `codec` writes JSON with them. Kept apart so
that reading and writing journal JSON does not import SQLAlchemy.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from bot.money import format_decimal

__all__ = ["decimal_text", "parse_decimal_text", "utc_text"]


def decimal_text(value: object) -> str:
    """The canonical stored text of an exact amount or rate.

    Raises:
        TypeError: for a float, bool, str or any other non-`Decimal`/`int` value.
        ValueError: for NaN.
    """
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise TypeError(
            f"exact amount required (Decimal or int), got {type(value).__name__}: {value!r}"
        )
    number = Decimal(value)
    if number.is_nan():
        raise ValueError("NaN is not an amount and cannot be stored")
    return format_decimal(number)


def parse_decimal_text(text: str) -> Decimal:
    """Read a stored amount back (exactly); raise `ValueError` for corrupt text."""
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"stored amount is not a number: {text!r}") from None
    if number.is_nan():
        raise ValueError(f"stored amount is NaN: {text!r}")
    return number


def utc_text(value: object) -> str:
    """The stored text of an aware datetime: UTC, microseconds, `+00:00`.

    Raises:
        TypeError: for anything but a `datetime`.
        ValueError: for a naive datetime.
    """
    if not isinstance(value, datetime):
        raise TypeError(f"datetime required, got {type(value).__name__}: {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"naive datetime {value.isoformat()} cannot be stored (use timezone-aware UTC)"
        )
    return value.astimezone(UTC).isoformat(timespec="microseconds")
