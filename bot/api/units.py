"""Order records in base units → human units, for `[api].order_amount_units = "base"`.

The spec does not show whether order-record amounts are human amounts or base units
(docs/wire-decisions.md). The default reads them as human amounts; with the switch set to
`base`, this module rescales a raw record by its tokens' decimals before it is parsed.
"""

from __future__ import annotations

from decimal import localcontext
from typing import Any, Final

from bot.api.wire import in_range
from bot.money import MoneyError, format_decimal, from_base_units, parse_decimal

__all__ = ["order_record_to_human"]

MAX_DECIMALS: Final = 255
"""Token decimals are a u8 on Aptos; a record claiming more is not rescaled."""

_FROM: Final = (
    "fromTokenAmountTotal",
    "fromTokenAmountSpent",
    "fromTokenAmountBalance",
    "fromTokenAmountWithdrawn",
    "fromTokenAmountPerOrder",
    "fromTokenAmount",
)
_TO: Final = ("toTokenAmountWithdrawn", "toTokenAmount")
_FEE: Final = ("feeTokenAmount",)
# toToken per fromToken: human = base × 10^(from_decimals − to_decimals)
_TO_PER_FROM: Final = (
    "avgPriceToTokenPerFromToken",
    "minRateToTokenPerFromToken",
    "maxRateToTokenPerFromToken",
    "rateToTokenPerFromToken",
    "priceToTokenPerFromToken",
)
_FROM_PER_TO: Final = ("avgPriceFromTokenPerToToken", "priceFromTokenPerToToken")


def _decimals(record: dict[str, Any], key: str) -> int | None:
    token = record.get(key)
    value = token.get("decimals") if isinstance(token, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DECIMALS:
        return None  # Aptos decimals are a u8; anything else is no scale to apply
    return value


def _scale(value: Any, shift: int) -> Any:
    try:
        number = parse_decimal(value, allow_infinity=True)
    except MoneyError:
        return value  # left for the model to reject with its own message
    if not in_range(number):
        return value  # infinite, or too large to expand: the model judges it
    if shift >= 0 and number == number.to_integral_value():
        return format_decimal(from_base_units(int(number), shift))
    with localcontext() as ctx:
        ctx.prec = 80  # scaleb rounds to the context precision; keep every digit
        return format_decimal(number.scaleb(-shift))


def _rescale(target: dict[str, Any], dec_from: int, dec_to: int, dec_fee: int | None) -> None:
    plan: tuple[tuple[tuple[str, ...], int | None], ...] = (
        (_FROM, dec_from),
        (_TO, dec_to),
        (_FEE, dec_fee),
        (_TO_PER_FROM, dec_to - dec_from),
        (_FROM_PER_TO, dec_from - dec_to),
    )
    for names, shift in plan:
        if shift is None:
            continue
        for name in names:
            if target.get(name) not in (None, ""):
                target[name] = _scale(target[name], shift)


def order_record_to_human(record: dict[str, Any]) -> dict[str, Any]:
    """A copy of a raw DCA/limit order record with base-unit amounts and rates made human.

    Records whose token decimals are unknown are returned unchanged.
    """
    dec_from = _decimals(record, "fromToken")
    dec_to = _decimals(record, "toToken")
    if dec_from is None or dec_to is None:
        return record
    dec_fee = _decimals(record, "feeToken")
    result = dict(record)
    _rescale(result, dec_from, dec_to, dec_fee)
    details = result.get("txDetails")
    if isinstance(details, list):
        scaled = []
        for item in details:
            if isinstance(item, dict):
                copy = dict(item)
                _rescale(copy, dec_from, dec_to, dec_fee)
                scaled.append(copy)
            else:
                scaled.append(item)
        result["txDetails"] = scaled
    return result
