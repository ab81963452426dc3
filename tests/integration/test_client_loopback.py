"""The API client against a real HTTP server on 127.0.0.1 (the scripted provider stub)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from decimal import Decimal

import pytest
from pydantic import SecretStr

from bot.api import (
    BadRequest,
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    LimitCreateRequest,
    MalformedResponse,
    NoRoute,
    NotFound,
    NotSent,
    OrderFilter,
    OutcomeUnknown,
    PanoraClient,
    RateLimited,
    ServerError,
    SwapRequest,
    Unauthorized,
    UnexpectedStatus,
)
from bot.api.client import USER_AGENT
from bot.api.models import SwapResponseExactIn, SwapResponseExactOut
from bot.logging import configure_logging
from tests.support.loopback import closed_port, serve
from tests.support.provider_stub import (
    APT,
    DCA_ORDER,
    SWAP_EXACT_OUT,
    USDC_FA,
    WALLET,
    ProviderStub,
    Reply,
)

API_KEY = "test-api-key-5f1c9e0d7a"


class SleepRecorder:
    """Stands in for asyncio.sleep: records delays and advances a virtual monotonic clock."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.now = 1000.0

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.now += seconds

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def stub() -> ProviderStub:
    return ProviderStub()


@pytest.fixture
def base_url(stub: ProviderStub) -> Iterator[str]:
    with serve(stub) as url:
        yield url


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


def make_client(base_url: str, sleeps: SleepRecorder, **overrides: object) -> PanoraClient:
    options: dict[str, object] = {
        "base_url": base_url,
        "api_key": SecretStr(API_KEY),
        "read_timeout": 2.0,
        "rate_limit_per_second": 1000.0,
        "rate_limit_burst": 100,
        "sleep": sleeps,
        "monotonic": sleeps.monotonic,
    }
    options.update(overrides)
    return PanoraClient(**options)  # type: ignore[arg-type]


async def test_prices_sends_filters_and_parses_both_number_styles(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    async with make_client(base_url, sleeps) as client:
        result = await client.get_prices([APT, USDC_FA], ui_only=False, tags=["Verified"])
    call = stub.calls("GET", "/prices")[0]
    assert call.param("tokenAddress") == f"{APT},{USDC_FA}"
    assert call.param("panoraUI") == "true,false"  # "all tokens" (SDK 1.3.1, Panora docs)
    assert call.param("panoraTags") == "Verified"
    assert call.param("chainId") == "1"
    apt, usdc = result.records
    assert apt.usd_price == Decimal("5.12345678")
    assert apt.price_change_24h == Decimal("-2.5")
    assert apt.svc_tags == ["Native", "Verified"]
    assert usdc.usd_price == Decimal("0.9998")  # a JSON number, kept exact
    assert usdc.native_price is None
    assert usdc.svc_ui is True
    assert usdc.unknown_fields == ["brandNewField"]
    assert client.stats.unknown_fields["GET /prices brandNewField"] == 1


async def test_every_call_carries_the_api_key_and_user_agent(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    async with make_client(base_url, sleeps) as client:
        await client.get_prices()
        request = SwapRequest(APT, USDC_FA, from_amount=Decimal("10"), to_wallet=WALLET)
        await client.quote(request)
        await client.swap(request)
        dca = DcaCreateRequest(1, WALLET, USDC_FA, APT, Decimal("100"), "total", 1, "day", 4)
        await client.create_dca_order(dca)
        await client.cancel_order("dca", CancelOrderRequest("0xdca1", to_wallet=WALLET))
        get = GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE)
        await client.get_orders("dca", get)
        limit = LimitCreateRequest(1, APT, USDC_FA, WALLET, WALLET, Decimal("1"), Decimal("6.5"))
        await client.create_limit_order(limit)
        await client.cancel_order("limit", CancelOrderRequest("0xlim1"))
        await client.get_orders("limit", get)
    assert len(stub.requests) == 9
    for request_seen in stub.requests:
        assert request_seen.headers["x-api-key"] == API_KEY
        assert request_seen.headers["user-agent"] == USER_AGENT


async def test_swap_post_has_query_and_empty_body_and_returns_txdata(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    request = SwapRequest(
        APT, USDC_FA, from_amount=Decimal("10.50"), to_wallet=WALLET, slippage=Decimal("0.57")
    )
    async with make_client(base_url, sleeps) as client:
        response = await client.swap(request)
    call = stub.calls("POST", "/swap")[0]
    assert call.body is None
    assert call.param("fromTokenAmount") == "10.5"
    assert call.param("slippagePercentage") == "0.5"  # truncated after one decimal
    assert call.param("toWalletAddress") == WALLET
    assert isinstance(response, SwapResponseExactIn)
    assert response.best.min_to_token_amount == Decimal("50.867838")
    assert response.best.tx_data is not None
    assert response.best.tx_data.function.endswith("::panora_swap::router_entry")
    assert len(response.best.tx_data.arguments) == 20


async def test_exact_out_quote_parses_numbers_and_route(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    stub.script("GET", "/swap/quote", Reply(body=SWAP_EXACT_OUT))
    async with make_client(base_url, sleeps, swap_variant="legacy") as client:
        response = await client.quote(
            SwapRequest(APT, USDC_FA, to_amount=Decimal("50"), slippage=Decimal("0.555"))
        )
    assert stub.calls("GET", "/swap/quote")[0].param("slippagePercentage") == "0.55"
    assert isinstance(response, SwapResponseExactOut)
    assert response.best.max_from_token_amount == Decimal("9.849")
    assert response.to_token_amount_usd is None
    assert response.best.route is not None
    assert response.best.route[0].route_taken[0][0].dex_name == "Thala"


async def test_order_bodies_are_nested_json_with_the_provider_prefix(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    async with make_client(base_url, sleeps) as client:
        created = await client.create_dca_order(
            DcaCreateRequest(
                1,
                WALLET,
                USDC_FA,
                APT,
                Decimal("25"),
                "perorder",
                1,
                "day",
                4,
                max_rate=Decimal("0.5"),
                delay_value=2,
                delay_period="hour",
            )
        )
        await client.cancel_order("dca", CancelOrderRequest("0xdca1", to_wallet=WALLET))
        await client.create_limit_order(
            LimitCreateRequest(
                1,
                APT,
                USDC_FA,
                WALLET,
                WALLET,
                Decimal("1"),
                Decimal("6.5"),
                slippage="auto",
                expiry_value=7,
                expiry_period="day",
            )
        )
    assert created.order_id == "0xdca-new"
    body = stub.calls("POST", "/dca/v1/createOrder")[0].body
    assert body["fromTokenAmount"] == {"value": "25", "type": "perorder"}
    assert body["interval"] == {"value": "1", "timePeriod": "day"}
    assert body["delay"] == {"value": "2", "timePeriod": "hour"}
    assert body["maxRateToTokenPerFromToken"] == "0.5"
    assert body["numberOfOrders"] == 4
    cancel = stub.calls("POST", "/dca/v1/cancelOrder")[0].body
    assert cancel == {"panoraTxId": "0xdca1", "chainId": "1", "toWalletAddress": WALLET}
    limit = stub.calls("POST", "/limit/v1/createOrder")[0].body
    assert limit["fromWalletAddress"] == APT  # the sold token, as the spec describes it
    assert "fromTokenAddress" not in limit  # the docs list no such field (wire decision 6)
    assert limit["expiry"] == {"value": "7", "timePeriod": "day"}
    assert limit["slippagePercentage"] == "auto"


async def test_get_orders_parses_pages_and_isolates_a_bad_record(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    broken = dict(DCA_ORDER, panoraTxId="0xbroken", fromTokenAmountTotal="lots")
    page = {
        "chainId": 1,
        "toWalletAddress": WALLET,
        "pageNumber": 1,
        "totalPages": 1,
        "orders": [DCA_ORDER, broken, "not even an object"],
    }
    stub.script("POST", "/dca/v1/getOrders", Reply(body=page))
    request = GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.COMPLETED, limit=10)
    async with make_client(base_url, sleeps) as client:
        result = await client.get_orders("dca", request)
        limits = await client.get_orders("limit", request)
    body = stub.calls("POST", "/dca/v1/getOrders")[0].body
    assert body == {
        "chainId": 1,
        "toWalletAddress": WALLET,
        "status": "completed",
        "txDetails": True,
        "limit": 10,
        "pageNumber": 1,
    }
    assert [o.order_id for o in result.orders] == ["0xdca1"]
    assert [(r.index, r.record_id) for r in result.rejected] == [(1, "0xbroken"), (2, None)]
    order = result.orders[0]
    assert order.max_rate_to_token_per_from_token == Decimal("Infinity")
    assert order.tx_details is not None and order.tx_details[0].to_token_amount == Decimal("4.9")
    assert limits.orders[0].status == "partially_filled"
    assert limits.orders[0].from_token_amount == Decimal("10")


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(400, BadRequest), (401, Unauthorized), (404, NotFound), (418, UnexpectedStatus)],
)
async def test_error_statuses_raise_typed_errors_with_the_server_message(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder, status: int, error_type: type
) -> None:
    body = {"statusCode": status, "message": f"reason {status}", "status": "fail"}
    stub.script("POST", "/swap", Reply(status, body))
    async with make_client(base_url, sleeps) as client:
        with pytest.raises(error_type) as caught:
            await client.quote(SwapRequest(APT, USDC_FA, from_amount=Decimal("1")))
    assert caught.value.status_code == status
    assert caught.value.server_message == f"reason {status}"
    assert len(stub.calls("POST", "/swap")) == 1  # client errors are not retried


async def test_an_error_body_of_another_shape_still_gives_a_typed_error(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    stub.script("GET", "/prices", Reply(401, "<html>denied</html>"))
    async with make_client(base_url, sleeps) as client:
        with pytest.raises(Unauthorized, match="denied"):
            await client.get_prices()


async def test_500_is_retried_for_reads_and_gives_up_after_max_attempts(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    fail = Reply(500, {"statusCode": 500, "message": "internal server error", "status": "fail"})
    stub.script("GET", "/prices", fail, fail)
    async with make_client(base_url, sleeps, max_attempts=3) as client:
        result = await client.get_prices()
        assert len(result.records) == 2
        stub.script("GET", "/prices", *[fail] * 3)
        with pytest.raises(ServerError, match="internal server error"):
            await client.get_prices()
    assert len(stub.calls("GET", "/prices")) == 3 + 3
    assert client.stats.retries == 2 + 2


async def test_429_waits_at_least_retry_after_then_succeeds(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    limited = Reply(
        429,
        {"statusCode": 429, "message": "slow down", "status": "fail"},
        headers={"retry-after": "7"},
    )
    stub.script("POST", "/dca/v1/getOrders", limited)
    async with make_client(base_url, sleeps) as client:
        page = await client.get_orders(
            "dca", GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE)
        )
    assert page.orders
    backoff = [d for d in sleeps.delays if d >= 1]
    assert backoff and 7 <= backoff[0] <= 7.7  # Retry-After plus at most 10% jitter


async def test_429_exhausted_raises_rate_limited_with_retry_after(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    limited = Reply(
        429, {"statusCode": 429, "message": "slow", "status": "fail"}, headers={"retry-after": "2"}
    )
    stub.script("GET", "/prices", limited, limited)
    async with make_client(base_url, sleeps, max_attempts=2) as client:
        with pytest.raises(RateLimited) as caught:
            await client.get_prices()
    assert caught.value.retry_after == 2


async def test_a_read_timeout_is_retried_for_a_quote(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    stub.script("POST", "/swap", Reply(body={}, delay=1.0))
    async with make_client(base_url, sleeps, read_timeout=0.3) as client:
        response = await client.quote(SwapRequest(APT, USDC_FA, from_amount=Decimal("10")))
    assert isinstance(response, SwapResponseExactIn)
    assert len(stub.calls("POST", "/swap")) == 2


async def test_create_order_is_not_retried_after_a_dropped_connection(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    stub.script("POST", "/dca/v1/createOrder", Reply(body={"panoraTxId": "0xlost"}, drop=True))
    request = DcaCreateRequest(1, WALLET, USDC_FA, APT, Decimal("100"), "total", 1, "day", 4)
    async with make_client(base_url, sleeps) as client:
        with pytest.raises(OutcomeUnknown, match="outcome unknown"):
            await client.create_dca_order(request)
    assert len(stub.calls("POST", "/dca/v1/createOrder")) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body={}, delay=1.0),  # read timeout
        Reply(500, {"statusCode": 500, "message": "internal server error", "status": "fail"}),
        Reply(200, "this is not json"),
        Reply(200, ["not", "an", "object"]),
    ],
    ids=["timeout", "500", "non-json-200", "non-object-200"],
)
async def test_cancel_order_with_unknown_outcome_is_never_resent(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder, reply: Reply
) -> None:
    stub.script("POST", "/limit/v1/cancelOrder", reply)
    async with make_client(base_url, sleeps, read_timeout=0.3) as client:
        with pytest.raises(OutcomeUnknown):
            await client.cancel_order("limit", CancelOrderRequest("0xlim1"))
    assert len(stub.calls("POST", "/limit/v1/cancelOrder")) == 1


async def test_create_order_refused_with_429_is_safely_resent(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    limited = Reply(
        429, {"statusCode": 429, "message": "slow", "status": "fail"}, headers={"retry-after": "1"}
    )
    stub.script("POST", "/limit/v1/createOrder", limited)
    request = LimitCreateRequest(1, APT, USDC_FA, WALLET, WALLET, Decimal("1"), Decimal("6.5"))
    async with make_client(base_url, sleeps) as client:
        result = await client.create_limit_order(request)
    assert result.order_id == "0xlim-new"
    assert len(stub.calls("POST", "/limit/v1/createOrder")) == 2


async def test_connection_refused_is_not_sent(sleeps: SleepRecorder) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    request = DcaCreateRequest(1, WALLET, USDC_FA, APT, Decimal("100"), "total", 1, "day", 4)
    async with make_client(url, sleeps, max_attempts=2) as client:
        with pytest.raises(NotSent):
            await client.get_prices()
        with pytest.raises(NotSent):  # safe to retry: it never reached a server
            await client.create_dca_order(request)
    assert client.stats.retries == 2


async def test_a_malformed_success_body_of_a_read_is_a_typed_error(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    stub.script("POST", "/swap", *[Reply(body={"quotes": "nope"})] * 2)
    async with make_client(base_url, sleeps) as client:
        with pytest.raises(MalformedResponse, match="does not match the spec"):
            await client.quote(SwapRequest(APT, USDC_FA, from_amount=Decimal("1")))


async def test_the_api_key_never_appears_in_log_output(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    out = io.StringIO()
    configure_logging(fmt="json", level="debug", stream=out)
    stub.script("GET", "/prices", Reply(500, {"message": f"echo {API_KEY}"}))
    stub.script("POST", "/swap", Reply(401, {"message": "bad key " + API_KEY}))
    try:
        async with make_client(base_url, sleeps) as client:
            await client.get_prices()
            with pytest.raises(Unauthorized) as caught:
                await client.quote(SwapRequest(APT, USDC_FA, from_amount=Decimal("1")))
            from bot.logging import get_logger

            get_logger("test").error("failed", error=caught.value, key_hint=API_KEY)
    finally:
        configure_logging(fmt="console", level="warning")
    text = out.getvalue()
    assert "api.retry" in text  # the retry after the 500 was logged…
    assert API_KEY not in text  # …and nothing logged carries the key
    assert "[REDACTED]" in text


# --- real request forms and bodies (issue #16) -------------------------------------------


async def test_a_quote_is_post_swap_without_a_wallet_and_legacy_uses_get_swap_quote(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    # SDK 1.3.1 dist/index.es.js, Quote.getQuote: `method: "POST"` to "/swap", the
    # parameters in the query, `client.post(endpoint, {}, { params })`; toWalletAddress
    # optional. SDK 1.0.8 used GET /swap/quote (our "legacy" variant).
    request = SwapRequest(
        APT,
        USDC_FA,
        from_amount=Decimal("10"),
        exclude_sources=("Thala", "Hyperion"),
        max_hops=2,
        disable_splits=True,
    )
    async with make_client(base_url, sleeps) as client:
        await client.quote(request)
    [call] = stub.calls("POST", "/swap")
    assert call.param("toWalletAddress") is None
    assert call.param("excludeSources") == "Thala,Hyperion"  # comma-joined, no brackets
    assert (call.param("maxHops"), call.param("disableSplits")) == ("2", "true")
    async with make_client(base_url, sleeps, swap_variant="legacy") as client:
        await client.quote(SwapRequest(APT, USDC_FA, from_amount=Decimal("10")))
    assert len(stub.calls("GET", "/swap/quote")) == 1
    assert len(stub.calls("POST", "/swap")) == 1


@pytest.mark.parametrize("to_sign", [False, True])
async def test_quotes_empty_is_no_route_and_is_not_retried(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder, to_sign: bool
) -> None:
    # The real "no route": `quotes: []` (SDK 1.3.1 Swap.swap: "No routes present").
    stub.script("POST", "/swap", Reply(body={"quotes": []}))
    request = SwapRequest(APT, USDC_FA, from_amount=Decimal("10.50"), to_wallet=WALLET)
    async with make_client(base_url, sleeps) as client:
        with pytest.raises(NoRoute) as info:
            await (client.swap(request) if to_sign else client.quote(request))
        assert client.stats.retries == 0
    assert str(info.value) == f"no route for 10.5 {APT} → {USDC_FA}"
    assert info.value.describe("APT", "USDC") == "no route for 10.5 APT → USDC"
    assert not isinstance(info.value, MalformedResponse)
    assert len(stub.calls("POST", "/swap")) == 1


# SDK 1.3.1 dist/types/resources/type.d.ts `MaxToTokenSwap` (ExactIn): keys, nesting and JSON
# types as the SDK declares them; the values are made up.
SDK_131_EXACT_IN = {
    "fromToken": {
        "address": APT,
        "name": "Aptos Coin",
        "symbol": "APT",
        "decimals": 8,
        "current_price": "4.61",
    },
    "toToken": {
        "address": USDC_FA,
        "name": "USDC",
        "symbol": "USDC",
        "decimals": 6,
        "current_price": "0.9999",
    },
    "feeToken": {
        "address": USDC_FA,
        "name": "USDC",
        "symbol": "USDC",
        "decimals": 6,
        "current_price": "0.9999",
    },
    "fromTokenAmount": "10",
    "fromTokenAmountUSD": "46.1",
    "quotes": [
        {
            "toTokenAmount": "46.05",
            "priceImpact": "0.01",
            "slippagePercentage": "0.5",
            "minToTokenAmount": "45.8197",
            "toTokenAmountUSD": "46.04",
            "feeTokenAmount": "0.046",
            "feeTokenAmountUSD": "0.046",
        }
    ],
}


async def test_sdk_131_fee_fields_are_read_in_the_fee_token(
    base_url: str, stub: ProviderStub, sleeps: SleepRecorder
) -> None:
    stub.script("POST", "/swap", Reply(body=SDK_131_EXACT_IN))
    async with make_client(base_url, sleeps) as client:
        response = await client.quote(SwapRequest(APT, USDC_FA, from_amount=Decimal("10")))
    assert isinstance(response, SwapResponseExactIn)
    assert response.best.fee == Decimal("0.046")
    fee_token = response.fee_token_of(response.best)
    assert fee_token is not None and fee_token.identity == USDC_FA  # not the sold APT
    assert client.stats.unknown_fields == {}
