"""A minimal ASGI toolkit for the paper faces: parse a request, send JSON, misbehave on purpose.

The faces are raw ASGI (no framework) because fault injection needs what frameworks
hide: closing a connection after the headers, or answering long after the work was done.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl

__all__ = [
    "HttpError",
    "Receive",
    "Request",
    "Scope",
    "Send",
    "encode_json",
    "read_request",
    "send_bytes",
    "send_json",
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class HttpError(Exception):
    """An error answer: status and message (rendered in the face's own error shape)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclass
class Request:
    """What a handler needs from a request."""

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes
    client: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> str | None:
        """The last value of a query parameter (None when absent)."""
        values = [v for k, v in self.query if k == name]
        return values[-1] if values else None

    def json(self) -> Any:
        """The body as JSON with exact numbers; an empty body is `{}`.

        Raises:
            HttpError: 400 when the body is not JSON.
        """
        if not self.body.strip():
            return {}
        try:
            return json.loads(self.body, parse_float=Decimal)
        except ValueError:
            raise HttpError(400, "request body is not valid JSON") from None


async def read_request(scope: Scope, receive: Receive) -> Request:
    """Read the whole request (bodies here are small)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    client = scope.get("client") or ("", 0)
    return Request(
        method=scope["method"],
        path=scope["path"],
        query=parse_qsl(scope.get("query_string", b"").decode(), keep_blank_values=True),
        headers={k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]},
        body=b"".join(chunks),
        client=str(client[0]),
    )


def _default(value: object) -> object:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def encode_json(data: Any) -> bytes:
    """Compact JSON; Decimals as strings (never floats)."""
    return json.dumps(data, separators=(",", ":"), default=_default).encode()


async def send_bytes(
    send: Send,
    status: int,
    body: bytes,
    *,
    headers: dict[str, str] | None = None,
    delay: float = 0.0,
    drop: bool = False,
) -> None:
    """Send an answer; optionally late (`delay`) or cut after the headers (`drop`)."""
    if delay:
        await asyncio.sleep(delay)
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ] + [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    if drop:
        # The headers promised a body; closing now drops the connection mid-answer.
        raise ConnectionAbortedError("paper fault: connection dropped after the request")
    await send({"type": "http.response.body", "body": body})


async def send_json(send: Send, status: int, data: Any, **kwargs: Any) -> None:
    """Send a JSON answer (see `send_bytes` for the options)."""
    await send_bytes(send, status, encode_json(data), **kwargs)
