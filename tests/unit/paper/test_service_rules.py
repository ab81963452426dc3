"""Every 400/401/404 rule of the paper provider face, over the in-process ASGI app.

Each refusal is checked for its status, the spec's error body
`{statusCode, message, status: "fail"}` and a message naming the offending field; the
order endpoints are also checked to leave the ledger untouched when they refuse.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from bot.paper.faces.provider_api import ProviderApi
from bot.paper.service import PaperService
from bot.paper.world import PaperWorld, build_world
from tests.support.paper_service import assert_fail, client_for, paper_settings

KEY = "k"
APT = "0x1::aptos_coin::AptosCoin"
APT_FA = "0xa"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
UNKNOWN = "0x" + "cd" * 32
WALLET = "0x" + "ab" * 32
OTHER = "0x" + "a2" * 32
APT_UNITS = 10**8


@pytest.fixture
def world() -> PaperWorld:
    world = build_world(paper_settings(), escrow_style="escrow")
    world.market.fund(WALLET, world.market.tokens.require(APT), 100 * APT_UNITS)
    return world


@pytest.fixture
async def client(world: PaperWorld) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(world.provider_api) as c:
        yield c


@pytest.fixture
async def legacy(world: PaperWorld) -> AsyncIterator[httpx.AsyncClient]:
    """The older swap variant over the same market."""
    service = PaperService(world.market, variant="legacy")
    api = ProviderApi(service, world.settings, sync=world.market.sync)
    async with client_for(api) as c:
        yield c


def quote_params(**overrides: str) -> dict[str, str]:
    params = {"fromTokenAddress": APT, "toTokenAddress": USDC, "fromTokenAmount": "1"}
    params.update(overrides)
    return {k: v for k, v in params.items() if v != ""}


def dca_body(**overrides: Any) -> dict[str, Any]:
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
    return body


def limit_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": "1",
        "fromTokenAddress": APT,
        "fromWalletAddress": APT,
        "toTokenAddress": USDC,
        "toWalletAddress": WALLET,
        "fromTokenAmount": "2",
        "rateToTokenPerFromToken": "1000",
        "expiry": {"value": "1", "timePeriod": "day"},
    }
    body.update(overrides)
    return body


def list_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": 1,
        "toWalletAddress": WALLET,
        "status": "active",
        "limit": 50,
        "pageNumber": 1,
    }
    body.update(overrides)
    return body


async def create(client: httpx.AsyncClient, kind: str, body: dict[str, Any]) -> str:
    response = await client.post(f"/{kind}/v1/createOrder", json=body)
    assert response.status_code == 200, response.text
    order_id = response.json()["panoraTxId"]
    assert isinstance(order_id, str)
    return order_id


async def create_default(client: httpx.AsyncClient, kind: str) -> str:
    return await create(client, kind, dca_body() if kind == "dca" else limit_body())


# --- authentication and routing ----------------------------------------------------------


@pytest.mark.parametrize("key", [None, "", "wrong-key"])
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/prices"), ("GET", "/swap/quote"), ("POST", "/dca/v1/getOrders")],
)
async def test_missing_or_wrong_api_key_is_401(
    world: PaperWorld, key: str | None, method: str, path: str
) -> None:
    async with client_for(world.provider_api, key=key) as anonymous:
        response = await anonymous.request(method, path, params=quote_params(), json=list_body())
    assert_fail(response, 401, "API key")


@pytest.mark.parametrize(("method", "path"), [("GET", "/nope"), ("GET", "/swap"), ("GET", "/")])
async def test_unknown_endpoint_is_404_naming_it(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    response = await client.request(method, path)
    assert_fail(response, 404, f"{method} {path}")


# --- /swap/quote and /swap --------------------------------------------------------------


@pytest.mark.parametrize(
    "amounts",
    [{"fromTokenAmount": "1", "toTokenAmount": "1"}, {"fromTokenAmount": ""}],
    ids=["both", "neither"],
)
async def test_quote_needs_exactly_one_amount(
    client: httpx.AsyncClient, amounts: dict[str, str]
) -> None:
    response = await client.get("/swap/quote", params=quote_params(**amounts))
    assert_fail(response, 400, "fromTokenAmount", "toTokenAmount")


@pytest.mark.parametrize("value", ["101", "abc", "-1", "NaN"])
async def test_slippage_outside_0_to_100_is_400(client: httpx.AsyncClient, value: str) -> None:
    response = await client.get("/swap/quote", params=quote_params(slippagePercentage=value))
    assert_fail(response, 400, "slippagePercentage")


async def test_slippage_bounds_and_auto_are_accepted(client: httpx.AsyncClient) -> None:
    for value in ("0", "100", "auto"):
        response = await client.get("/swap/quote", params=quote_params(slippagePercentage=value))
        assert response.status_code == 200, (value, response.text)


@pytest.mark.parametrize("value", ["2.5", "-0.1", "x"])
async def test_integrator_fee_outside_0_to_2_is_400(client: httpx.AsyncClient, value: str) -> None:
    response = await client.get("/swap/quote", params=quote_params(integratorFeePercentage=value))
    assert_fail(response, 400, "integratorFeePercentage")


@pytest.mark.parametrize("address", ["0x12", "0x" + "g" * 64, "ab" * 32, "0x" + "ab" * 33])
async def test_malformed_integrator_fee_address_is_400(
    client: httpx.AsyncClient, address: str
) -> None:
    response = await client.get("/swap/quote", params=quote_params(integratorFeeAddress=address))
    assert_fail(response, 400, "integratorFeeAddress")


# Route controls as SDK 1.3.1 sends them to POST /swap (dist/index.es.js, Quote.getQuote:
# `includePools: includePools?.join(",")`, `maxHops`, `disableSplits`, `onlyDirectRoutes`).
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("includePools", "0x" + "11" * 32),
        ("onlyDirectRoutes", "true"),
        ("maxHops", "3"),
        ("maxHops", "max"),
        ("disableSplits", "false"),
    ],
)
async def test_current_variant_accepts_the_sdk_131_route_controls(
    client: httpx.AsyncClient, name: str, value: str
) -> None:
    accepted = await client.post("/swap", params=quote_params(**{name: value}))
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["quotes"]


@pytest.mark.parametrize(
    ("name", "value"),
    [("maxHops", "6"), ("maxHops", "0"), ("maxHops", "9" * 5000), ("disableSplits", "yes")],
)
async def test_route_controls_out_of_form_are_400(
    client: httpx.AsyncClient, name: str, value: str
) -> None:
    assert_fail(await client.post("/swap", params=quote_params(**{name: value})), 400, name)


@pytest.mark.parametrize(
    ("name", "value"), [("includePools", "0x" + "11" * 32), ("onlyDirectRoutes", "true")]
)
async def test_legacy_accepts_its_two_route_controls(
    legacy: httpx.AsyncClient, name: str, value: str
) -> None:
    accepted = await legacy.get("/swap/quote", params=quote_params(**{name: value}))
    assert accepted.status_code == 200, accepted.text


@pytest.mark.parametrize(("name", "value"), [("maxHops", "2"), ("disableSplits", "true")])
async def test_legacy_refuses_the_current_only_controls(
    legacy: httpx.AsyncClient, name: str, value: str
) -> None:
    assert_fail(await legacy.get("/swap/quote", params=quote_params(**{name: value})), 400, name)


async def test_legacy_include_pools_accepts_10_and_refuses_11(legacy: httpx.AsyncClient) -> None:
    pools = [f"0x{i:064x}" for i in range(1, 12)]
    ten = await legacy.get("/swap/quote", params=quote_params(includePools=",".join(pools[:10])))
    assert ten.status_code == 200, ten.text
    eleven = await legacy.get("/swap/quote", params=quote_params(includePools=",".join(pools)))
    assert_fail(eleven, 400, "includePools", "11")


async def test_legacy_only_direct_routes_must_be_boolean(legacy: httpx.AsyncClient) -> None:
    response = await legacy.get("/swap/quote", params=quote_params(onlyDirectRoutes="yes"))
    assert_fail(response, 400, "onlyDirectRoutes")


async def test_post_swap_quotes_without_a_wallet_and_adds_tx_data_with_one(
    client: httpx.AsyncClient,
) -> None:
    # The current docs and SDK 1.3.1 quote through POST /swap with toWalletAddress optional.
    quote = await client.post("/swap", params=quote_params())
    assert quote.status_code == 200, quote.text
    assert "txData" not in quote.json()["quotes"][0]
    swap = await client.post("/swap", params=quote_params(toWalletAddress=WALLET))
    assert "txData" in swap.json()["quotes"][0]
    older = await client.get("/swap/quote", params=quote_params())
    assert older.status_code == 200
    bad = await client.post("/swap", params=quote_params(toWalletAddress="not-an-address"))
    assert_fail(bad, 400, "toWalletAddress")


@pytest.mark.parametrize("side", ["fromTokenAddress", "toTokenAddress"])
@pytest.mark.parametrize("token", [UNKNOWN, "0x99::nothing::Here"])
async def test_unknown_token_is_404_naming_it(
    client: httpx.AsyncClient, side: str, token: str
) -> None:
    response = await client.get("/swap/quote", params=quote_params(**{side: token}))
    assert_fail(response, 404, token)


@pytest.mark.parametrize("other_spelling", [APT, APT_FA, "0x" + "0" * 63 + "a"])
async def test_same_token_on_both_sides_is_400(
    client: httpx.AsyncClient, other_spelling: str
) -> None:
    # The coin type and the FA address of APT are one token.
    response = await client.get("/swap/quote", params=quote_params(toTokenAddress=other_spelling))
    assert_fail(response, 400, "fromTokenAddress", "toTokenAddress")


async def test_excluding_the_paper_dex_leaves_no_route(
    client: httpx.AsyncClient, legacy: httpx.AsyncClient
) -> None:
    # No route is `quotes: []` with a 200 (SDK 1.3.1 Swap.swap reads it as "No routes
    # present"); source lists are comma-joined (every SDK version).
    gone = await client.post("/swap", params=quote_params(excludeSources="Thala,PaperSwap"))
    assert gone.status_code == 200, gone.text
    body = gone.json()
    assert body["quotes"] == [] and body["fromTokenAmount"] == "1"
    assert set(body) == {
        "fromToken",
        "toToken",
        "feeToken",
        "fromTokenAmount",
        "fromTokenAmountUSD",
        "quotes",
    }
    legacy_gone = await legacy.get(
        "/swap/quote", params=quote_params(excludeSources="Thala,PaperSwap")
    )
    assert legacy_gone.status_code == 200 and legacy_gone.json()["quotes"] == []
    other = await client.post("/swap", params=quote_params(excludeSources="Thala"))
    assert other.json()["quotes"]
    only_others = await client.post("/swap", params=quote_params(includeSources="Thala"))
    assert only_others.json()["quotes"] == []
    only_paper = await client.post("/swap", params=quote_params(includeSources="paperswap"))
    assert only_paper.json()["quotes"]
    both = await client.post(
        "/swap", params=quote_params(includeSources="PaperSwap", excludeSources="Thala")
    )
    assert_fail(both, 400, "includeSources", "excludeSources")


async def test_chain_other_than_1_is_400(client: httpx.AsyncClient) -> None:
    assert_fail(await client.get("/swap/quote", params=quote_params(chainId="2")), 400, "chainId")
    assert_fail(await client.get("/prices", params={"chainId": "2"}), 400, "chainId")
    created = await client.post("/dca/v1/createOrder", json=dca_body(chainId="2"))
    assert_fail(created, 400, "chainId")
    listed = await client.post("/limit/v1/getOrders", json=list_body(chainId=2))
    assert_fail(listed, 400, "chainId")
    fine = await client.get("/swap/quote", params=quote_params(chainId="1"))
    assert fine.status_code == 200


async def test_slippage_and_integrator_fee_truncated_one_place_current_two_legacy(
    client: httpx.AsyncClient, legacy: httpx.AsyncClient
) -> None:
    params = quote_params(
        slippagePercentage="0.57",
        integratorFeePercentage="0.57",
        integratorFeeAddress="0x" + "12" * 32,
        toWalletAddress=WALLET,
    )
    current = (await client.post("/swap", params=params)).json()["quotes"][0]
    older = (await legacy.post("/swap", params=params)).json()["quotes"][0]
    assert current["slippagePercentage"] == "0.5"
    assert older["slippagePercentage"] == "0.57"
    # Argument 18 of the router call: the fee word, flags above 10^15, percent × 10^4 below
    # (a real 0.5% fee reads 11000000000005000); argument 19 the integrator's address.
    assert current["txData"]["arguments"][18] == "11000000000005000"
    assert older["txData"]["arguments"][18] == "11000000000005700"
    assert current["txData"]["arguments"][19] == "0x" + "12" * 32


# --- DCA createOrder ---------------------------------------------------------------------


def assert_untouched(world: PaperWorld, before: dict[str, dict[str, str]]) -> None:
    """Nothing moved and no order exists."""
    assert world.market.ledger.dump() == before
    assert world.market.balance(WALLET, world.market.tokens.require(APT)) == 100 * APT_UNITS
    assert world.market.dca.orders_of(WALLET) == []
    assert world.market.limit.orders_of(WALLET) == []


@pytest.mark.parametrize(
    "field",
    [
        "toWalletAddress",
        "fromTokenAddress",
        "toTokenAddress",
        "fromTokenAmount",
        "interval",
        "numberOfOrders",
    ],
)
async def test_dca_create_missing_field_is_400_and_nothing_escrowed(
    client: httpx.AsyncClient, world: PaperWorld, field: str
) -> None:
    before = world.market.ledger.dump()
    body = dca_body()
    del body[field]
    response = await client.post("/dca/v1/createOrder", json=body)
    assert_fail(response, 400, field)
    assert_untouched(world, before)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"fromTokenAmount": {"value": "10", "type": "all"}}, "fromTokenAmount.type"),
        ({"fromTokenAmount": {"type": "total"}}, "fromTokenAmount.value"),
        ({"fromTokenAmount": {"value": "-3", "type": "total"}}, "fromTokenAmount.value"),
        ({"interval": {"value": "1", "timePeriod": "year"}}, "interval.timePeriod"),
        ({"interval": {"value": "0", "timePeriod": "hour"}}, "interval.value"),
        ({"delay": {"value": "1", "timePeriod": "fortnight"}}, "delay.timePeriod"),
        ({"numberOfOrders": 0}, "numberOfOrders"),
        ({"numberOfOrders": 1.5}, "numberOfOrders"),
        ({"numberOfOrders": "many"}, "numberOfOrders"),
        (
            {"minRateToTokenPerFromToken": "6", "maxRateToTokenPerFromToken": "5"},
            "minRateToTokenPerFromToken",
        ),
        ({"maxRateToTokenPerFromToken": "0"}, "maxRateToTokenPerFromToken"),
        ({"minRateToTokenPerFromToken": "-1"}, "minRateToTokenPerFromToken"),
        ({"slippagePercentage": "150"}, "slippagePercentage"),
        ({"toTokenAddress": APT_FA}, "toTokenAddress"),
        # 3 base units cannot make 4 non-empty slices (was an unhandled engine error: 500)
        ({"fromTokenAmount": {"value": "0.00000003", "type": "total"}}, "fromTokenAmount"),
    ],
)
async def test_dca_create_bad_value_is_400_and_nothing_escrowed(
    client: httpx.AsyncClient, world: PaperWorld, overrides: dict[str, Any], field: str
) -> None:
    before = world.market.ledger.dump()
    response = await client.post("/dca/v1/createOrder", json=dca_body(**overrides))
    assert_fail(response, 400, field)
    assert_untouched(world, before)


@pytest.mark.parametrize("amount_type", ["total", "perorder"])
async def test_dca_create_beyond_balance_is_400_and_nothing_escrowed(
    client: httpx.AsyncClient, world: PaperWorld, amount_type: str
) -> None:
    before = world.market.ledger.dump()
    # 30 per order × 4 orders = 120 APT > 100 held; 101 in total > 100.
    value = "30" if amount_type == "perorder" else "101"
    body = dca_body(fromTokenAmount={"value": value, "type": amount_type})
    response = await client.post("/dca/v1/createOrder", json=body)
    assert_fail(response, 400, "insufficient balance")
    assert_untouched(world, before)


async def test_dca_create_for_the_exact_balance_succeeds(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    body = dca_body(fromTokenAmount={"value": "100", "type": "total"})
    await create(client, "dca", body)
    assert world.market.balance(WALLET, world.market.tokens.require(APT)) == 0


# --- limit createOrder -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"rateToTokenPerFromToken": "0"}, "rateToTokenPerFromToken"),
        ({"rateToTokenPerFromToken": "-2"}, "rateToTokenPerFromToken"),
        ({"rateToTokenPerFromToken": None}, "rateToTokenPerFromToken"),
        ({"expiry": {"value": "1", "timePeriod": "year"}}, "expiry.timePeriod"),
        ({"expiry": {"value": "0", "timePeriod": "day"}}, "expiry.value"),
        ({"expiry": "tomorrow"}, "expiry"),
        ({"fromTokenAmount": "0"}, "fromTokenAmount"),
        ({"fromTokenAmount": "500"}, "insufficient balance"),
        ({"toTokenAddress": None}, "toTokenAddress"),
        ({"toWalletAddress": None}, "toWalletAddress"),
        ({"fromWalletAddress": None}, "fromWalletAddress"),
        ({"toTokenAddress": APT}, "toTokenAddress"),
    ],
)
async def test_limit_create_bad_value_is_400_and_nothing_escrowed(
    client: httpx.AsyncClient, world: PaperWorld, overrides: dict[str, Any], field: str
) -> None:
    before = world.market.ledger.dump()
    response = await client.post("/limit/v1/createOrder", json=limit_body(**overrides))
    assert_fail(response, 400, field)
    assert_untouched(world, before)


async def test_limit_create_with_unknown_token_is_404(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    before = world.market.ledger.dump()
    response = await client.post("/limit/v1/createOrder", json=limit_body(toTokenAddress=UNKNOWN))
    assert_fail(response, 404, UNKNOWN)
    assert_untouched(world, before)


# --- cancelOrder -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_cancel_unknown_order_is_404(client: httpx.AsyncClient, kind: str) -> None:
    missing = "0x" + "77" * 32
    response = await client.post(
        f"/{kind}/v1/cancelOrder", json={"panoraTxId": missing, "toWalletAddress": WALLET}
    )
    assert_fail(response, 404, missing)


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_cancel_without_id_is_400(client: httpx.AsyncClient, kind: str) -> None:
    response = await client.post(f"/{kind}/v1/cancelOrder", json={"toWalletAddress": WALLET})
    assert_fail(response, 400, "panoraTxId")


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_cancel_another_wallets_order_is_404_and_leaves_it_live(
    client: httpx.AsyncClient, world: PaperWorld, kind: str
) -> None:
    order_id = await create_default(client, kind)
    before = world.market.ledger.dump()
    response = await client.post(
        f"/{kind}/v1/cancelOrder", json={"panoraTxId": order_id, "toWalletAddress": OTHER}
    )
    assert_fail(response, 404, order_id)
    assert world.market.ledger.dump() == before
    listed = await client.post(f"/{kind}/v1/getOrders", json=list_body())
    assert [o["panoraTxId"] for o in listed.json()["orders"]] == [order_id]


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_cancel_twice_is_400_naming_the_status(
    client: httpx.AsyncClient, world: PaperWorld, kind: str
) -> None:
    order_id = await create_default(client, kind)
    body = {"chainId": "1", "panoraTxId": order_id, "toWalletAddress": WALLET}
    first = await client.post(f"/{kind}/v1/cancelOrder", json=body)
    assert first.status_code == 200, first.text
    balance = world.market.balance(WALLET, world.market.tokens.require(APT))
    assert balance == 100 * APT_UNITS  # refunded in full
    second = await client.post(f"/{kind}/v1/cancelOrder", json=body)
    assert_fail(second, 400, "cancelled")
    assert world.market.balance(WALLET, world.market.tokens.require(APT)) == balance


# --- getOrders ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dca", "limit"])
@pytest.mark.parametrize("status", ["filled", "all", "ACTIVE"])
async def test_get_orders_status_filter_other_than_active_completed_is_400(
    client: httpx.AsyncClient, kind: str, status: str
) -> None:
    response = await client.post(f"/{kind}/v1/getOrders", json=list_body(status=status))
    assert_fail(response, 400, "status")


@pytest.mark.parametrize("field", ["chainId", "toWalletAddress", "status", "limit", "pageNumber"])
async def test_dca_get_orders_required_fields(client: httpx.AsyncClient, field: str) -> None:
    body = list_body()
    del body[field]
    response = await client.post("/dca/v1/getOrders", json=body)
    assert_fail(response, 400, field)


async def test_limit_get_orders_status_limit_and_page_are_optional(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/limit/v1/getOrders", json={"toWalletAddress": WALLET})
    assert response.status_code == 200, response.text
    assert response.json()["pageNumber"] == 1


@pytest.mark.parametrize("kind", ["dca", "limit"])
@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"limit": 1001}, "limit"),
        ({"limit": 0}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"pageNumber": 0}, "pageNumber"),
        ({"pageNumber": 1.5}, "pageNumber"),
    ],
)
async def test_get_orders_paging_bounds(
    client: httpx.AsyncClient, kind: str, overrides: dict[str, Any], field: str
) -> None:
    response = await client.post(f"/{kind}/v1/getOrders", json=list_body(**overrides))
    assert_fail(response, 400, field)


@pytest.mark.parametrize("kind", ["dca", "limit"])
async def test_get_orders_limit_1000_is_accepted(client: httpx.AsyncClient, kind: str) -> None:
    response = await client.post(f"/{kind}/v1/getOrders", json=list_body(limit=1000))
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "path",
    [
        "/dca/v1/createOrder",
        "/dca/v1/cancelOrder",
        "/dca/v1/getOrders",
        "/limit/v1/createOrder",
        "/limit/v1/cancelOrder",
        "/limit/v1/getOrders",
        "/paper/v1/fund",
    ],
)
@pytest.mark.parametrize(("body", "word"), [(b"{not json", "JSON"), (b"[1, 2]", "JSON object")])
async def test_body_that_is_not_a_json_object_is_400(
    client: httpx.AsyncClient, world: PaperWorld, path: str, body: bytes, word: str
) -> None:
    before = world.market.ledger.dump()
    response = await client.post(path, content=body, headers={"content-type": "application/json"})
    assert_fail(response, 400, word)
    assert world.market.ledger.dump() == before


# --- admin endpoints ---------------------------------------------------------------------


async def test_fund_unknown_token_is_404_and_bad_amount_400(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    before = world.market.ledger.dump()
    unknown = await client.post(
        "/paper/v1/fund", json={"wallet": WALLET, "token": "NOPE", "amount": "1"}
    )
    assert_fail(unknown, 404, "NOPE")
    negative = await client.post(
        "/paper/v1/fund", json={"wallet": WALLET, "token": "APT", "amount": "-1"}
    )
    assert_fail(negative, 400, "amount")
    no_wallet = await client.post("/paper/v1/fund", json={"token": "APT", "amount": "1"})
    assert_fail(no_wallet, 400, "wallet")
    assert world.market.ledger.dump() == before


async def test_advance_refuses_to_move_backwards(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    start = world.market.now
    back = await client.post("/paper/v1/advance", json={"to": "2020-01-01T00:00:00Z"})
    assert_fail(back, 400)
    negative = await client.post("/paper/v1/advance", json={"seconds": -5})
    assert_fail(negative, 400, "seconds")
    assert world.market.now == start


# --- the rules shared with the client and the backtest (bot.order_rules) -----------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"fromTokenAmount": {"value": "1e40", "type": "total"}}, "fromTokenAmount.value"),
        ({"fromTokenAmount": {"value": "1e999999999", "type": "total"}}, "fromTokenAmount"),
        ({"numberOfOrders": "1e999999999"}, "numberOfOrders"),
        ({"interval": {"value": "1e999999999", "timePeriod": "hour"}}, "interval.value"),
        ({"interval": {"value": "1"}}, "interval"),
        ({"minRateToTokenPerFromToken": "infinity"}, "minRateToTokenPerFromToken"),
        ({"maxRateToTokenPerFromToken": "NaN"}, "maxRateToTokenPerFromToken"),
        ({"maxRateToTokenPerFromToken": "1e999999"}, "maxRateToTokenPerFromToken"),
        ({"slippagePercentage": "auto"}, "slippagePercentage"),
    ],
)
async def test_dca_create_out_of_range_values_are_400_never_500(
    client: httpx.AsyncClient, world: PaperWorld, overrides: dict[str, Any], field: str
) -> None:
    before = world.market.ledger.dump()
    response = await client.post("/dca/v1/createOrder", json=dca_body(**overrides))
    assert_fail(response, 400, field)
    assert_untouched(world, before)


@pytest.mark.parametrize("rate", ["1e999999", "1e-999999999", "1e41"])
async def test_a_limit_rate_no_market_has_is_400_and_the_world_goes_on(
    client: httpx.AsyncClient, world: PaperWorld, rate: str
) -> None:
    # A rate of 1e999999 was accepted, then overflowed every later step of the world (500s).
    before = world.market.ledger.dump()
    response = await client.post(
        "/limit/v1/createOrder", json=limit_body(rateToTokenPerFromToken=rate)
    )
    assert_fail(response, 400, "rateToTokenPerFromToken")
    assert_untouched(world, before)
    assert (await client.post("/paper/v1/advance", json={"seconds": 3600})).status_code == 200


async def test_dca_rate_bounds_of_0_and_infinity_bound_nothing(
    client: httpx.AsyncClient, world: PaperWorld
) -> None:
    body = dca_body(minRateToTokenPerFromToken="0", maxRateToTokenPerFromToken="Infinity")
    order_id = await create(client, "dca", body)
    order = world.market.dca.get(order_id)
    assert (order.min_rate, order.max_rate) == (None, None)


async def test_order_slippage_is_truncated_after_one_decimal_in_either_swap_variant(
    world: PaperWorld,
) -> None:
    # The variants are the swap endpoints' (spec 9); an order's slippage is read as the
    # client writes it, one decimal, whatever the variant.
    service = PaperService(world.market, variant="legacy")
    api = ProviderApi(service, world.settings, sync=world.market.sync)
    async with client_for(api) as legacy:
        dca_id = await create(legacy, "dca", dca_body(slippagePercentage="0.57"))
        limit_id = await create(legacy, "limit", limit_body(slippagePercentage="1.99"))
        auto_id = await create(legacy, "limit", limit_body(slippagePercentage="AUTO"))
    assert world.market.dca.get(dca_id).slippage == Decimal("0.5")
    assert world.market.limit.get(limit_id).slippage == Decimal("1.9")
    assert world.market.limit.get(auto_id).slippage == Decimal(5)
