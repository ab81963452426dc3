"""`PanoraClient.get_token_list` on Panora's real token-list bodies, and `bot api check`'s reader.

The bodies are the contract fixtures (tests/contract/PROVENANCE.md): Panora's docs example
record and records of Panora's own token list, wrapped as the SDK reads the answer
(`{data: [...]}`, SDK 1.3.1 `Token.getTokenList`). The request is compared with the SDK's
request form (`tokenlist/get_token_list.request.json`).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from bot.api.answer_check import Answer, check_answers
from bot.api.token_list import TokenListRecord
from bot.api.tokens import token_of
from tests.support.client_capture import capturing_client, unknown_fields
from tests.support.evidence import fixture, fixture_exact, request_form

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
LZ_USDC = "0xf22bede237a07e121b56d91a491eb7bcdfd1f5907926a9e58338f964a01b17fa::asset::USDC"


def real_records() -> list[dict[str, Any]]:
    """Panora's token-list records and its docs example record (plain JSON)."""
    records: list[dict[str, Any]] = fixture("tokenlist/aptos_tokens_records.json")
    return [*records, fixture("tokenlist/docs_example_usdc.json")]


async def test_the_client_reads_the_real_token_list_in_its_data_wrapper() -> None:
    raw = real_records()
    client, captured = capturing_client({"data": raw})
    async with client:
        listing = await client.get_token_list(ui_only=False)
    assert not listing.rejected and len(listing.records) == len(raw) == 7
    for record, item in zip(listing.records, raw, strict=True):
        assert (record.token_address, record.fa_address) == (
            item.get("tokenAddress"),
            item["faAddress"],
        )
        assert record.decimals == item["decimals"] and record.svc_tags == item["panoraTags"]
        assert record.svc_ui is item["panoraUI"] and record.svc_index == item["panoraIndex"]
        assert record.coin_market_cap_id == item["coinMarketCapId"]
        assert record.bridge == item.get("bridge") and record.logo_url == item["logoUrl"]
        assert unknown_fields(record) == [], item["symbol"]  # every real key is a field
    docs = listing.records[-1]
    assert docs.svc_id == "a1-vqom8-USDC" and docs.usd_price == Decimal("0.99995004")
    assert isinstance(docs.usd_price, Decimal)
    assert (docs.is_in_token_list, docs.is_banned) == (True, False)
    assert listing.records[0].usd_price is None  # the repository form has no price
    [request] = captured.requests
    assert request.method == "GET" and request.url.path == "/tokenlist"
    assert request.url.params.get("panoraUI") == "true,false"


async def test_the_request_has_the_sdk_form_and_names_nothing_else() -> None:
    form = request_form("tokenlist/get_token_list.request.json")
    client, captured = capturing_client({"data": []})
    async with client:
        await client.get_token_list([APT, USDC], ui_only=False, tags=["Verified", "Native"])
        await client.get_token_list()
    asked, default = captured.requests
    assert (asked.method, asked.url.path) == (form["method"], form["path"])
    assert set(asked.url.params) <= set(form["query"])  # no isInPanoraTokenList, no paging
    assert asked.url.params["tokenAddress"] == f"{APT},{USDC}"  # comma-list
    assert asked.url.params["panoraTags"] == "Verified,Native"
    assert asked.url.params["panoraUI"] == form["query"]["panoraUI"]["all"]
    assert asked.headers["x-api-key"] and asked.content == b""  # no body
    assert dict(default.url.params) == {"chainId": "1"}  # unset filters are omitted


async def test_a_bare_list_and_a_single_record_are_read_too() -> None:
    raw = real_records()
    bare, _ = capturing_client(raw)
    single, _ = capturing_client(raw[0])
    async with bare, single:
        from_list = await bare.get_token_list()
        from_one = await single.get_token_list()
    assert [r.symbol for r in from_list.records] == [r["symbol"] for r in raw]
    assert [r.symbol for r in from_one.records] == ["APT"]


async def test_one_malformed_record_is_set_aside_not_fatal() -> None:
    raw = real_records()
    raw[1] = {**raw[1], "decimals": "six"}
    raw[2] = {**raw[2], "isBanned": "perhaps"}  # a safety flag that cannot be read
    client, _ = capturing_client({"data": raw})
    async with client:
        listing = await client.get_token_list()
    assert [(r.index, r.record_id) for r in listing.rejected] == [
        (1, raw[1]["faAddress"]),
        (2, raw[2]["faAddress"]),
    ]
    assert "decimals" in listing.rejected[0].error and "isBanned" in listing.rejected[1].error
    assert [r.symbol for r in listing.records] == ["APT", "USDC", "TAPP", "PACT", "USDC"]
    assert client.stats.rejected_records == 2


def test_informative_metadata_of_the_wrong_type_reads_as_none_and_keeps_the_token() -> None:
    item = {**fixture("tokenlist/docs_example_usdc.json"), "logoUrl": 7, "panoraIndex": "x"}
    record = TokenListRecord.model_validate(item, context={"prefix": "panora"})
    assert (record.logo_url, record.svc_index, record.decimals) == (None, None, 6)


def test_is_banned_true_counts_as_the_banned_tag() -> None:
    banned = {**fixture("tokenlist/docs_example_usdc.json"), "isBanned": True}
    token = token_of(TokenListRecord.model_validate(banned, context={"prefix": "panora"}))
    assert token.banned and token.tags == ("Native", "Verified", "Banned")
    fine = TokenListRecord.model_validate(fixture("tokenlist/docs_example_usdc.json"))
    assert not token_of(fine).banned


def test_a_bridged_record_keeps_its_provider_symbol_and_coin_type() -> None:
    [bridged] = [r for r in real_records() if r.get("bridge") == "LayerZero"]
    token = token_of(TokenListRecord.model_validate(bridged, context={"prefix": "panora"}))
    assert (token.provider_symbol, token.coin_type, token.symbol) == ("lzUSDC", LZ_USDC, "USDC")


# --- `bot api check` routes /tokenlist answers through get_token_list -------------------


async def test_api_check_finds_no_new_field_in_the_real_token_list() -> None:
    body = {"data": fixture_exact("tokenlist/aptos_tokens_records.json")}
    docs = {"data": [fixture_exact("tokenlist/docs_example_usdc.json")]}
    answers = [
        Answer(source="a.json", method="GET", path="/tokenlist", body=body),
        Answer(source="b.json", method="GET", path="/tokenlist", body=docs),
    ]
    report = await check_answers(answers)
    assert report.failures == [] and dict(report.new_fields) == {}
    assert report.checked["GET /tokenlist"] == 2
    # `priceChange24H?` is optional in the SDK's TokenInfo and absent from every sample
    assert [path for endpoint, path in report.gone()] == ["[].priceChange24H"]


async def test_api_check_reports_a_new_wrapper_key_a_new_field_and_a_bad_record() -> None:
    record = {**fixture_exact("tokenlist/docs_example_usdc.json"), "launchDate": "2026-01-01"}
    broken = {**record, "decimals": None}
    body = {"data": [record, broken], "count": 2}
    text = json.dumps(body, default=str)
    answer = Answer(source="c.json", method="GET", path="/tokenlist", body=body, text=text)
    report = await check_answers([answer])
    assert {path for _endpoint, path in report.new_fields} == {"count", "[].launchDate"}
    [failure] = report.failures
    assert failure.startswith("does not parse: GET /tokenlist c.json: record 1 (")


@pytest.mark.parametrize("ui_only", [True, False, None])
async def test_prices_and_token_list_write_the_same_filters(ui_only: bool | None) -> None:
    client, captured = capturing_client([])
    async with client:
        await client.get_prices([APT], ui_only=ui_only, tags=["Meme"])
        await client.get_token_list([APT], ui_only=ui_only, tags=["Meme"])
    prices, listing = captured.requests
    assert list(prices.url.params.multi_items()) == list(listing.url.params.multi_items())
