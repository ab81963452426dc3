"""The cells of a price-series row, read (`bot.paper.core.series`), and why a row is bad.

A row needs a time (aware ISO-8601 text, epoch seconds, or an aware datetime), a token
and a price (exact text, int or Decimal, > 0; never a float). `unusable` says, for a row
the reader skipped, which cell is at fault and its value, for the one summary line of
`bot.skipped_rows.SkippedRows`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from bot.clock import EPOCH, ensure_utc
from bot.money import parse_decimal
from bot.skipped_rows import shown_value

__all__ = ["BAD_CELL", "parse_price", "parse_time", "unusable"]

BAD_CELL: Final = (ValueError, TypeError, LookupError, ArithmeticError)
"""What reading a bad cell raises (the row is skipped, not the file refused)."""


def parse_time(value: object) -> datetime:
    """A timestamp cell: aware datetime, ISO text (naive refused) or epoch seconds."""
    if isinstance(value, datetime):
        return ensure_utc(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return EPOCH + timedelta(seconds=value)
    text = str(value).strip()
    if text.removeprefix("-").isdigit():
        return EPOCH + timedelta(seconds=int(text))
    return ensure_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))


def parse_price(value: object) -> Decimal:
    """A price cell: exact text, int or Decimal > 0 (a float is refused)."""
    if isinstance(value, float):
        raise TypeError("float price")
    price = parse_decimal(value if isinstance(value, Decimal | int) else str(value))
    if not price > 0:
        raise ValueError("price must be positive")
    return price


def unusable(record: dict[str, Any], key_of: Callable[[str], str]) -> str:
    """Why a row cannot be used: its first bad cell, named with its value."""
    stamp, token, price = (record.get(c) or "" for c in ("timestamp", "token", "usdPrice"))
    try:
        parse_time(stamp)
    except BAD_CELL:
        return f"time {shown_value(stamp)} is not ISO 8601 (with a zone) or epoch seconds"
    try:
        key_of(str(token))
    except BAD_CELL:
        return f"token {shown_value(token)} is not a known token, coin type or FA address"
    if isinstance(price, float):
        return "price is a float (store prices as text or decimal)"
    try:
        parse_decimal(price if isinstance(price, Decimal | int) else str(price))
    except BAD_CELL:
        return f"price {shown_value(price)} is not a number"
    return f"price {shown_value(price)} is not > 0"
