"""`read_limited`'s two refusals are told apart by their class, not their words.

A reader that reports in its own words (the console's remotes) catches `BodyTooLarge`
for the size limit and `BodyRefused` for the rest, never matching the message text.
"""

from __future__ import annotations

import gzip

import httpx
import pytest

from bot.bounded_body import BodyRefused, BodyTooLarge, read_limited


def _streamed(body: bytes, **headers: str) -> httpx.Response:
    return httpx.Response(200, headers=headers, stream=httpx.ByteStream(body))


@pytest.mark.parametrize(
    "response",
    [
        _streamed(b"x" * 11),  # on the wire
        _streamed(gzip.compress(b"x" * 1000), **{"content-encoding": "gzip"}),  # decoded
        _streamed(b"x", **{"content-length": "11"}),  # announced
        httpx.Response(200, content=b"x" * 11),  # already held
    ],
    ids=["wire", "decoded", "announced", "held"],
)
async def test_a_body_over_the_limit_is_too_large(response: httpx.Response) -> None:
    with pytest.raises(BodyTooLarge, match="over the limit"):
        await read_limited(response, 10)


@pytest.mark.parametrize(
    "response",
    [
        _streamed(b"x", **{"content-encoding": "br"}),  # not asked for
        _streamed(b"not gzip", **{"content-encoding": "gzip"}),  # corrupt
    ],
    ids=["unasked", "corrupt"],
)
async def test_a_bad_encoding_is_refused_but_not_too_large(response: httpx.Response) -> None:
    with pytest.raises(BodyRefused) as refused:
        await read_limited(response, 10)
    assert not isinstance(refused.value, BodyTooLarge)
