"""The foundation's API client, unchanged, against `bot paper serve` over loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from bot.api import (
    BadRequest,
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    LimitCreateRequest,
    NoRoute,
    NotFound,
    OrderFilter,
    OutcomeUnknown,
    PanoraClient,
    SwapRequest,
    Unauthorized,
)
from bot.api.models import SwapResponseExactIn, SwapResponseExactOut
from bot.aptos.codec import ModuleAbi, decode_entry_function, encode_entry_function
from tests.support.fixtures import FIXTURES as SHARED_FIXTURES
from tests.support.paper_server import PAPER_KEY, paper_serve, write_config

FIXTURES = SHARED_FIXTURES / "aptos"
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "5a" * 32


@pytest.fixture(scope="module")
def paper_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = write_config(tmp_path_factory.mktemp("paper") / "bot.toml")
    with paper_serve(config) as (url, _process):
        admin(
            url,
            "POST",
            "/paper/v1/fund",
            json={"wallet": WALLET, "token": "USDC", "amount": "10000"},
        )
        admin(
            url, "POST", "/paper/v1/fund", json={"wallet": WALLET, "token": "APT", "amount": "100"}
        )
        yield url


def admin(url: str, method: str, path: str, **kwargs: object) -> dict[str, object]:
    response = httpx.request(
        method, url + path, headers={"x-api-key": PAPER_KEY}, timeout=10, **kwargs
    )  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def client(url: str, key: str = PAPER_KEY, **options: object) -> PanoraClient:
    return PanoraClient(base_url=url, api_key=SecretStr(key), **options)  # type: ignore[arg-type]


async def test_prices_and_filters(paper_url: str) -> None:
    async with client(paper_url) as api:
        both = await api.get_prices([APT, USDC])
        visible = await api.get_prices()
        everything = await api.get_prices(ui_only=False)
        memes = await api.get_prices(ui_only=False, tags=["Meme"])
    assert [r.symbol for r in both.records] == ["APT", "USDC"]
    assert both.records[0].usd_price == Decimal("5")
    assert not both.rejected and not everything.rejected
    assert 0 < len(visible.records) < len(everything.records)
    # A /prices record carries no tags (wire decision 40): the token list says which.
    async with client(paper_url) as api:
        listed = await api.get_token_list(ui_only=False, tags=["Meme"])
    tagged = {r.fa_address or r.token_address for r in listed.records}
    assert memes.records and {r.fa_address or r.token_address for r in memes.records} <= tagged


async def test_the_paper_world_answers_the_real_forms(paper_url: str) -> None:
    """`panoraUI=true,false` lists APT and USDC, quotes carry SDK 1.3.1's fee fields, and
    excluded sources give `quotes: []`, read as NoRoute (issue #16)."""
    async with client(paper_url) as api:
        everything = await api.get_prices(ui_only=False)  # sent as panoraUI=true,false
        shown = await api.get_prices()
        quote = await api.quote(SwapRequest(APT, USDC, from_amount=Decimal("10")))
        with pytest.raises(NoRoute, match="no route for 10"):
            await api.quote(
                SwapRequest(APT, USDC, from_amount=Decimal("10"), exclude_sources=("PaperSwap",))
            )
    listed = {r.fa_address for r in everything.records} | {
        r.token_address for r in everything.records
    }
    assert {APT, USDC} <= listed
    assert len(everything.records) > len(shown.records)  # hidden tokens too
    fee_token = quote.fee_token_of(quote.best)
    assert quote.best.fee == Decimal("0.01") and quote.best.fee_amount is None
    assert fee_token is not None and fee_token.identity == APT and fee_token.symbol == "APT"


async def test_quotes_both_ways_and_swap_txdata_in_the_real_router_format(paper_url: str) -> None:
    async with client(paper_url) as api:
        exact_in = await api.quote(SwapRequest(APT, USDC, from_amount=Decimal("10")))
        exact_out = await api.quote(SwapRequest(APT, USDC, to_amount=Decimal("20")))
        swap = await api.swap(
            SwapRequest(
                APT, USDC, from_amount=Decimal("2"), to_wallet=WALLET, slippage=Decimal("1")
            )
        )
    assert isinstance(exact_in, SwapResponseExactIn) and isinstance(exact_out, SwapResponseExactOut)
    assert (
        Decimal("45") < exact_in.best.to_token_amount < Decimal("50")
    )  # APT ≈ $5, fees and impact
    assert exact_in.best.min_to_token_amount < exact_in.best.to_token_amount
    assert exact_out.best.from_token_amount < exact_out.best.max_from_token_amount
    assert isinstance(swap, SwapResponseExactIn) and swap.best.tx_data is not None
    tx = swap.best.tx_data.as_json()
    abi = ModuleAbi.from_json(json.loads((FIXTURES / "panora_swap_module_abi.json").read_text()))
    payload = encode_entry_function(abi, tx["function"], tx["type_arguments"], tx["arguments"])
    decoded = decode_entry_function(payload, abi)
    assert decoded["arguments"][1] == WALLET  # the recipient (real layout)
    assert decoded["arguments"][16] == ["200000000"]  # 2 APT in base units


async def test_dca_order_runs_its_slices_as_time_advances(paper_url: str) -> None:
    request = DcaCreateRequest(1, WALLET, USDC, APT, Decimal("30"), "total", 1, "day", 3)
    async with client(paper_url) as api:
        created = await api.create_dca_order(request)
        assert created.order_id
        listing = GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE)
        active = await api.get_orders("dca", listing)
        assert created.order_id in [o.order_id for o in active.orders]
        admin(paper_url, "POST", "/paper/v1/advance", json={"seconds": 3 * 86400})
        done = await api.get_orders(
            "dca",
            GetOrdersRequest(
                chain_id=1, wallet=WALLET, status=OrderFilter.COMPLETED, order_id=created.order_id
            ),
        )
    [order] = done.orders
    assert order.status == "filled"
    assert order.number_of_orders_completed == 3
    assert order.from_token_amount_spent == Decimal("30")
    assert order.tx_details is not None
    assert [d.type for d in order.tx_details].count("filled") == 3
    assert order.to_token_amount_withdrawn is not None and order.to_token_amount_withdrawn > 0


async def test_limit_order_created_listed_and_cancelled(paper_url: str) -> None:
    request = LimitCreateRequest(1, APT, USDC, WALLET, WALLET, Decimal("1"), Decimal("1000"))
    async with client(paper_url) as api:
        created = await api.create_limit_order(request)
        assert created.order_id is not None
        await api.cancel_order("limit", CancelOrderRequest(created.order_id, to_wallet=WALLET))
        page = await api.get_orders(
            "limit", GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.COMPLETED)
        )
    [order] = [o for o in page.orders if o.order_id == created.order_id]
    assert order.status == "cancelled"
    assert order.from_token_amount_withdrawn == Decimal("1")


async def test_errors_are_typed(paper_url: str) -> None:
    async with client(paper_url, key="wrong-key") as api:
        with pytest.raises(Unauthorized):
            await api.get_prices()
    async with client(paper_url) as api:
        with pytest.raises(NotFound):
            await api.quote(SwapRequest(APT, "0x" + "99" * 32, from_amount=Decimal("1")))
        with pytest.raises(BadRequest, match="insufficient balance"):
            await api.create_limit_order(
                LimitCreateRequest(1, APT, USDC, WALLET, WALLET, Decimal("1000000"), Decimal("1"))
            )
    raw = httpx.get(
        paper_url + "/swap/quote",
        headers={"x-api-key": PAPER_KEY},
        params={
            "fromTokenAddress": APT,
            "toTokenAddress": USDC,
            "fromTokenAmount": "1",
            "slippagePercentage": "101",
        },
    )
    assert raw.status_code == 400
    assert raw.json() == {"statusCode": 400, "message": raw.json()["message"], "status": "fail"}
    assert "slippagePercentage" in raw.json()["message"]


async def test_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    config = write_config(tmp_path / "bot.toml")
    config.write_text(
        config.read_text()
        .replace("rate_limit_per_second = 1000.0", "rate_limit_per_second = 1.0")
        .replace("rate_limit_burst = 1000", "rate_limit_burst = 2")
    )
    with paper_serve(config) as (url, _):
        statuses = [httpx.get(url + "/prices", headers={"x-api-key": PAPER_KEY}) for _ in range(4)]
        limited = [r for r in statuses if r.status_code == 429]
        assert limited and int(limited[0].headers["retry-after"]) >= 1
        async with client(url, max_attempts=3) as api:  # the client waits and succeeds
            assert (await api.get_prices([APT])).records


async def test_a_dropped_create_is_applied_and_the_client_says_outcome_unknown(
    tmp_path: Path,
) -> None:
    config = write_config(
        tmp_path / "bot.toml",
        extra=('[paper.faults]\ndrop_after_apply = "1"\nendpoints = ["/dca/v1/createOrder"]\n'),
    )
    with paper_serve(config) as (url, _):
        admin(
            url, "POST", "/paper/v1/fund", json={"wallet": WALLET, "token": "USDC", "amount": "50"}
        )
        request = DcaCreateRequest(1, WALLET, USDC, APT, Decimal("20"), "total", 1, "hour", 2)
        async with client(url) as api:
            with pytest.raises(OutcomeUnknown):
                await api.create_dca_order(request)
            page = await api.get_orders(
                "dca", GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE)
            )
    assert len(page.orders) == 1  # applied exactly once, though the answer was lost
