"""Column types that keep money and time exact in any database, SQLite first.

SQLite has no decimal type: SQLAlchemy's `Numeric` goes through a float there, and its
INTEGER is a signed 64-bit number, too small for u64/u128 base units. So every amount is
stored as TEXT:

* `DecimalText`: a `Decimal` as plain decimal text, no exponent, trailing fraction zeros
  removed (`Decimal("1.50")` → `"1.5"`, `Decimal("1E+3")` → `"1000"`, `-0` → `"0"`). The
  value is kept exactly; the *scale* (how many trailing zeros were written) is not, so
  `Decimal("1.50")` reads back as `Decimal("1.5")`, equal in value. `Infinity` (a rate
  bound may be unbounded) is stored as `"Infinity"`; NaN, floats, booleans and strings are
  refused when binding.
* `BigIntText`: an `int` of any size and sign as decimal text (`2**128 - 1` →
  `"340282366920938463463374607431768211455"`).
* `UtcDateTime`: an aware datetime as fixed-width ISO-8601 text in UTC with microseconds
  (`"2026-01-01T00:00:00.000000+00:00"`). Naive datetimes are refused. Because the width
  is fixed, text order is time order, so time ranges may be compared in SQL.

TEXT order is **not** numeric order (`"10" < "9"`): amounts are never compared, summed or
sorted in SQL. Read them and do the arithmetic in Python with `Decimal`/`int`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Dialect
from sqlalchemy.types import Text, TypeDecorator

from bot.journal.text import decimal_text, parse_decimal_text, utc_text

__all__ = [
    "BigIntText",
    "DecimalText",
    "UtcDateTime",
    "decimal_text",
    "parse_decimal_text",
    "utc_text",
]


class DecimalText(TypeDecorator[Decimal]):
    """A `Decimal` stored as exact decimal text (see the module docstring)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> str | None:
        """`Decimal`/`int` → canonical text; float, NaN and others raise."""
        return None if value is None else decimal_text(value)

    def process_result_value(self, value: Any | None, dialect: Dialect) -> Decimal | None:
        """Stored text → `Decimal`."""
        return None if value is None else parse_decimal_text(str(value))


class BigIntText(TypeDecorator[int]):
    """An integer of any size (u64, u128, u256, signed) stored as decimal text."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Dialect) -> str | None:
        """`int` → decimal text; anything else (bool, float, str, Decimal) raises."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"integer required, got {type(value).__name__}: {value!r}")
        return str(value)

    def process_result_value(self, value: Any | None, dialect: Dialect) -> int | None:
        """Stored text → `int`."""
        return None if value is None else int(str(value))


class UtcDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime stored as fixed-width ISO-8601 text; naive values raise."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> str | None:
        """Aware datetime → `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`."""
        return None if value is None else utc_text(value)

    def process_result_value(self, value: Any | None, dialect: Dialect) -> datetime | None:
        """Stored text → aware UTC datetime."""
        if value is None:
            return None
        parsed = datetime.fromisoformat(str(value))
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
