"""Shared building blocks of the wire models: exact field types and provider-prefix handling.

The spec writes provider-specific field names with the prefix `svc` (`svcTxId`, `svcUI`…);
the real service uses its own name (`panoraTxId`, `panoraUI`…). Models declare the `svc…`
names; `WireModel` accepts either spelling on input (the configured prefix reaches it as
validation context, default `panora`), and `prefixed()` writes the configured one.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Final

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
    "Amount",
    "Count",
    "Flag",
    "OptAmount",
    "OptSignedDecimal",
    "Rate",
    "SignedDecimal",
    "WireModel",
    "prefixed",
    "unprefix_keys",
]

DEFAULT_PREFIX: Final = "panora"
SPEC_PREFIX: Final = "svc"


def _amount(value: object) -> Decimal:
    result = parse_decimal(value, field="amount")
    if result < 0:
        raise MoneyError(f"amount must not be negative: {value!r}")
    return result


def _signed(value: object) -> Decimal:
    return parse_decimal(value, field="number")


def _rate(value: object) -> Decimal:
    result = parse_decimal(value, allow_infinity=True, field="rate")
    if result < 0:
        raise MoneyError(f"rate must not be negative: {value!r}")
    return result


def _count(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError("expected a whole number, got bool")
    if isinstance(value, int):
        result = value
    else:
        number = parse_decimal(value, field="count")
        if number != number.to_integral_value():
            raise ValueError(f"expected a whole number, got {value!r}")
        result = int(number)
    if result < 0:
        raise ValueError(f"expected a non-negative whole number, got {value!r}")
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

    @model_validator(mode="before")
    @classmethod
    def _accept_provider_prefix(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict):
            context = info.context if isinstance(info.context, dict) else {}
            return unprefix_keys(data, str(context.get("prefix", DEFAULT_PREFIX)))
        return data

    @property
    def unknown_fields(self) -> list[str]:
        """Names of fields the spec does not describe (for `bot doctor`)."""
        return sorted(self.model_extra or {})
