"""Canonical forms of what callers hand the journal, checked before any write.

Addresses and tokens are stored in canonical text, times as aware UTC, amounts as exact
`Decimal`s and JSON through `bot.journal.codec`. Each check raises `JournalError` naming
the offending field. Used as `canon.wallet(...)` by the store modules.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final

from bot.aptos.address import Address, AddressError
from bot.aptos.tokens import TokenLookupError, token_key
from bot.journal.codec import encode_json
from bot.journal.errors import JournalError
from bot.journal.types import decimal_text, utc_text

_TX_HASH_RE: Final = re.compile(r"^0x[0-9a-f]{64}$")


def wallet(text: str) -> str:
    """The canonical text of an account address."""
    try:
        return str(Address.parse(text))
    except AddressError as exc:
        raise JournalError(f"wallet: {exc}") from None


def token(text: str, what: str = "token") -> str:
    """The canonical key of a token (coin type or FA address, any spelling)."""
    try:
        return token_key(text)
    except TokenLookupError as exc:
        raise JournalError(f"{what}: {exc}") from None


def tx_hash(text: str) -> str:
    """A transaction hash as `0x` + 64 lowercase hex digits."""
    canonical = text.strip().lower()
    if not canonical.startswith("0x"):
        canonical = "0x" + canonical
    if not _TX_HASH_RE.match(canonical):
        raise JournalError(f"not a transaction hash (0x + 64 hex digits): {text!r}")
    return canonical


def aware(moment: datetime, what: str = "at") -> datetime:
    """An aware datetime, converted to UTC (naive ones are refused)."""
    try:
        utc_text(moment)
    except (TypeError, ValueError) as exc:
        raise JournalError(f"{what}: {exc}") from None
    return moment.astimezone(UTC)


def exact(value: Decimal | None, what: str) -> Decimal | None:
    """A finite `Decimal` that can be stored exactly, or None."""
    if value is None:
        return None
    try:
        decimal_text(value)
    except (TypeError, ValueError) as exc:
        raise JournalError(f"{what}: {exc}") from None
    return value


def json_text(value: Any, what: str) -> str:
    """`value` as exact JSON text (floats refused, see `bot.journal.codec`)."""
    try:
        return encode_json(value)
    except ValueError as exc:
        raise JournalError(f"{what}: {exc}") from None


def row_id(value: int | None) -> int:
    """The id of a flushed row."""
    if value is None:  # pragma: no cover - a flushed row always has an id
        raise JournalError("row has no id (not flushed)")
    return value
