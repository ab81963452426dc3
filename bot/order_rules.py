"""The spec's rules on create-DCA, create-limit and swap requests: one home for three readers.

The client checks them before sending (`bot.api.params`, turning `RuleError` into
`RequestRuleError`), the paper service answers 400 with them (`bot.paper.service`), and the
backtest refuses an action with them (`bot.backtest.broker`), so what one refuses the
others refuse, in the same words. Each rule takes a value as typed by the bot (`Decimal`,
`int`) or as read from the wire (text, a JSON number), and returns it normalised: an exact
`Decimal`, an `int`, a period pair, a percent truncated as the service truncates it.

Where the spec (service-interface.md, sections 4 and 8) is silent, the choices are in
docs/wire-decisions.md: rate bounds (None, a minimum of 0 or a maximum of Infinity mean no
bound), whole numbers also as text ("4"), slippage of orders truncated after one decimal
whatever the swap variant, amounts no larger than a u64 of base units.

This module imports only the pure rooms (`bot.domain`, `bot.money`): any layer may use it.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final, Literal

from bot.domain import TIME_PERIODS
from bot.money import MoneyError, parse_decimal, to_base_units_down, truncate_places

__all__ = [
    "AUTO",
    "DCA_DEFAULT_SLIPPAGE",
    "INTEGRATOR_FEE_MAX",
    "LIMIT_DEFAULT_SLIPPAGE",
    "MAX_HOPS",
    "MAX_INCLUDE_POOLS",
    "MAX_PAGE_SIZE",
    "SLIPPAGE_MAX",
    "AmountType",
    "RuleError",
    "SwapVariant",
    "amount_type",
    "base_units",
    "dca_slippage",
    "fee_address",
    "hex_address",
    "include_pools",
    "limit_rate",
    "max_hops",
    "one_of_sources",
    "percentage",
    "period",
    "places",
    "positive_amount",
    "rate_bounds",
    "slippage",
    "split",
    "time_period",
    "whole_number",
]

SwapVariant = Literal["current", "legacy"]
AmountType = Literal["total", "perorder"]

AUTO: Final = "auto"
SLIPPAGE_MAX: Final = 100
INTEGRATOR_FEE_MAX: Final = 2
MAX_INCLUDE_POOLS: Final = 10
MAX_HOPS: Final = 5
MAX_PAGE_SIZE: Final = 1000
DCA_DEFAULT_SLIPPAGE: Final = Decimal(1)
"""The service's slippage of a DCA slice when the request gives none (paper world)."""
LIMIT_DEFAULT_SLIPPAGE: Final = Decimal(5)
"""A limit order's slippage when none or `auto` is given: "auto ... at most 5%" (spec 4.5)."""

_U64_MAX: Final = 2**64 - 1
"""Aptos amounts are u64 base units: no human amount (decimals ≥ 0) can be larger."""
_SMALLEST: Final = Decimal("1e-40")
"""No token has 40 decimals: an amount below this is no amount (and its text is bounded)."""
_RATE_RANGE: Final = (Decimal("1e-40"), Decimal("1e40"))
"""Rates outside this are no market's: refused before a billion-digit number is written,
or overflows the service's arithmetic (a rate of 1e999999 stopped the paper world)."""
_SHOWN_MAX: Final = 64
_FEE_ADDRESS_RE: Final = re.compile(r"^0x[0-9a-fA-F]{64}$")


class RuleError(ValueError):
    """A request breaks a rule: `field` names it, `message` says how (after the field's name).

    `str()` reads as one sentence, `"fromTokenAmount must be a positive amount, got 0"`,
    or `sentence` when a rule has fixed wording of its own (the SDK's, for sources).
    """

    def __init__(self, field: str, message: str, *, sentence: str | None = None) -> None:
        super().__init__(sentence or f"{field} {message}")
        self.field = field
        self.message = message


def _shown(value: object) -> str:
    """A value in an error, on one short line: numbers as written, anything else quoted."""
    text = repr(value)
    if isinstance(value, Decimal | int) and not isinstance(value, bool):
        text = str(value)
    elif isinstance(value, str) and len(value) <= _SHOWN_MAX:
        try:
            Decimal(value)
        except InvalidOperation:
            pass
        else:
            text = value.strip()
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 1] + "…"


# --- amounts --------------------------------------------------------------------------------


def positive_amount(field: str, value: object) -> Decimal:
    """A human amount above 0 (`Decimal`, int or decimal text; never a float).

    Raises:
        RuleError: not a finite number above 0, or larger than any u64 amount.
    """
    try:
        amount = parse_decimal(value, field=field)
    except MoneyError:
        raise RuleError(field, f"must be a positive amount, got {_shown(value)}") from None
    if amount <= 0:
        raise RuleError(field, f"must be a positive amount, got {_shown(value)}")
    if amount < _SMALLEST:
        raise RuleError(field, f"is smaller than any token amount, got {_shown(value)}")
    if amount > _U64_MAX:
        raise RuleError(field, f"is larger than any token amount, got {_shown(value)}")
    return amount


def base_units(field: str, value: object, decimals: int, symbol: str) -> int:
    """A human amount in base units, at least one: digits past the decimals dropped.

    The service rounds the amounts it is sent toward zero, to the token's decimals.

    Raises:
        RuleError: not a positive amount, below one base unit, or above a u64.
    """
    units = to_base_units_down(positive_amount(field, value), decimals)
    if units <= 0:
        raise RuleError(field, f"is smaller than one base unit of {symbol}")
    if units > _U64_MAX:
        raise RuleError(field, f"is larger than any {symbol} amount (u64 base units)")
    return units


def amount_type(value: object) -> AmountType:
    """`fromTokenAmount.type` of a DCA: `total` or `perorder`."""
    if value == "total":
        return "total"
    if value == "perorder":
        return "perorder"
    raise RuleError("fromTokenAmount.type", f"must be total or perorder, got {_shown(value)}")


def split(units: int, count: int, kind: AmountType) -> None:
    """A DCA's total must make `count` non-empty slices (`perorder` always does).

    Raises:
        RuleError: on `fromTokenAmount.value`, when the total has fewer base units than slices.
    """
    if kind == "total" and units < count:
        raise RuleError(
            "fromTokenAmount.value",
            f"is too small to split into numberOfOrders orders ({units} base units, {count})",
        )


# --- whole numbers and periods ----------------------------------------------------------------


def whole_number(field: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number ≥ `minimum` (≤ `maximum`, else a u64).

    An int, or its text or exact JSON number (`"4"`, `4`, `4.0`); never a bool or float.

    Raises:
        RuleError: naming the field.
    """
    refused = RuleError(field, f"must be a whole number ≥ {minimum}, got {_shown(value)}")
    if isinstance(value, bool) or not isinstance(value, int | str | Decimal):
        raise refused
    try:
        number = Decimal(value.strip()) if isinstance(value, str) else Decimal(value)
    except InvalidOperation:
        raise refused from None
    if not number.is_finite() or number != number.to_integral_value() or number < minimum:
        raise refused
    ceiling = _U64_MAX if maximum is None else maximum
    if number > ceiling:
        raise RuleError(field, f"must be at most {ceiling}, got {_shown(value)}")
    return int(number)


def time_period(field: str, value: object) -> str:
    """A `timePeriod`: one of `TIME_PERIODS`."""
    if not isinstance(value, str) or value not in TIME_PERIODS:
        raise RuleError(field, f"must be one of {', '.join(TIME_PERIODS)}, got {_shown(value)}")
    return value


def period(field: str, value: object, unit: object, *, minimum: int = 1) -> tuple[int, str]:
    """An `{value, timePeriod}` pair (`interval`, `delay` with minimum 0, `expiry`).

    Raises:
        RuleError: on `field` when only one of the two is given, else on `field.value` or
            `field.timePeriod`.
    """
    if value is None or unit is None:
        raise RuleError(field, "value and timePeriod must be given together")
    number = whole_number(f"{field}.value", value, minimum)
    return number, time_period(f"{field}.timePeriod", unit)


# --- rates ------------------------------------------------------------------------------------


def _rate(field: str, value: object) -> Decimal | None:
    """A rate as sent: None (or empty text) when absent; `Infinity` allowed; ≥ 0."""
    if value is None or value == "":
        return None
    try:
        rate = parse_decimal(value, allow_infinity=True, field=field)
    except MoneyError:
        shown = _shown(value)
        if isinstance(value, Decimal) and value.is_infinite():  # -Infinity
            raise RuleError(field, f"must not be negative, got {shown}") from None
        raise RuleError(field, f"must be a number, got {shown}") from None
    if rate < 0:
        raise RuleError(field, f"must not be negative, got {_shown(value)}")
    low, high = _RATE_RANGE
    if rate.is_finite() and rate != 0 and not low <= rate <= high:
        raise RuleError(field, f"is out of range (1e-40 to 1e40), got {_shown(value)}")
    return rate


def rate_bounds(low: object, high: object) -> tuple[Decimal | None, Decimal | None]:
    """A DCA's `minRateToTokenPerFromToken` and `maxRateToTokenPerFromToken`, as bounds.

    None for no bound: absent, a minimum of 0 or a maximum of Infinity. Refused: NaN or
    non-numbers, negatives, a minimum of Infinity (nothing would execute), a maximum of
    0, a minimum above the maximum.
    """
    low_field, high_field = "minRateToTokenPerFromToken", "maxRateToTokenPerFromToken"
    minimum, maximum = _rate(low_field, low), _rate(high_field, high)
    if minimum is not None and minimum.is_infinite():
        raise RuleError(low_field, "cannot be Infinity (nothing would execute)")
    if maximum == 0:
        raise RuleError(high_field, "must be positive (leave it out for no bound)")
    if minimum is not None and maximum is not None and minimum > maximum:
        raise RuleError(low_field, f"must not exceed {high_field}")
    return (
        None if minimum == 0 else minimum,
        None if maximum is None or maximum.is_infinite() else maximum,
    )


def limit_rate(value: object) -> Decimal:
    """A limit order's `rateToTokenPerFromToken`: a finite number above 0."""
    field = "rateToTokenPerFromToken"
    rate = _rate(field, value)
    if rate is None or rate == 0 or rate.is_infinite():
        raise RuleError(field, f"must be a positive number, got {_shown(value)}")
    return rate


# --- percentages ------------------------------------------------------------------------------


def places(variant: SwapVariant) -> int:
    """Digits kept after the point by a swap variant: current 1, legacy 2 (spec 4.7, 9)."""
    return 2 if variant == "legacy" else 1


def percentage(field: str, value: object, upper: int, digits: int = 1) -> Decimal:
    """A percent in 0–`upper`, truncated after `digits` decimals (as the service truncates).

    Raises:
        RuleError: not a number, or outside the range.
    """
    try:
        number = parse_decimal(value, field=field)
    except MoneyError:
        raise RuleError(field, f"must be between 0 and {upper}, got {_shown(value)}") from None
    if not 0 <= number <= upper:
        raise RuleError(field, f"must be between 0 and {upper}, got {_shown(value)}")
    return truncate_places(number, digits)


def slippage(value: object, digits: int = 1) -> Decimal | Literal["auto"] | None:
    """A swap's or limit order's `slippagePercentage`.

    None when absent, `auto` (any case), or a percent 0–100 truncated after `digits`.
    """
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    return dca_slippage(value, digits)


def dca_slippage(value: object, digits: int = 1) -> Decimal | None:
    """A DCA's `slippagePercentage`: None when absent, else a percent 0–100, truncated.

    No `auto` here: spec 4.2 lists none for a DCA.
    """
    if value is None or value == "":
        return None
    return percentage("slippagePercentage", value, SLIPPAGE_MAX, digits)


# --- addresses and route controls -------------------------------------------------------------


def hex_address(field: str, value: object) -> str:
    """A wallet or token address as the spec types it: a string starting `0x`."""
    if not isinstance(value, str) or not value.startswith("0x") or len(value) < 3:
        raise RuleError(field, f"must start with 0x, got {_shown(value)}")
    return value


def fee_address(value: object) -> str:
    """`integratorFeeAddress`: 0x followed by 64 hex characters (spec 8)."""
    if not isinstance(value, str) or not _FEE_ADDRESS_RE.match(value):
        raise RuleError("integratorFeeAddress", "must be 0x followed by 64 hex characters")
    return value


def one_of_sources(include: object, exclude: object) -> None:
    """`includeSources` and `excludeSources` never together (SDK 1.3.1's wording)."""
    if include is not None and exclude is not None:
        raise RuleError(
            "includeSources/excludeSources",
            "give only one of the two, not both",
            sentence="Only one of includeSources or excludeSources can be provided at a time",
        )


def include_pools(count: int) -> None:
    """`includePools`: at most 10 pools (spec 8)."""
    if count > MAX_INCLUDE_POOLS:
        raise RuleError("includePools", f"accepts at most {MAX_INCLUDE_POOLS} pools, got {count}")


def max_hops(value: object) -> str:
    """`maxHops`: an int 1–5 or `max`; the wire text (a reader of text parses digits first)."""
    if value == "max":
        return "max"
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_HOPS:
        raise RuleError("maxHops", f"must be 1 to {MAX_HOPS} or max, got {_shown(value)}")
    return str(value)
