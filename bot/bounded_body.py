"""Reading an answer's body within a byte budget, while it streams (provider and node).

The provider is untrusted and the node may misbehave: an answer may be endless, or a small
gzip stream that inflates to gigabytes. `read_limited` counts the bytes on the wire and
the bytes after decoding, and stops reading (the caller then drops the connection) as soon
as either passes the limit, so memory stays bounded by the limit whatever the server
sends. The client asks
only for the encodings decoded here (`ACCEPT_ENCODING`); any other one is refused.
"""

from __future__ import annotations

import zlib
from typing import Final

import httpx

__all__ = ["ACCEPT_ENCODING", "BodyRefused", "BodyTooLarge", "read_limited"]

ACCEPT_ENCODING: Final = "gzip, deflate"
_GZIP: Final = 16 + zlib.MAX_WBITS


class BodyRefused(ValueError):
    """The body passed the size limit, or came in an encoding the client does not read."""


class BodyTooLarge(BodyRefused):
    """The body passed the size limit (announced, held, on the wire or once decoded)."""


class _OverLimit(Exception):
    """Internal: the budget is spent; `read_limited` turns it into a `BodyTooLarge`."""


class _Identity:
    """Passes bytes through, counting them against the budget."""

    def feed(self, data: bytes, room: int) -> bytes:
        if len(data) > room:
            raise _OverLimit
        return data

    def finish(self, room: int) -> bytes:
        return b""


class _Inflate:
    """gzip/deflate decoding that never produces more than `room + 1` bytes per call."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        # "deflate" is meant to be zlib-wrapped; some servers send it raw, as httpx allows.
        self._raw_fallback = encoding == "deflate"
        self._z = zlib.decompressobj(zlib.MAX_WBITS if self._raw_fallback else _GZIP)

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            out = self._z.decompress(data, room + 1)
        except zlib.error as exc:
            if not self._raw_fallback:
                raise BodyRefused(f"content-encoding {self._encoding}: {exc}") from None
            self._raw_fallback = False
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.feed(data, room)
        self._raw_fallback = False
        if len(out) > room:  # max_length reached: more would follow
            raise _OverLimit
        return out

    def finish(self, room: int) -> bytes:
        try:
            # All input is consumed (`feed` never stopped early), so little or nothing is
            # left; flush's argument is a buffer size to allocate, not a bound.
            out = self._z.flush()
        except zlib.error as exc:
            raise BodyRefused(f"content-encoding {self._encoding}: {exc}") from None
        if len(out) > room:
            raise _OverLimit
        return out


def _decoder(response: httpx.Response) -> _Identity | _Inflate:
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity"):
        return _Identity()
    if encoding in ("gzip", "x-gzip", "deflate"):
        return _Inflate(encoding)
    raise BodyRefused(f"content-encoding {encoding[:40]!r} was not asked for")


async def read_limited(response: httpx.Response, limit: int) -> bytes:
    """The decoded body of a streamed `response`, refused past `limit` bytes.

    Refused at once when `Content-Length` announces more; otherwise reading stops at the
    first chunk that passes the limit on the wire or once decoded.

    Raises:
        BodyRefused: an encoding other than identity/gzip/deflate, or a corrupt one.
        BodyTooLarge: over the limit (a `BodyRefused` too).
    """
    announced = response.headers.get("content-length", "").strip()
    if announced.isdigit() and int(announced) > limit:
        raise BodyTooLarge(f"announced {announced} bytes, over the limit of {limit}")
    try:  # a body already in memory (a test transport's ready-made response)
        held = response.content
    except httpx.ResponseNotRead:
        pass
    else:
        if len(held) > limit:
            raise BodyTooLarge(f"body of {len(held)} bytes, over the limit of {limit}")
        return held
    decoder = _decoder(response)
    parts: list[bytes] = []
    wire = size = 0
    try:
        async for chunk in response.aiter_raw():
            wire += len(chunk)
            if wire > limit:
                raise _OverLimit
            data = decoder.feed(chunk, limit - size)
            size += len(data)
            parts.append(data)
        parts.append(decoder.finish(limit - size))
    except _OverLimit:
        raise BodyTooLarge(
            f"body over the limit of {limit} bytes (stopped after {wire} bytes)"
        ) from None
    return b"".join(parts)
