"""Command-line values: durations (`30s`, `5m`, `1h`), name lists, `TOKEN=VALUE` pairs."""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Final

from bot.aptos.address import split_names
from bot.money import parse_decimal

__all__ = ["parse_seconds", "parse_token_values"]

_UNITS: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400}
_PATTERN: Final = re.compile(r"(\d+)\s*([smhd]?)")


def parse_seconds(text: str, *, field: str = "duration") -> int:
    """Whole seconds of `30s`, `5m`, `1h`, `1d` or `60`; at least one second.

    Raises:
        ValueError: naming `field` and the text, for anything else.
    """
    match = _PATTERN.fullmatch(text.strip().lower())
    seconds = int(match.group(1)) * _UNITS[match.group(2)] if match else 0
    if seconds < 1:
        raise ValueError(f"{field}: expected e.g. 30s, 5m, 1h or seconds ≥ 1, got {text!r}")
    return seconds


def parse_token_values(items: Iterable[str], *, field: str) -> dict[str, Decimal]:
    """`APT=5,USDC=1` (each item may hold several pairs) → {name: exact value > 0}.

    Raises:
        ValueError: naming `field` and the pair, for a malformed pair or a value ≤ 0.
    """
    values: dict[str, Decimal] = {}
    for item in items:
        for pair in split_names(item):
            name, sep, text = pair.rpartition("=")
            try:
                if not sep or not name.strip():
                    raise ValueError("expected TOKEN=VALUE")
                value = parse_decimal(text, field="value")
                if not value > 0:
                    raise ValueError("must be > 0")
            except ValueError as exc:  # MoneyError is a ValueError
                raise ValueError(f"{field} {pair!r}: {exc}") from None
            values[name.strip()] = value
    return values
