"""Bounded answers: a hostile provider cannot exhaust memory, stall a request or crash a parse.

Against a real HTTP server on 127.0.0.1 (`tests/support/hostile_answers.py`): a body far
over `max_response_bytes` (streamed, announced, or a gzip bomb), a slow-loris answer that
trickles a byte every 0.2 s, and JSON nested 100,000 levels deep. Reads get
`MalformedResponse` (a timeout: `OutcomeUnknown`) and are retried within `max_attempts`;
createOrder gets `OutcomeUnknown` and is never sent twice.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from decimal import Decimal

import pytest

from bot.api import (
    BadRequest,
    DcaCreateRequest,
    MalformedResponse,
    OutcomeUnknown,
    PanoraClient,
    SwapRequest,
)
from tests.support.hostile_answers import (
    Answer,
    HostileProvider,
    MiB,
    Served,
    deep_json,
    gzip_bomb,
)
from tests.support.loopback import serve
from tests.support.provider_stub import APT, USDC_FA, WALLET

LIMIT = 1 * MiB
DEADLINE = 1.0
GUARD = 10.0  # without the deadline a trickling answer would never end: fail, don't hang
PRICES = "GET /prices"
SWAP = "POST /swap"
CREATE = "POST /dca/v1/createOrder"
PRICE_RECORD = {
    "chainId": 1,
    "tokenAddress": APT,
    "faAddress": "0xa",
    "name": "Aptos Coin",
    "symbol": "APT",
    "decimals": 8,
    "usdPrice": "5.5",
    "nativePrice": "1",
}


async def no_sleep(_seconds: float) -> None:
    """Back-off without waiting: the test measures the exchanges, not the pauses."""


async def settled(hostile: HostileProvider) -> list[Served]:
    """Every answer once the server has finished it (it sees a hang-up a moment later)."""
    give_up = time.monotonic() + 5
    while any(not s.ended for s in hostile.served) and time.monotonic() < give_up:
        await asyncio.sleep(0.02)
    return hostile.served


@pytest.fixture
def hostile() -> HostileProvider:
    return HostileProvider()


@pytest.fixture
def base_url(hostile: HostileProvider) -> Iterator[str]:
    with serve(hostile) as url:
        yield url


def client(base_url: str, *, max_attempts: int = 2) -> PanoraClient:
    return PanoraClient(
        base_url=base_url,
        api_key=None,
        read_timeout=5.0,  # longer than any pause between chunks: only the deadline cuts
        request_deadline=DEADLINE,
        max_response_bytes=LIMIT,
        max_attempts=max_attempts,
        rate_limit_per_second=1000.0,
        rate_limit_burst=100,
        sleep=no_sleep,
    )


def dca_request() -> DcaCreateRequest:
    return DcaCreateRequest(1, WALLET, USDC_FA, APT, Decimal("100"), "total", 1, "day", 4)


def swap_request() -> SwapRequest:
    return SwapRequest(APT, USDC_FA, from_amount=Decimal("1"), to_wallet=WALLET)


# --- size ---------------------------------------------------------------------------------


async def test_a_50_mb_body_is_refused_while_it_streams(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[PRICES] = Answer(stream_bytes=50 * MiB)
    tracemalloc.start()
    started = time.monotonic()
    try:
        async with client(base_url) as api:
            with pytest.raises(MalformedResponse, match=r"over the limit of 1048576 bytes"):
                await api.get_prices()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 10
    assert hostile.calls[PRICES] == 2  # malformed reads are retried, each one bounded
    assert peak < 12 * MiB  # reading it whole would hold 50 MiB
    for served in await settled(hostile):
        assert served.hung_up  # the client dropped the connection instead of draining it
        assert served.sent < 20 * MiB  # the limit plus what loopback socket buffers hold


async def test_an_announced_oversize_body_is_refused_before_reading(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[PRICES] = Answer(stream_bytes=50 * MiB, announce=50 * MiB)
    async with client(base_url, max_attempts=1) as api:
        with pytest.raises(MalformedResponse, match=r"announced 52428800 bytes"):
            await api.get_prices()
    assert (await settled(hostile))[0].hung_up


async def test_a_gzip_bomb_is_refused_once_decoded_past_the_limit(
    base_url: str, hostile: HostileProvider
) -> None:
    bomb = gzip_bomb(50 * MiB)
    assert len(bomb) < LIMIT  # small on the wire: only the decoded size can catch it
    hostile.answers[PRICES] = Answer(body=bomb, headers=[(b"content-encoding", b"gzip")])
    tracemalloc.start()
    try:
        async with client(base_url, max_attempts=1) as api:
            with pytest.raises(MalformedResponse, match="over the limit"):
                await api.get_prices()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * MiB


async def test_a_body_of_exactly_the_limit_is_read(base_url: str, hostile: HostileProvider) -> None:
    record = json.dumps([PRICE_RECORD]).encode()
    padded = record[:-1] + b" " * (LIMIT - len(record)) + b"]"
    assert len(padded) == LIMIT
    hostile.answers[PRICES] = Answer(body=padded)
    async with client(base_url, max_attempts=1) as api:
        prices = await api.get_prices()
        assert [r.symbol for r in prices.records] == ["APT"]
        hostile.answers[PRICES] = Answer(body=padded + b" ")
        with pytest.raises(MalformedResponse, match="over the limit"):
            await api.get_prices()


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
async def test_compressed_answers_within_the_limit_are_decoded(
    base_url: str, hostile: HostileProvider, encoding: str
) -> None:
    plain = json.dumps([PRICE_RECORD]).encode()
    if encoding == "gzip":
        body = gzip.compress(plain)
    elif encoding == "deflate":
        body = zlib.compress(plain)
    else:  # some servers send "deflate" without the zlib wrapper
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = packer.compress(plain) + packer.flush()
    name = encoding.removeprefix("raw-").encode()
    hostile.answers[PRICES] = Answer(body=body, headers=[(b"content-encoding", name)])
    async with client(base_url, max_attempts=1) as api:
        prices = await api.get_prices()
    assert prices.records[0].usd_price == Decimal("5.5")


async def test_an_encoding_not_asked_for_is_refused(
    base_url: str, hostile: HostileProvider
) -> None:
    body = json.dumps([PRICE_RECORD]).encode()
    hostile.answers[PRICES] = Answer(body=body, headers=[(b"content-encoding", b"br")])
    async with client(base_url, max_attempts=1) as api:
        with pytest.raises(MalformedResponse, match="content-encoding 'br' was not asked for"):
            await api.get_prices()


async def test_an_oversize_create_order_answer_is_an_unknown_outcome_never_resent(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[CREATE] = Answer(stream_bytes=50 * MiB)
    async with client(base_url, max_attempts=4) as api:
        with pytest.raises(OutcomeUnknown, match=r"over the limit.*outcome unknown"):
            await api.create_dca_order(dca_request())
    assert hostile.calls[CREATE] == 1
    assert (await settled(hostile))[0].sent < 20 * MiB


async def test_an_oversize_refusal_keeps_its_status(
    base_url: str, hostile: HostileProvider
) -> None:
    """A 400 says the order was refused: the body's size does not make that unknown."""
    hostile.answers[CREATE] = Answer(status=400, stream_bytes=50 * MiB)
    async with client(base_url, max_attempts=4) as api:
        with pytest.raises(BadRequest, match="over the limit"):
            await api.create_dca_order(dca_request())
    assert hostile.calls[CREATE] == 1


# --- time ---------------------------------------------------------------------------------


async def test_a_slow_loris_read_times_out_at_the_deadline(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[PRICES] = Answer(trickle=0.2)
    started = time.monotonic()
    async with client(base_url, max_attempts=1) as api, asyncio.timeout(GUARD):
        with pytest.raises(OutcomeUnknown, match=r"over the 1 s deadline"):
            await api.get_prices()
    elapsed = time.monotonic() - started
    assert DEADLINE <= elapsed < DEADLINE + 1.0
    served = (await settled(hostile))[0]
    assert served.hung_up
    assert served.sent >= 3  # bytes kept arriving, each well within the 5 s read timeout


async def test_a_slow_loris_read_is_retried_within_max_attempts(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[SWAP] = Answer(trickle=0.2)
    started = time.monotonic()
    async with client(base_url, max_attempts=2) as api, asyncio.timeout(GUARD):
        with pytest.raises(OutcomeUnknown, match="deadline"):
            await api.swap(swap_request())
    assert hostile.calls[SWAP] == 2
    assert time.monotonic() - started < 2 * DEADLINE + 1.5


async def test_a_slow_loris_create_order_is_an_unknown_outcome_never_resent(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[CREATE] = Answer(trickle=0.2)
    started = time.monotonic()
    async with client(base_url, max_attempts=4) as api, asyncio.timeout(GUARD):
        with pytest.raises(OutcomeUnknown, match=r"deadline.*outcome unknown"):
            await api.create_dca_order(dca_request())
    assert time.monotonic() - started < DEADLINE + 1.0
    assert hostile.calls[CREATE] == 1


# --- nesting ------------------------------------------------------------------------------


async def test_deep_json_from_prices_is_malformed_not_a_recursion_error(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[PRICES] = Answer(body=deep_json(100_000))
    async with client(base_url) as api:
        with pytest.raises(MalformedResponse, match="nested 100000 levels deep"):
            await api.get_prices()
    assert hostile.calls[PRICES] == 2


async def test_deep_json_from_post_swap_is_malformed(
    base_url: str, hostile: HostileProvider
) -> None:
    """POST /swap only quotes and builds txData: nothing was applied, so it is a read."""
    hostile.answers[SWAP] = Answer(body=deep_json(100_000))
    async with client(base_url) as api:
        with pytest.raises(MalformedResponse, match="nested"):
            await api.swap(swap_request())
    assert hostile.calls[SWAP] == 2


async def test_deep_json_from_create_order_is_an_unknown_outcome_never_resent(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[CREATE] = Answer(body=deep_json(100_000))
    async with client(base_url, max_attempts=4) as api:
        with pytest.raises(OutcomeUnknown, match=r"nested.*outcome unknown"):
            await api.create_dca_order(dca_request())
    assert hostile.calls[CREATE] == 1


async def test_deep_json_in_an_error_body_still_gives_the_typed_error(
    base_url: str, hostile: HostileProvider
) -> None:
    hostile.answers[CREATE] = Answer(status=400, body=deep_json(100_000))
    async with client(base_url) as api:
        with pytest.raises(BadRequest):
            await api.create_dca_order(dca_request())


async def test_json_at_the_nesting_limit_is_read(base_url: str, hostile: HostileProvider) -> None:
    """64 levels: the price list itself plus 63 nested levels in an unknown field."""
    record = {**PRICE_RECORD, "extra": json.loads(deep_json(62))}
    hostile.answers[PRICES] = Answer(body=json.dumps([record]).encode())
    async with client(base_url, max_attempts=1) as api:
        prices = await api.get_prices()
        assert prices.records[0].symbol == "APT"
        record["extra"] = json.loads(deep_json(63))
        hostile.answers[PRICES] = Answer(body=json.dumps([record]).encode())
        with pytest.raises(MalformedResponse, match="nested 65 levels deep"):
            await api.get_prices()
