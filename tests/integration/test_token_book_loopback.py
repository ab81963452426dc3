"""The token book (`fetch_token_book`) from `GET /tokenlist`, and its `/prices` fallback.

The client talks to the scripted provider stub over 127.0.0.1. `/tokenlist` answers with
Panora's real token-list records (tests/contract/fixtures, PROVENANCE.md) in the SDK's
`{data: [...]}` wrapper; the stub answers 404 for an endpoint it is not given, as a server
that does not serve `/tokenlist` would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from bot.api import PanoraClient, ServerError, Unauthorized
from bot.api.tokens import fetch_token_book
from tests.support.evidence import fixture
from tests.support.loopback import serve
from tests.support.provider_stub import APT, USDC_FA, ProviderStub, Reply

KEY = "token-book-key-3a9d"
TAPP_FA = "0x7e464f3d2c1aed51cdcbdc653cc5c21526fe424bed2944bdd21dabb389dd7921"


async def _no_wait(seconds: float) -> None:
    return None


@pytest.fixture
def stub() -> ProviderStub:
    return ProviderStub()


@pytest.fixture
def url(stub: ProviderStub) -> Iterator[str]:
    with serve(stub) as base:
        yield base


def client(url: str) -> PanoraClient:
    return PanoraClient(
        base_url=url,
        api_key=SecretStr(KEY),
        rate_limit_per_second=1000.0,
        rate_limit_burst=100,
        max_attempts=2,
        sleep=_no_wait,
    )


def token_list_body() -> dict[str, Any]:
    records = fixture("tokenlist/aptos_tokens_records.json")
    return {"data": [*records, fixture("tokenlist/docs_example_usdc.json")]}


async def test_the_book_comes_from_the_token_list_for_all_tokens(
    url: str, stub: ProviderStub
) -> None:
    stub.script("GET", "/tokenlist", Reply(body=token_list_body()))
    async with client(url) as api:
        book = await fetch_token_book(api)
    [call] = stub.requests  # one request: no price list asked for
    assert (call.method, call.path) == ("GET", "/tokenlist")
    assert call.param("panoraUI") == "true,false" and call.param("x-api-key") is None
    assert call.headers["x-api-key"] == KEY
    assert book.find("APT").coin_type == APT and book.find("APT").decimals == 8
    assert book.find("USDC").fa_address == USDC_FA  # native USDC, not the bridged one
    assert book.find("lzUSDC").provider_symbol == "lzUSDC"
    assert book.find("PACT").ui is False  # hidden tokens are in the book too
    assert book.get(TAPP_FA) is not None and len(book) == 6  # the docs' USDC is the same


async def test_a_404_for_the_token_list_falls_back_to_all_prices(
    url: str, stub: ProviderStub
) -> None:
    async with client(url) as api:  # the stub does not serve /tokenlist: 404
        book = await fetch_token_book(api)
        assert api.stats.retries == 0  # a 404 is an answer, not retried
    assert [(r.method, r.path) for r in stub.requests] == [
        ("GET", "/tokenlist"),
        ("GET", "/prices"),
    ]
    assert stub.requests[1].param("panoraUI") == "true,false"
    assert book.find("APT").coin_type == APT and book.find("USDC").fa_address == USDC_FA


async def test_a_token_list_with_no_usable_token_falls_back_too(
    url: str, stub: ProviderStub
) -> None:
    unusable = {"data": [{"symbol": "X", "decimals": 8}, {"faAddress": "nonsense", "decimals": 6}]}
    stub.script("GET", "/tokenlist", Reply(body=unusable))
    async with client(url) as api:
        book = await fetch_token_book(api)
    assert [r.path for r in stub.requests] == ["/tokenlist", "/prices"]
    assert book.find("APT").coin_type == APT


async def test_an_unusable_record_is_left_out_and_the_rest_kept(
    url: str, stub: ProviderStub
) -> None:
    body = token_list_body()
    body["data"].insert(0, {"symbol": "BAD", "faAddress": "not-an-address", "decimals": 8})
    stub.script("GET", "/tokenlist", Reply(body=body))
    async with client(url) as api:
        book = await fetch_token_book(api)
    assert [r.path for r in stub.requests] == ["/tokenlist"]
    assert book.find("APT").coin_type == APT and len(book) == 6


@pytest.mark.parametrize(
    ("status", "error"), [(401, Unauthorized), (500, ServerError)], ids=["401", "500"]
)
async def test_other_errors_are_not_hidden_by_a_fallback(
    url: str, stub: ProviderStub, status: int, error: type[Exception]
) -> None:
    refusal = Reply(status, {"statusCode": status, "message": "no", "status": "fail"})
    stub.script("GET", "/tokenlist", refusal, refusal)
    async with client(url) as api:
        with pytest.raises(error):
            await fetch_token_book(api)
    assert {r.path for r in stub.requests} == {"/tokenlist"}
