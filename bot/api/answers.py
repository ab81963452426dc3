"""Reading the provider's answers: small pure helpers the client shares.

The text of a body for messages, the first validation error in one line, a record's id
for a rejection note, and the shapes a list answer may come in.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import ValidationError

from bot.api.wire import prefixed

__all__ = ["as_record_list", "body_text", "first_error", "int_or", "reason", "record_id"]


def body_text(response: httpx.Response, content: bytes) -> str:
    """The body as text for messages: its declared charset, else UTF-8; never raises."""
    try:
        return content.decode(response.charset_encoding or "utf-8", errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


def reason(exc: Exception) -> str:
    """`ConnectError: refused`: an exception's type and text, for one-line messages."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def first_error(exc: ValidationError) -> str:
    """`quotes.0.toTokenAmount: Field required (+2 more)`: the first problem, in one line."""
    errors = exc.errors()
    if not errors:
        return "invalid"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "record"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}"


def record_id(item: Any, prefix: str) -> str | None:
    """The order id or token address of a raw record, to name it when it is set aside."""
    if not isinstance(item, dict):
        return None
    for key in ("svcTxId", prefixed("svcTxId", prefix), "tokenAddress", "faAddress"):
        value = item.get(key)
        if isinstance(value, str):
            return value
    return None


def int_or(value: Any, default: int) -> int:
    """`value` when it is a JSON integer (not a boolean), else `default`."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def as_record_list(data: Any) -> list[Any]:
    """The price endpoint may answer with a list, one object, or a wrapper holding a list."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("data", "prices", "result"):
            if isinstance(data.get(key), list):
                return list(data[key])
        return [data]
    return [data]
