"""The arithmetic of the accounting: exact sums and products, stated ratios.

Sums and products of amounts and prices are exact: they run under `EXACT`, a decimal
context of `EXACT_DIGITS` significant digits that *traps* rounding (`Inexact`), so a result
that would need rounding raises instead of changing silently. A quotient is rarely exact
(1/3), so every division goes through `ratio`, which rounds half to even to
`RATIO_DIGITS` significant digits: averages, time-weighted means and the proportional
share of a lot's cost are the only rounded figures, and the lots conserve cost (see
`bot.accounting.lots`), so no total depends on that rounding.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import (
    ROUND_HALF_EVEN,
    Context,
    Decimal,
    DivisionByZero,
    Inexact,
    InvalidOperation,
    Overflow,
)
from typing import Final

__all__ = [
    "EXACT",
    "EXACT_DIGITS",
    "HUNDRED",
    "RATIO",
    "RATIO_DIGITS",
    "ZERO",
    "ratio",
    "total",
]

EXACT_DIGITS: Final = 200
"""Significant digits of exact arithmetic: far beyond any amount × price (≈ 80)."""
RATIO_DIGITS: Final = 40
"""Significant digits a quotient is rounded to (half to even)."""
ZERO: Final = Decimal(0)
HUNDRED: Final = Decimal(100)

EXACT: Final = Context(
    prec=EXACT_DIGITS,
    rounding=ROUND_HALF_EVEN,
    traps=[Inexact, InvalidOperation, DivisionByZero, Overflow],
)
"""The context the accounting runs under: any rounding raises `decimal.Inexact`."""
RATIO: Final = Context(
    prec=RATIO_DIGITS, rounding=ROUND_HALF_EVEN, traps=[InvalidOperation, DivisionByZero, Overflow]
)
"""The context of `ratio`: rounds half to even to `RATIO_DIGITS` digits."""


def ratio(numerator: Decimal, denominator: Decimal) -> Decimal:
    """`numerator / denominator` to `RATIO_DIGITS` significant digits (half to even).

    Raises:
        decimal.DivisionByZero: `denominator` is zero (callers check first).
    """
    return RATIO.divide(numerator, denominator)


def total(values: Iterable[Decimal]) -> Decimal:
    """The exact sum of `values` (0 for none); raises `decimal.Inexact` rather than round."""
    result = ZERO
    for value in values:
        result = EXACT.add(result, value)
    return result
