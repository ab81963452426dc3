"""Command-line values: durations (`30s`, `5m`, `1h`, `1 day`), name lists, `TOKEN=VALUE` pairs."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from bot.aptos.address import split_names
from bot.duration import parse_duration
from bot.money import parse_decimal

__all__ = ["parse_seconds", "parse_token_values"]


def parse_seconds(text: str, *, field: str = "duration") -> int:
    """Whole seconds of a duration (`30s`, `5m`, `1h`, `1 day`, `60`): `bot.duration`.

    Raises:
        ValueError: one line naming `field` and the text, for anything else.
    """
    return parse_duration(text, field=field).seconds


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
