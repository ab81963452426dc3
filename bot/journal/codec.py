"""Canonical JSON for the journal's JSON columns, with exact `Decimal`s and aware times.

Used for `intents.action_json`, `strategy_state.value_json` and `commands.payload_json`.

* Output is canonical: keys sorted, no spaces, UTF-8 text (`ensure_ascii=False`), so the
  same value always gives the same text (and the same hash).
* A `Decimal` is written as `{"$decimal": "1.5"}` (the text of `bot.journal.types.
  decimal_text`: exact, no exponent) and read back as a `Decimal`, so `Decimal("1.5")`
  never turns into the float `1.5` or the plain string `"1.5"`.
* An aware `datetime` is written as `{"$datetime": "2026-01-01T00:00:00.000000+00:00"}`
  and read back as aware UTC; a naive one is refused.
* `int`, `str`, `bool`, `None`, lists/tuples (read back as lists) and mappings with `str`
  keys pass through. Keys starting with `$` are reserved for the tags above and refused.
* Floats, NaN and any other type are refused with `ValueError`: money code never sees a
  float.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from bot.journal.text import decimal_text, parse_decimal_text, utc_text

__all__ = ["decode_json", "encode_json", "raw_hash"]

_DECIMAL_TAG = "$decimal"
_DATETIME_TAG = "$datetime"


def _plain(value: Any, path: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal):
        try:
            return {_DECIMAL_TAG: decimal_text(value)}
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    if isinstance(value, float):
        raise ValueError(f"{path}: float {value!r} refused (use Decimal)")
    if isinstance(value, datetime):
        try:
            return {_DATETIME_TAG: utc_text(value)}
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{path}: key {key!r} is not a string")
            if key.startswith("$"):
                raise ValueError(f"{path}: key {key!r} is reserved (starts with '$')")
            out[key] = _plain(item, f"{path}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, f"{path}[{i}]") for i, item in enumerate(value)]
    raise ValueError(f"{path}: cannot store {type(value).__name__} as journal JSON")


def encode_json(value: Any) -> str:
    """Canonical JSON text of `value` (see the module docstring).

    Raises:
        ValueError: naming the path of a float, NaN, naive datetime, reserved key or other
            value that cannot be stored exactly.
    """
    return json.dumps(_plain(value, "$"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _tagged(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if _DECIMAL_TAG in obj and isinstance(obj[_DECIMAL_TAG], str):
            return parse_decimal_text(obj[_DECIMAL_TAG])
        if _DATETIME_TAG in obj and isinstance(obj[_DATETIME_TAG], str):
            return datetime.fromisoformat(obj[_DATETIME_TAG]).astimezone(UTC)
    return obj


def _reject_float(text: str) -> Any:
    raise ValueError(f"journal JSON holds a float {text}; amounts are stored as $decimal")


def decode_json(text: str) -> Any:
    """Read text written by `encode_json`: tagged values back to `Decimal`/`datetime`."""
    return json.loads(text, object_hook=_tagged, parse_float=_reject_float)


def raw_hash(record: Any) -> str:
    """SHA-256 (hex) of a raw wire record's canonical JSON: the `raw_hash` of observations.

    Two observations of the same record give the same hash whatever their key order.
    Floats in the record are refused like everywhere else (parse the wire with
    `bot.money.loads_exact`).
    """
    return hashlib.sha256(encode_json(record).encode("utf-8")).hexdigest()
