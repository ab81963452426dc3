"""The paper world's `GET /tokenlist`, over the in-process ASGI app.

The real form (SDK 1.3.1 `Token.getTokenList` and `TokenInfo`, Panora's docs example):
`{data: [...]}`; `panoraUI` `true` by default, `true,false` for every token; with no
`tokenAddress` (and no tags) the tokens tagged Verified or Recognized.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from bot.config import PaperSettings
from bot.paper.world import PaperWorld, build_world
from tests.support.paper_service import assert_fail

KEY = "k"
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
TOKEN_INFO_KEYS = {
    "chainId",
    "panoraId",
    "tokenAddress",
    "faAddress",
    "name",
    "symbol",
    "decimals",
    "bridge",
    "panoraSymbol",
    "usdPrice",
    "logoUrl",
    "websiteUrl",
    "panoraUI",
    "panoraTags",
    "panoraIndex",
    "coinGeckoId",
    "coinMarketCapId",
    "isInPanoraTokenList",
    "isBanned",
}
"""SDK 1.3.1 `TokenInfo` and the docs example's two flags (`priceChange24H?` optional)."""


@pytest.fixture(scope="module")
def world() -> PaperWorld:
    settings = PaperSettings(
        clock="stepped", api_keys=[KEY], rate_limit_per_second=1e6, rate_limit_burst=10**6
    )
    return build_world(settings)


@pytest.fixture
async def client(world: PaperWorld) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=world.provider_api)
    headers = {"x-api-key": KEY}
    async with httpx.AsyncClient(transport=transport, base_url="http://p", headers=headers) as c:
        yield c


async def listed(client: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    response = await client.get("/tokenlist", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data"}
    records: list[dict[str, Any]] = body["data"]
    return records


async def test_every_token_is_listed_with_panora_ui_true_false(client: httpx.AsyncClient) -> None:
    shown = await listed(client)
    every = await listed(client, panoraUI="true,false")
    hidden = await listed(client, panoraUI="false")
    assert shown and all(r["panoraUI"] is True for r in shown)
    assert hidden and all(r["panoraUI"] is False for r in hidden)
    assert len(every) == len(shown) + len(hidden)
    addresses = {r["tokenAddress"] for r in every} | {r["faAddress"] for r in every}
    assert {APT, USDC} <= addresses


async def test_by_default_only_verified_or_recognized_tokens(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    every = await listed(client, panoraUI="true,false")
    tags = [set(r["panoraTags"]) for r in every]
    assert all(t & {"Verified", "Recognized"} for t in tags)
    assert not any(r["isBanned"] for r in every)
    registered = [t for t in world.market.tokens if {"Verified", "Recognized"} & set(t.tags)]
    assert len(every) == len(registered) < len(world.market.tokens)


async def test_tags_and_addresses_select_as_asked(client: httpx.AsyncClient) -> None:
    banned = await listed(client, panoraUI="true,false", panoraTags="Banned")
    assert banned and all(r["isBanned"] is True and "Banned" in r["panoraTags"] for r in banned)
    by_address = await listed(client, tokenAddress=f"{USDC},{APT},{banned[0]['faAddress']}")
    assert [r["symbol"] for r in by_address] == ["USDC", "APT", banned[0]["symbol"]]


async def test_records_have_the_token_info_keys_and_the_listing_metadata(
    client: httpx.AsyncClient,
) -> None:
    every = await listed(client, panoraUI="true,false")
    for record in every:
        assert TOKEN_INFO_KEYS <= set(record) <= TOKEN_INFO_KEYS | {"priceChange24H"}
        assert isinstance(record["panoraId"], str) and "nativePrice" not in record
    [apt] = [r for r in every if r["tokenAddress"] == APT]
    assert (apt["faAddress"], apt["decimals"], apt["usdPrice"]) == ("0xa", 8, "5")
    assert (apt["panoraIndex"], apt["coinGeckoId"], apt["coinMarketCapId"]) == (1, "aptos", 21794)
    assert apt["logoUrl"] == "https://assets.panora.exchange/tokens/aptos/apt.svg"
    bridged = [r for r in every if r["bridge"] is not None]
    assert bridged and all(isinstance(r["bridge"], str) for r in bridged)


async def test_a_token_without_a_price_is_listed_with_a_null_price(
    client: httpx.AsyncClient,
) -> None:
    every = await listed(client, panoraUI="true,false")
    priced = (await client.get("/prices", params={"panoraUI": "true,false"})).json()
    unpriced = [r for r in every if r["usdPrice"] is None]
    assert unpriced  # the token list is not the price list
    assert not {r["faAddress"] for r in unpriced} & {r["faAddress"] for r in priced}


@pytest.mark.parametrize(
    ("params", "word"),
    [({"panoraUI": "maybe"}, "panoraUI"), ({"chainId": "2"}, "chainId")],
    ids=["ui", "chain"],
)
async def test_bad_filters_are_400_naming_the_parameter(
    client: httpx.AsyncClient, params: dict[str, str], word: str
) -> None:
    assert_fail(await client.get("/tokenlist", params=params), 400, word)


async def test_the_token_list_needs_the_api_key(world: PaperWorld) -> None:
    transport = httpx.ASGITransport(app=world.provider_api)
    async with httpx.AsyncClient(transport=transport, base_url="http://p") as anonymous:
        assert_fail(await anonymous.get("/tokenlist"), 401, "API key")
