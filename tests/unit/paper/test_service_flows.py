"""Successful flows of the paper provider face: listing, paging, record shapes, prices, swaps.

Over the in-process ASGI app with a stepped clock; amounts compared as `Decimal` or int.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal, localcontext
from typing import Any

import httpx
import pytest

from bot.aptos.tokens import Token
from bot.clock import parse_utc
from bot.paper.core.orders import KEEPER_WALLET
from bot.paper.core.router import ROUTER_FUNCTION, RouterCall
from bot.paper.faces.provider_api import ProviderApi
from bot.paper.service import PaperService
from bot.paper.world import PaperWorld, build_world
from tests.support.paper_service import client_for, paper_settings

KEY = "k"
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "ab" * 32
OTHER = "0x" + "a2" * 32
GUI_FA = "0x0009da434d9b873b5159e8eeed70202ad22dc075867a7793234fbc981b63e119"
MKLP = (
    "0x5ae6789dd2fec1a9ec9cccfb3acaf12e93d432f0a3a42c92fe1a9d490b7bbc06::house_lp::MKLP"
    "<0x5ae6789dd2fec1a9ec9cccfb3acaf12e93d432f0a3a42c92fe1a9d490b7bbc06::fa_box::W_USDC>"
)
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
ADDRESS = re.compile(r"^0x[0-9a-f]{64}$")

DCA_REQUIRED = {
    "panoraTxId",
    "fromToken",
    "toToken",
    "feeToken",
    "fromTokenAmountTotal",
    "fromTokenAmountSpent",
    "fromTokenAmountBalance",
    "fromTokenAmountWithdrawn",
    "toTokenAmountWithdrawn",
    "numberOfOrdersTotal",
    "fromTokenAmountPerOrder",
    "numberOfOrdersRemaining",
    "numberOfOrdersCompleted",
    "interval",
    "createdAtTime",
    "nextOrderTime",
    "avgPriceFromTokenPerToToken",
    "avgPriceToTokenPerFromToken",
    "status",
    "platformId",
    "slippagePercentage",
}
DCA_OPTIONAL = {
    "estimatedCompletionTime",
    "minRateToTokenPerFromToken",
    "maxRateToTokenPerFromToken",
    "delay",
    "txDetails",
}
LIMIT_REQUIRED = {
    "panoraTxId",
    "fromToken",
    "toToken",
    "feeToken",
    "createdAtTime",
    "status",
    "expireAtTime",
    "fromTokenAmount",
    "rateToTokenPerFromToken",
    "fromTokenAmountSpent",
    "fromTokenAmountBalance",
    "fromTokenAmountWithdrawn",
    "toTokenAmountWithdrawn",
    "numberOfOrdersCompleted",
    "avgPriceFromTokenPerToToken",
    "avgPriceToTokenPerFromToken",
    "slippagePercentage",
}
DETAIL_REQUIRED = {
    "txId",
    "txNumber",
    "type",
    "attemptNumber",
    "fromTokenAmount",
    "fromTokenAmountUSD",
    "toTokenAmount",
    "toTokenAmountUSD",
    "feeTokenAmount",
    "feeTokenAmountUSD",
    "time",
}
DETAIL_OPTIONAL = {"priceFromTokenPerToToken", "priceToTokenPerFromToken", "keeperWalletAddress"}
PRICE_RECORD = {  # the docs' example and SDK 1.3.1 `TokenPrice` (wire decision 40)
    "chainId",
    "tokenAddress",
    "faAddress",
    "name",
    "symbol",
    "decimals",
    "usdPrice",
    "nativePrice",
    "priceChange24H",
}


def new_world(**overrides: Any) -> PaperWorld:
    world = build_world(paper_settings(**overrides), escrow_style="escrow")
    market = world.market
    market.fund(WALLET, market.tokens.require(APT), 1_000 * 10**8)
    market.fund(WALLET, market.tokens.require(USDC), 10_000 * 10**6)
    return world


@pytest.fixture
def world() -> PaperWorld:
    return new_world()


@pytest.fixture
async def client(world: PaperWorld) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(world.provider_api) as c:
        yield c


async def ok(response: Any) -> Any:
    result = await response
    assert result.status_code == 200, result.text
    return result.json()


async def advance(client: httpx.AsyncClient, seconds: int) -> None:
    await ok(client.post("/paper/v1/advance", json={"seconds": seconds}))


async def create_dca(client: httpx.AsyncClient, **overrides: Any) -> str:
    body: dict[str, Any] = {
        "chainId": "1",
        "toWalletAddress": WALLET,
        "fromTokenAddress": APT,
        "toTokenAddress": USDC,
        "fromTokenAmount": {"value": "10", "type": "total"},
        "interval": {"value": "1", "timePeriod": "hour"},
        "numberOfOrders": 4,
    }
    body.update(overrides)
    data = await ok(client.post("/dca/v1/createOrder", json=body))
    assert data["status"] == "success"
    return str(data["panoraTxId"])


async def create_limit(client: httpx.AsyncClient, amount: str, rate: str, **extra: Any) -> str:
    body: dict[str, Any] = {
        "chainId": "1",
        "fromTokenAddress": APT,
        "fromWalletAddress": APT,
        "toTokenAddress": USDC,
        "toWalletAddress": WALLET,
        "fromTokenAmount": amount,
        "rateToTokenPerFromToken": rate,
    }
    body.update(extra)
    data = await ok(client.post("/limit/v1/createOrder", json=body))
    return str(data["panoraTxId"])


async def cancel(client: httpx.AsyncClient, kind: str, order_id: str) -> None:
    body = {"chainId": "1", "toWalletAddress": WALLET, "panoraTxId": order_id}
    await ok(client.post(f"/{kind}/v1/cancelOrder", json=body))


async def list_orders(client: httpx.AsyncClient, kind: str, **overrides: Any) -> dict[str, Any]:
    """getOrders; an override of None leaves the field out."""
    body: dict[str, Any] = {"chainId": 1, "toWalletAddress": WALLET, "limit": 50, "pageNumber": 1}
    if kind == "dca":
        body["status"] = "active"
    for name, value in overrides.items():
        if value is None:
            body.pop(name, None)
        else:
            body[name] = value
    data: dict[str, Any] = await ok(client.post(f"/{kind}/v1/getOrders", json=body))
    return data


# --- getOrders: filters and paging -------------------------------------------------------


async def test_limit_status_filters_split_live_from_finished_orders() -> None:
    # A shallow pool makes a large order at a rate near the market fill only partly.
    world = new_world(pool_depth_usd=Decimal(1000))
    async with client_for(world.provider_api) as client:
        ids = {
            "active": await create_limit(client, "1", "1000"),
            "partially_filled": await create_limit(client, "100", "4.9"),
            "filled": await create_limit(client, "1", "1"),
            "cancelled": await create_limit(client, "1", "1000"),
            "expired": await create_limit(
                client, "1", "1000", expiry={"value": "1", "timePeriod": "minute"}
            ),
        }
        await cancel(client, "limit", ids["cancelled"])
        await advance(client, 120)

        def statuses(data: dict[str, Any]) -> dict[str, str]:
            return {o["panoraTxId"]: o["status"] for o in data["orders"]}

        assert statuses(await list_orders(client, "limit", status=None)) == {
            order_id: status for status, order_id in ids.items()
        }
        live = statuses(await list_orders(client, "limit", status="active"))
        assert live == {ids["active"]: "active", ids["partially_filled"]: "partially_filled"}
        done = statuses(await list_orders(client, "limit", status="completed"))
        assert done == {ids[s]: s for s in ("filled", "cancelled", "expired")}


async def test_dca_completed_filter_holds_filled_cancelled_and_refunded(
    client: httpx.AsyncClient,
) -> None:
    one_slice = {"numberOfOrders": 1, "fromTokenAmount": {"value": "1", "type": "total"}}
    filled = await create_dca(client, **one_slice)
    # A minimum rate far above the market: the only slice is skipped, then refunded.
    refunded = await create_dca(client, **one_slice, minRateToTokenPerFromToken="1000")
    cancelled = await create_dca(client)
    active = await create_dca(client)
    await cancel(client, "dca", cancelled)
    await advance(client, 60)
    done = await list_orders(client, "dca", status="completed")
    assert {o["panoraTxId"]: o["status"] for o in done["orders"]} == {
        filled: "filled",
        refunded: "refunded",
        cancelled: "cancelled",
    }
    live = await list_orders(client, "dca", status="active")
    assert [o["panoraTxId"] for o in live["orders"]] == [active]


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_paging_newest_first_without_overlap(client: httpx.AsyncClient, kind: str) -> None:
    created: list[str] = []
    for _ in range(5):
        if kind == "dca":
            created.append(await create_dca(client))
        else:
            created.append(await create_limit(client, "1", "1000"))
        await advance(client, 60)
    pages = [await list_orders(client, kind, limit=2, pageNumber=n) for n in (1, 2, 3, 4)]
    assert [p["totalPages"] for p in pages] == [3, 3, 3, 3]
    assert [p["pageNumber"] for p in pages] == [1, 2, 3, 4]
    assert [len(p["orders"]) for p in pages] == [2, 2, 1, 0]
    seen = [o["panoraTxId"] for p in pages for o in p["orders"]]
    assert seen == created[::-1]
    times = [o["createdAtTime"] for p in pages for o in p["orders"]]
    assert times == sorted(times, reverse=True)
    assert len(set(times)) == 5


async def test_no_orders_is_one_empty_page(client: httpx.AsyncClient) -> None:
    data = await list_orders(client, "dca", toWalletAddress=OTHER)
    assert data == {
        "chainId": 1,
        "toWalletAddress": OTHER,
        "pageNumber": 1,
        "totalPages": 1,
        "orders": [],
    }


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_order_id_filter_returns_just_that_order(
    client: httpx.AsyncClient, kind: str
) -> None:
    ids = [
        await (create_dca(client) if kind == "dca" else create_limit(client, "1", "1000"))
        for _ in range(3)
    ]
    data = await list_orders(client, kind, panoraTxId=ids[1])
    assert [o["panoraTxId"] for o in data["orders"]] == [ids[1]]
    assert data["totalPages"] == 1
    missing = await list_orders(client, kind, panoraTxId="0x" + "99" * 32)
    assert missing["orders"] == []


async def test_orders_are_listed_per_wallet(client: httpx.AsyncClient, world: PaperWorld) -> None:
    await create_dca(client)
    world.market.fund(OTHER, world.market.tokens.require(APT), 10**9)
    theirs = await create_dca(client, toWalletAddress=OTHER)
    mine = await list_orders(client, "dca")
    assert theirs not in [o["panoraTxId"] for o in mine["orders"]]
    other = await list_orders(client, "dca", toWalletAddress=OTHER)
    assert [o["panoraTxId"] for o in other["orders"]] == [theirs]


# --- record shapes -----------------------------------------------------------------------


def check_token_object(value: Any, address: str, decimals: int) -> None:
    assert set(value) == {"address", "symbol", "decimals", "name"}
    assert value["address"] == address
    assert value["decimals"] == decimals
    assert isinstance(value["symbol"], str) and isinstance(value["name"], str)


def check_detail(detail: dict[str, Any], *, limit: bool) -> None:
    assert DETAIL_REQUIRED <= set(detail) <= DETAIL_REQUIRED | DETAIL_OPTIONAL
    assert detail["type"] in {"created", "filled", "attempted", "failed", "cancelled"}
    assert isinstance(detail["txNumber"], int) and isinstance(detail["attemptNumber"], int)
    assert ISO.match(detail["time"])
    for name in ("fromTokenAmount", "toTokenAmount", "feeTokenAmount"):
        assert Decimal(detail[name]) >= 0
    for name in ("fromTokenAmountUSD", "toTokenAmountUSD", "feeTokenAmountUSD"):
        assert Decimal(detail[name]) >= 0  # APT and USDC both have visible prices
    if detail["type"] == "filled":
        assert Decimal(detail["priceToTokenPerFromToken"]) > 0
        assert Decimal(detail["priceFromTokenPerToToken"]) > 0
        if limit:
            assert detail["keeperWalletAddress"] == KEEPER_WALLET
            assert ADDRESS.match(detail["keeperWalletAddress"])
    if not limit or detail["type"] != "filled":
        assert "keeperWalletAddress" not in detail


async def test_dca_record_has_every_field_of_spec_2_3(client: httpx.AsyncClient) -> None:
    order_id = await create_dca(
        client,
        delay={"value": "30", "timePeriod": "minute"},
        minRateToTokenPerFromToken="1",
        slippagePercentage="0.8",
    )
    await advance(client, 3 * 3600)
    [record] = (await list_orders(client, "dca", txDetails=True))["orders"]
    assert DCA_REQUIRED <= set(record) <= DCA_REQUIRED | DCA_OPTIONAL
    assert DCA_OPTIONAL - {"txDetails"} <= set(record)  # all present for this order
    assert record["panoraTxId"] == order_id
    check_token_object(record["fromToken"], APT, 8)
    check_token_object(record["toToken"], USDC, 6)
    check_token_object(record["feeToken"], APT, 8)
    assert record["status"] == "active"
    assert record["interval"] == {"value": "1", "timePeriod": "hour"}
    assert record["delay"] == {"value": "30", "timePeriod": "minute"}
    for name in ("numberOfOrdersTotal", "numberOfOrdersRemaining", "numberOfOrdersCompleted"):
        assert isinstance(record[name], int)
    # Slices at 00:30, 01:30 and 02:30 have run; the last is due at 03:30.
    assert (record["numberOfOrdersCompleted"], record["numberOfOrdersRemaining"]) == (3, 1)
    assert record["createdAtTime"] == "2026-01-01T00:00:00.000Z"
    assert record["nextOrderTime"] == "2026-01-01T03:30:00.000Z"
    assert record["estimatedCompletionTime"] == "2026-01-01T03:30:00.000Z"
    total, spent = Decimal(record["fromTokenAmountTotal"]), Decimal(record["fromTokenAmountSpent"])
    assert total == Decimal(10) and spent == Decimal("7.5")
    assert Decimal(record["fromTokenAmountPerOrder"]) == Decimal("2.5")
    assert Decimal(record["fromTokenAmountBalance"]) == total - spent
    assert Decimal(record["fromTokenAmountWithdrawn"]) == 0
    assert Decimal(record["toTokenAmountWithdrawn"]) > 0
    assert record["minRateToTokenPerFromToken"] == "1"
    assert record["maxRateToTokenPerFromToken"] == "Infinity"
    assert record["slippagePercentage"] == "0.8"
    buy_per_sell = Decimal(record["avgPriceToTokenPerFromToken"])
    sell_per_buy = Decimal(record["avgPriceFromTokenPerToToken"])
    with localcontext() as ctx:
        ctx.prec = 40
        assert abs(buy_per_sell * sell_per_buy - 1) < Decimal("1e-30")
    details = record["txDetails"]
    assert [d["type"] for d in details] == ["created", "filled", "filled", "filled"]
    assert [d["txNumber"] for d in details] == [1, 2, 3, 4]
    assert [d["attemptNumber"] for d in details] == [0, 1, 2, 3]
    for detail in details:
        check_detail(detail, limit=False)


async def test_limit_record_has_every_field_of_spec_2_4_and_fills_name_the_keeper(
    client: httpx.AsyncClient,
) -> None:
    order_id = await create_limit(
        client, "2", "1", expiry={"value": "2", "timePeriod": "day"}, slippagePercentage="1.5"
    )
    await advance(client, 60)
    [record] = (await list_orders(client, "limit", txDetails=True))["orders"]
    assert set(record) == LIMIT_REQUIRED | {"txDetails"}
    assert record["panoraTxId"] == order_id
    check_token_object(record["fromToken"], APT, 8)
    check_token_object(record["toToken"], USDC, 6)
    check_token_object(record["feeToken"], APT, 8)
    assert record["status"] == "filled"
    assert record["expireAtTime"] == "2026-01-03T00:00:00.000Z"
    assert ISO.match(record["createdAtTime"])
    assert record["fromTokenAmount"] == "2"
    assert record["rateToTokenPerFromToken"] == "1"
    assert record["slippagePercentage"] == "1.5"
    assert Decimal(record["fromTokenAmountSpent"]) == 2
    assert Decimal(record["fromTokenAmountBalance"]) == 0
    assert record["numberOfOrdersCompleted"] == 1
    assert Decimal(record["avgPriceToTokenPerFromToken"]) >= 1  # never below the rate
    details = record["txDetails"]
    assert [d["type"] for d in details] == ["created", "filled"]
    for detail in details:
        check_detail(detail, limit=True)
    fill = details[1]
    assert Decimal(fill["toTokenAmount"]) == Decimal(record["toTokenAmountWithdrawn"])
    assert Decimal(fill["fromTokenAmount"]) == 2
    unlisted = await list_orders(client, "limit")
    assert set(unlisted["orders"][0]) == LIMIT_REQUIRED


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_tx_details_only_when_asked(client: httpx.AsyncClient, kind: str) -> None:
    await (create_dca(client) if kind == "dca" else create_limit(client, "1", "1"))
    await advance(client, 60)
    for flag in (None, False, "false"):
        [record] = (await list_orders(client, kind, txDetails=flag))["orders"]
        assert "txDetails" not in record
    for flag in (True, "true"):
        [record] = (await list_orders(client, kind, txDetails=flag))["orders"]
        assert len(record["txDetails"]) >= 2


async def test_tx_detail_usd_values_are_the_amounts_at_that_times_price(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    await create_dca(client)
    await advance(client, 2 * 3600)
    [record] = (await list_orders(client, "dca", txDetails=True))["orders"]
    prices = world.market.prices
    fills = [d for d in record["txDetails"] if d["type"] == "filled"]
    assert len(fills) == 3
    usd_place = Decimal("1e-8")
    for detail in fills:
        at = parse_utc(detail["time"])
        apt_usd = prices.usd_visible(APT, at)
        usdc_usd = prices.usd_visible(USDC, at)
        assert apt_usd is not None and usdc_usd is not None
        with localcontext() as ctx:
            ctx.prec = 60
            expected_from = (Decimal(detail["fromTokenAmount"]) * apt_usd).quantize(usd_place)
            expected_to = (Decimal(detail["toTokenAmount"]) * usdc_usd).quantize(usd_place)
            expected_fee = (Decimal(detail["feeTokenAmount"]) * apt_usd).quantize(usd_place)
        assert Decimal(detail["fromTokenAmountUSD"]) == expected_from
        assert Decimal(detail["toTokenAmountUSD"]) == expected_to
        assert Decimal(detail["feeTokenAmountUSD"]) == expected_fee
    # The second and third slices ran at later prices than the first.
    assert len({d["fromTokenAmountUSD"] for d in fills}) > 1


async def test_base_unit_switch_renders_order_amounts_and_rates_in_base_units() -> None:
    world = new_world(order_amount_units="base")
    human_api = ProviderApi(PaperService(world.market), world.settings)
    async with client_for(world.provider_api) as base, client_for(human_api) as human:
        await create_dca(base, minRateToTokenPerFromToken="1")
        await create_limit(base, "2", "1")
        await advance(base, 2 * 3600)
        quote = await ok(
            base.get(
                "/swap/quote",
                params={"fromTokenAddress": APT, "toTokenAddress": USDC, "fromTokenAmount": "1"},
            )
        )
        assert quote["fromTokenAmount"] == "1"  # swap amounts stay human
        assert Decimal(quote["quotes"][0]["toTokenAmount"]) < 100
        for kind in ("dca", "limit"):
            [raw] = (await list_orders(base, kind, txDetails=True))["orders"]
            [plain] = (await list_orders(human, kind, txDetails=True))["orders"]
            check_base_units(raw, plain)
        [raw_dca] = (await list_orders(base, "dca"))["orders"]
    assert raw_dca["fromTokenAmountTotal"] == str(10 * 10**8)
    assert raw_dca["fromTokenAmountPerOrder"] == str(25 * 10**7)
    # 1 USDC per APT = 10**6 base units per 10**8 base units.
    assert raw_dca["minRateToTokenPerFromToken"] == "0.01"


AMOUNTS_FROM = (
    "fromTokenAmountTotal",
    "fromTokenAmountSpent",
    "fromTokenAmountBalance",
    "fromTokenAmountWithdrawn",
    "fromTokenAmountPerOrder",
    "fromTokenAmount",
    "feeTokenAmount",
)
AMOUNTS_TO = ("toTokenAmountWithdrawn", "toTokenAmount")
RATES_TO_PER_FROM = (
    "avgPriceToTokenPerFromToken",
    "minRateToTokenPerFromToken",
    "rateToTokenPerFromToken",
    "priceToTokenPerFromToken",
)
RATES_FROM_PER_TO = ("avgPriceFromTokenPerToToken", "priceFromTokenPerToToken")


def check_base_units(raw: dict[str, Any], plain: dict[str, Any], dec_from: int = 8) -> None:
    """`raw` (base units) is `plain` (human) scaled by the tokens' decimals, exactly."""
    dec_to = 6
    assert set(raw) == set(plain)
    for name, value in plain.items():
        if name in AMOUNTS_FROM or name in AMOUNTS_TO:
            scale = dec_from if name in AMOUNTS_FROM else dec_to
            assert re.fullmatch(r"\d+", raw[name]), (name, raw[name])
            assert int(raw[name]) == Decimal(value).scaleb(scale), name
        elif name in RATES_TO_PER_FROM + RATES_FROM_PER_TO and value not in ("0", "Infinity"):
            shift = dec_to - dec_from if name in RATES_TO_PER_FROM else dec_from - dec_to
            with localcontext() as ctx:
                ctx.prec = 80
                assert Decimal(raw[name]) == Decimal(value).scaleb(shift), name
        elif name == "txDetails":
            assert len(raw[name]) == len(value) >= 2
            for raw_detail, plain_detail in zip(raw[name], value, strict=True):
                check_base_units(raw_detail, plain_detail, dec_from)
        else:  # tokens, times, counts, statuses and USD values do not depend on the switch
            assert raw[name] == value, name


# --- /prices -----------------------------------------------------------------------------


async def test_prices_by_address_in_request_order_each_token_once(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    comma_type = f"0x{'12' * 32}::lp::LP<0x1::aptos_coin::AptosCoin, 0x{'34' * 32}::coin::T>"
    world.market.tokens.add(Token(decimals=8, symbol="LPX", coin_type=comma_type))
    gui_spelled = "0x" + GUI_FA[2:].lstrip("0").upper()  # leading zeros dropped, upper case
    apt_fa_padded = "0x" + "0" * 63 + "a"
    query = ",".join([gui_spelled, APT, apt_fa_padded, MKLP, comma_type, "0x" + "cd" * 32])
    records = await ok(client.get("/prices", params={"tokenAddress": query}))
    assert [r["symbol"] for r in records] == ["GUI", "APT", "MKLP", "LPX"]
    gui, apt, mklp, lpx = records
    assert gui["faAddress"] == GUI_FA
    assert (apt["tokenAddress"], apt["faAddress"]) == (APT, "0xa")
    assert mklp["tokenAddress"] == MKLP
    assert lpx["tokenAddress"].replace(" ", "") == comma_type.replace(" ", "")
    for record in records:
        assert set(record) == PRICE_RECORD
        assert record["chainId"] == 1
    assert Decimal(apt["usdPrice"]) > 0
    assert Decimal(apt["nativePrice"]) == 1


async def test_prices_ui_flag_and_tags(client: httpx.AsyncClient, world: PaperWorld) -> None:
    # "All tokens" is `panoraUI=true,false` (Panora docs; SDK 1.3.1 dist/index.es.js,
    # Token.getTokenList: "Set as [true, false] to get all tokens in the list"). A record
    # carries no flags or tags (wire decision 40): they are read from the world's tokens.
    def token(record: dict[str, Any]) -> Token:
        found = world.market.tokens.get(record["faAddress"] or record["tokenAddress"])
        assert found is not None, record
        return found

    shown = await ok(client.get("/prices"))
    assert shown == await ok(client.get("/prices", params={"panoraUI": "true"}))
    everything = await ok(client.get("/prices", params={"panoraUI": "true,false"}))
    assert everything == await ok(client.get("/prices", params={"panoraUI": "[true, false]"}))
    hidden = await ok(client.get("/prices", params={"panoraUI": "false"}))
    assert hidden and all(not token(r).ui for r in hidden)  # `false`: hidden ones only
    assert "0xa" not in {r["faAddress"] for r in hidden}  # the real APT is a shown token
    assert len(everything) == len(shown) + len(hidden)
    refused = await client.get("/prices", params={"panoraUI": "yes"})
    assert refused.status_code == 400 and "panoraUI" in refused.json()["message"]
    assert len(everything) > len(shown) > 0
    assert all(token(r).ui for r in shown)
    assert any(not token(r).ui for r in everything)
    identities = {(r["tokenAddress"], r["faAddress"]) for r in shown}
    assert identities < {(r["tokenAddress"], r["faAddress"]) for r in everything}
    assert all(r["usdPrice"] is not None for r in everything)  # unpriced tokens are left out
    memes = await ok(client.get("/prices", params={"panoraTags": "Meme"}))
    assert 0 < len(memes) < len(shown)
    assert all("Meme" in token(r).tags for r in memes)
    either = await ok(
        client.get("/prices", params={"panoraTags": "meme,LP", "panoraUI": "true,false"})
    )
    assert {r["symbol"] for r in memes} < {r["symbol"] for r in either}
    assert all({"Meme", "LP"} & set(token(r).tags) for r in either)


async def test_hidden_price_token_has_null_usd_fields_but_still_trades(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    hidden = next(
        t for t in world.market.tokens.tokens if not world.market.prices.is_visible(t.address)
    )
    [record] = await ok(client.get("/prices", params={"tokenAddress": hidden.address}))
    assert (record["usdPrice"], record["nativePrice"], record["priceChange24H"]) == (
        None,
        None,
        None,
    )
    listed = await ok(client.get("/prices", params={"panoraUI": "true,false"}))
    assert hidden.address not in {r["faAddress"] for r in listed} | {
        r["tokenAddress"] for r in listed
    }
    params = {"fromTokenAddress": APT, "toTokenAddress": hidden.address}
    exact_in = await ok(client.get("/swap/quote", params={**params, "fromTokenAmount": "1"}))
    [quote] = exact_in["quotes"]
    assert Decimal(quote["toTokenAmount"]) > 0
    assert exact_in["toToken"]["current_price"] is None
    assert quote["toTokenAmountUSD"] is None
    assert quote["priceImpact"] is None
    assert Decimal(exact_in["fromTokenAmountUSD"]) > 0  # APT keeps its price
    exact_out = await ok(client.get("/swap/quote", params={**params, "toTokenAmount": "1"}))
    assert exact_out["toTokenAmountUSD"] is None
    assert exact_out["quotes"][0]["priceImpact"] is None
    assert Decimal(exact_out["quotes"][0]["fromTokenAmount"]) > 0


# --- /swap -------------------------------------------------------------------------------


async def test_swap_tx_data_calls_the_router_with_the_quoted_amounts(
    client: httpx.AsyncClient,
) -> None:
    params = {"fromTokenAddress": APT, "toTokenAddress": USDC, "toWalletAddress": WALLET}
    exact_in = await ok(client.post("/swap", params={**params, "fromTokenAmount": "1.5"}))
    [quote] = exact_in["quotes"]
    tx = quote["txData"]
    assert tx["function"] == ROUTER_FUNCTION
    assert tx["function"].endswith("::panora_swap::router_entry")
    assert len(tx["type_arguments"]) == 32
    assert len(tx["arguments"]) == 20
    call = RouterCall.parse(tx["arguments"])
    assert call.exact_in
    assert call.recipient == WALLET
    assert (call.sell_fa, call.buy_fa) == ("0xa", USDC)
    assert call.amount_in == 150_000_000
    assert call.amount_out == Decimal(quote["minToTokenAmount"]).scaleb(6)
    assert Decimal(quote["minToTokenAmount"]) < Decimal(quote["toTokenAmount"])
    exact_out = await ok(client.post("/swap", params={**params, "toTokenAmount": "3"}))
    [out_quote] = exact_out["quotes"]
    out_call = RouterCall.parse(out_quote["txData"]["arguments"])
    assert not out_call.exact_in
    assert out_call.amount_out == 3_000_000
    assert out_call.amount_in == Decimal(out_quote["maxFromTokenAmount"]).scaleb(8)
    no_tx = await ok(client.get("/swap/quote", params={**params, "fromTokenAmount": "1.5"}))
    assert "txData" not in no_tx["quotes"][0]
    assert no_tx["quotes"][0]["toTokenAmount"] == quote["toTokenAmount"]


async def test_legacy_shows_route_current_shows_fee_usd(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    legacy_api = ProviderApi(PaperService(world.market, variant="legacy"), world.settings)
    params = {"fromTokenAddress": APT, "toTokenAddress": USDC}
    current = await ok(client.get("/swap/quote", params={**params, "fromTokenAmount": "1"}))
    async with client_for(legacy_api) as legacy:
        older = await ok(legacy.get("/swap/quote", params={**params, "fromTokenAmount": "1"}))
        older_out = await ok(legacy.get("/swap/quote", params={**params, "toTokenAmount": "1"}))
    assert "route" not in current["quotes"][0]
    # Current: SDK 1.3.1's names (dist/types/resources/type.d.ts): top-level feeToken,
    # quotes[].feeTokenAmount / feeTokenAmountUSD; tokens with name and symbol.
    assert Decimal(current["quotes"][0]["feeTokenAmountUSD"]) > 0
    assert "feeAmount" not in current["quotes"][0] and "feeToken" not in current["quotes"][0]
    assert set(current["feeToken"]) == {"address", "name", "symbol", "decimals", "current_price"}
    assert set(current["fromToken"]) == set(current["feeToken"])
    [quote] = older["quotes"]
    assert "feeAmountUSD" not in quote and "feeToken" not in older
    assert quote["feeToken"]["tokenType"] == APT
    assert quote["toTokenAmount"] == current["quotes"][0]["toTokenAmount"]
    [route] = quote["route"]
    assert route["percentage"] == 100
    assert "routeTokens" not in route  # ExactOut only
    [[hop]] = route["routeTaken"]
    assert hop["dexName"] == "PaperSwap"
    assert hop["fromToken"]["tokenType"] == APT
    assert hop["toToken"]["tokenType"] == USDC
    [out_route] = older_out["quotes"][0]["route"]
    assert [t["tokenType"] for t in out_route["routeTokens"]] == [APT, USDC]


async def test_quote_fee_is_the_platform_share_of_the_amount_sold(
    client: httpx.AsyncClient,
) -> None:
    params = {"fromTokenAddress": APT, "toTokenAddress": USDC, "fromTokenAmount": "10"}
    data = await ok(client.post("/swap", params=params))  # a quote: no wallet needed
    [quote] = data["quotes"]
    assert Decimal(quote["feeTokenAmount"]) == Decimal("0.01")  # 10 bps of 10 APT
    assert data["feeToken"]["address"] == APT  # the fee is in the sold token here
    assert "txData" not in quote
    with_integrator = await ok(
        client.post(
            "/swap",
            params={
                **params,
                "integratorFeePercentage": "1",
                "integratorFeeAddress": "0x" + "12" * 32,
            },
        )
    )
    assert Decimal(with_integrator["quotes"][0]["feeTokenAmount"]) == Decimal("0.11")
    assert Decimal(with_integrator["quotes"][0]["toTokenAmount"]) < Decimal(quote["toTokenAmount"])


async def test_advance_moves_time_and_runs_due_slices(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    await create_dca(client)
    data = await ok(client.post("/paper/v1/advance", json={"seconds": 3600}))
    assert data["now"] == "2026-01-01T01:00:00.000Z"
    assert data["eventsProcessed"] >= 2  # the slices at 00:00 and 01:00
    target = world.market.now + timedelta(hours=5)
    await ok(client.post("/paper/v1/advance", json={"to": target.isoformat()}))
    assert world.market.now == target
    status = await ok(client.get("/paper/v1/status", params={"wallet": WALLET}))
    assert status["liveDcaOrders"] == 0
    assert Decimal(status["balances"]["APT"]) == Decimal(990)
