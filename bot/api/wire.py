"""Shared building blocks of the wire models: exact field types and provider-prefix handling.

The spec writes provider-specific field names with the prefix `svc` (`svcTxId`, `svcUI`…);
the real service uses its own name (`panoraTxId`, `panoraUI`…). Models declare the `svc…`
names; `WireModel` accepts either spelling on input (the configured prefix reaches it as
validation context, default `panora`), and `prefixed()` writes the configured one.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Final

from pydantic import (
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationInfo,
    model_validator,
)

from bot.money import MoneyError, parse_decimal

__all__ = [
    "DEFAULT_PREFIX",
    "MAX_COUNT",
    "MAX_MAGNITUDE",
    "Amount",
    "Count",
    "Flag",
    "OptAmount",
    "OptSignedDecimal",
    "Rate",
    "SignedDecimal",
    "WireModel",
    "in_range",
    "prefixed",
    "unprefix_keys",
]

DEFAULT_PREFIX: Final = "panora"
SPEC_PREFIX: Final = "svc"
MAX_MAGNITUDE: Final = 80
"""Wire numbers beyond 10^80, or with a digit finer than 10^-80, are refused: no token amount
comes near (u256 base units stay below 1.2·10^77), and `1e999999999` would otherwise expand
to a billion digits wherever it is written out."""
MAX_COUNT: Final = 2**63 - 1
"""Counts (decimals, numbers of orders, txNumber) fit a signed 64-bit integer, as stored."""
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def in_range(number: Decimal) -> bool:
    """True when a number is finite and within the bounds of `MAX_MAGNITUDE` (zero is)."""
    if not number.is_finite():
        return False
    if not number:
        return True
    _sign, digits, exponent = number.as_tuple()
    if not isinstance(exponent, int):  # NaN or infinity (refused above): not in range
        return False
    trailing = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return number.adjusted() <= MAX_MAGNITUDE and exponent + trailing >= -MAX_MAGNITUDE


def _bounded(value: object, **options: Any) -> Decimal:
    result = parse_decimal(value, **options)
    if result.is_finite() and not in_range(result):
        raise MoneyError(f"{options['field']} out of range: {_shown(value)}")
    return result


def _amount(value: object) -> Decimal:
    result = _bounded(value, field="amount")
    if result < 0:
        raise MoneyError(f"amount must not be negative: {_shown(value)}")
    return result


def _signed(value: object) -> Decimal:
    return _bounded(value, field="number")


def _rate(value: object) -> Decimal:
    result = _bounded(value, allow_infinity=True, field="rate")
    if result < 0:
        raise MoneyError(f"rate must not be negative: {_shown(value)}")
    return result


def _count(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError("expected a whole number, got bool")
    if isinstance(value, int):
        result = value
    else:
        number = _bounded(value, field="count")
        if number != number.to_integral_value():
            raise ValueError(f"expected a whole number, got {_shown(value)}")
        result = int(number)
    if not 0 <= result <= MAX_COUNT:
        raise ValueError(f"expected a whole number in 0..2^63-1, got {_shown(value)}")
    return result


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise ValueError(f"expected a boolean, got {value!r}")


def _optional(parser: Any) -> Any:
    def parse(value: object) -> object:
        return None if value is None or value == "" else parser(value)

    return parse


Amount = Annotated[Decimal, BeforeValidator(_amount)]
"""A non-negative exact amount; the wire may send a string or a number."""
OptAmount = Annotated[Decimal | None, BeforeValidator(_optional(_amount))]
"""An amount that may be null or absent (USD values without a price)."""
SignedDecimal = Annotated[Decimal, BeforeValidator(_signed)]
"""An exact number that may be negative (price change, price impact)."""
OptSignedDecimal = Annotated[Decimal | None, BeforeValidator(_optional(_signed))]
"""A signed number that may be null."""
Rate = Annotated[Decimal, AllowInfNan(True), BeforeValidator(_rate)]
"""A non-negative rate; the text `Infinity` is allowed."""
Count = Annotated[int, BeforeValidator(_count)]
"""A whole number sent as a number or a string."""
Flag = Annotated[bool, BeforeValidator(_flag)]
"""A boolean sent as a JSON boolean or the text `true`/`false`."""


def unprefix_keys(data: dict[str, Any], prefix: str) -> dict[str, Any]:
    """Rename `<prefix>Xyz` keys to the spec's `svcXyz` (both spellings are read).

    Nested objects (e.g. a createOrder body's `data`) are renamed too; lists are left as is.
    """
    if not prefix or prefix == SPEC_PREFIX:
        return data
    n = len(prefix)
    renamed: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            value = unprefix_keys(value, prefix)
        if key.startswith(prefix) and len(key) > n and key[n].isupper():
            spec_key = SPEC_PREFIX + key[n:]
            renamed.setdefault(spec_key, value)
        else:
            renamed[key] = value
    return renamed


def prefixed(name: str, prefix: str) -> str:
    """`svcTxId` → `panoraTxId` for the configured prefix; other names unchanged."""
    if name.startswith(SPEC_PREFIX) and len(name) > 3 and name[3].isupper():
        return prefix + name[3:]
    return name


class WireModel(BaseModel):
    """Base of every response record: tolerant of unknown fields (kept in `model_extra`).

    Validate with `Model.model_validate(data, context={"prefix": "panora"})` to read the
    provider-prefixed names; `svc…` names are always read.
    """

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    _checks_text: ClassVar[bool] = False
    """Whole records (what a response lists) check all their text once, nested parts included."""

    @model_validator(mode="before")
    @classmethod
    def _accept_provider_prefix(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict):
            if cls._checks_text and _has_lone_surrogate(data):
                # Valid JSON (`"\ud800"`), not text: it could be neither hashed nor stored.
                raise ValueError("text with a lone surrogate escape is not valid Unicode")
            context = info.context if isinstance(info.context, dict) else {}
            return unprefix_keys(data, str(context.get("prefix", DEFAULT_PREFIX)))
        return data

    @property
    def unknown_fields(self) -> list[str]:
        """Names of fields the spec does not describe (for `bot doctor`)."""
        return sorted(self.model_extra or {})


def _has_lone_surrogate(data: dict[str, Any]) -> bool:
    """True when any key or text in `data` (nested objects and lists too) has a lone surrogate."""
    texts: list[str] = []
    stack: list[Any] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            texts.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return _LONE_SURROGATE.search("".join(texts)) is not None
