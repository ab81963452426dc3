"""Exact money: human amounts are `Decimal`, on-chain amounts are integers in base units.

Nothing here accepts a `float`: a float reaching money code is a bug, so it is refused
with an error instead of being rounded silently. JSON from the wire is parsed with
`loads_exact`, which turns every JSON number with a fraction into a `Decimal`.
"""

from __future__ import annotations

import json
import re
from decimal import ROUND_DOWN, Decimal, InvalidOperation, localcontext
from itertools import accumulate
from typing import Any, Final

__all__ = [
    "MAX_JSON_DEPTH",
    "MoneyError",
    "format_decimal",
    "from_base_units",
    "json_depth",
    "loads_exact",
    "parse_decimal",
    "to_base_units",
    "to_base_units_down",
    "truncate_places",
]


class MoneyError(ValueError):
    """A value that is not an exact amount or rate."""


MAX_JSON_DEPTH: Final = 64
"""Arrays/objects nested deeper than this are refused by `loads_exact`: no answer of the
provider or the node comes near (the deepest seen is 9), and Python's parser would raise
`RecursionError` somewhere past a thousand levels."""
_JSON_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_NESTING_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


def loads_exact(data: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads` that keeps every number exact (fractions as `Decimal`, integers as `int`).

    `NaN`/`Infinity` literals, which are not JSON, are rejected, and so is nesting deeper
    than `max_depth` (checked before parsing, so very deep input never recurses).

    Raises:
        ValueError: the text is not JSON, has a non-JSON number or is nested too deeply.
    """

    def _reject_constant(name: str) -> Any:
        raise ValueError(f"non-JSON number {name}")

    # As json.loads reads bytes (UTF-8/16/32), so that the depth is measured on the same text.
    if isinstance(data, bytes):
        text = data.decode(json.detect_encoding(data), "surrogatepass")
    else:
        text = data
    if text.count("[") + text.count("{") > max_depth:  # else it cannot nest deeper
        depth = json_depth(text)
        if depth > max_depth:
            raise ValueError(f"JSON nested {depth} levels deep (the limit is {max_depth})")
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except RecursionError:  # cannot happen below the depth limit; kept as a last guard
        raise ValueError("JSON nested too deeply to parse") from None


def json_depth(text: str) -> int:
    """How deeply arrays and objects nest in JSON `text` (brackets inside strings ignored).

    Linear and non-recursive; meant for untrusted text of any shape, valid or not.
    """
    skeleton = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_NESTING_STEP.__getitem__, skeleton)), default=0)


def parse_decimal(value: object, *, allow_infinity: bool = False, field: str = "value") -> Decimal:
    """Parse a wire amount or rate given as a string, an int or a `Decimal`.

    Args:
        value: `"10.5"`, `10`, `Decimal("1e-18")`; with `allow_infinity`, also `"Infinity"`.
        allow_infinity: accept the text `Infinity` (DCA/limit rate bounds may carry it).
        field: the name used in the error message.

    Raises:
        MoneyError: for floats, booleans, NaN, non-numeric text and (unless allowed) infinity.
    """
    if isinstance(value, bool | float):
        raise MoneyError(
            f"{field}: expected a decimal string or integer, got {type(value).__name__}"
        )
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, int):
        result = Decimal(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            result = Decimal(text)
        except InvalidOperation:
            raise MoneyError(f"{field}: not a number: {value!r}") from None
    else:
        raise MoneyError(
            f"{field}: expected a decimal string or integer, got {type(value).__name__}"
        )
    if result.is_nan():
        raise MoneyError(f"{field}: NaN is not an amount")
    if result.is_infinite() and not (allow_infinity and result > 0):
        raise MoneyError(f"{field}: infinite value not allowed: {value!r}")
    return result


def format_decimal(value: Decimal) -> str:
    """Plain text without exponent or trailing zeros.

    `Decimal('1.50')` → `'1.5'`, `Decimal('1E+2')` → `'100'`.
    """
    if not value.is_finite():
        return "Infinity" if value > 0 else str(value)
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


def truncate_places(value: Decimal, places: int) -> Decimal:
    """Drop digits after `places` decimals (toward zero), as the provider truncates slippage."""
    quantum = Decimal(1).scaleb(-places)
    with localcontext() as ctx:
        # Enough digits for the whole result: 1E+40 has one digit but 41 before the point.
        digits = max(len(value.as_tuple().digits), value.adjusted() + 1)
        ctx.prec = max(ctx.prec, digits + places + 2)
        return value.quantize(quantum, rounding=ROUND_DOWN)


def to_base_units(amount: Decimal, decimals: int) -> int:
    """Human amount → on-chain integer; raises if it has more fraction digits than the token."""
    if not amount.is_finite() or amount < 0:
        raise MoneyError(f"not a token amount: {amount}")
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, len(amount.as_tuple().digits) + decimals + 2)
        scaled = amount.scaleb(decimals)
        if scaled != scaled.to_integral_value():
            raise MoneyError(f"{format_decimal(amount)} has more than {decimals} decimal places")
        return int(scaled)


def to_base_units_down(amount: Decimal, decimals: int) -> int:
    """Human amount → on-chain integer, digits beyond the token's decimals dropped.

    Toward zero, as the provider rounds the amounts it is sent.
    """
    return to_base_units(truncate_places(amount, decimals), decimals)


def from_base_units(units: int, decimals: int) -> Decimal:
    """On-chain integer → exact human amount (`123456, 6` → `Decimal('0.123456')`)."""
    if isinstance(units, bool) or not isinstance(units, int):
        raise MoneyError(f"base units must be an int, got {type(units).__name__}")
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, len(str(abs(units))) + decimals + 2)
        return Decimal(units).scaleb(-decimals)
