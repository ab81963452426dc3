"""The client, the paper service and the backtest refuse the same requests, in the same words.

Each case is one strategy action with one thing wrong (or nothing). The client builds its
request as the executor does (`bot.engine.executor`, with the sold token's decimals) and
checks it; the paper service is sent the client's body, or, when the client refused, the
same values written to the wire unchecked; the backtest's `CoreBroker` carries the action
out on a paper market. All three must accept, or all three refuse naming the same field:
the service's 400 message and the backtest's failure detail are the rule's one sentence,
and the client's error is `field: the same words`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from bot.api.errors import RequestRuleError
from bot.api.params import DcaCreateRequest, LimitCreateRequest, SwapRequest
from bot.backtest.broker import CoreBroker
from bot.engine.actions import Action, CreateDca, CreateLimit, Swap
from bot.paper.world import PaperWorld, build_world
from tests.support.paper_service import APT, USDC, WALLET, client_for, paper_settings

D = Decimal
DCA = CreateDca(
    key="dca",
    sell=APT,
    buy=USDC,
    amount=D(10),
    orders=4,
    interval_value=1,
    interval_period="hour",
)
LIMIT = CreateLimit(
    key="limit", sell=APT, buy=USDC, amount=D(2), rate=D(1000), expiry_value=1, expiry_period="day"
)
SWAP = Swap(key="swap", sell=APT, buy=USDC, sell_amount=D(1))


@pytest.fixture
def world() -> Iterator[PaperWorld]:
    world = build_world(paper_settings(), escrow_style="escrow")
    world.market.fund(WALLET, world.market.tokens.require(APT), 100 * 10**8)
    yield world


def _text(value: Any) -> Any:
    """A value as the client writes it (decimal text), unchecked; None stays out."""
    return None if value is None else value if isinstance(value, bool | int) else str(value)


def _pair(value: Any, unit: Any) -> dict[str, Any] | None:
    if value is None and unit is None:
        return None
    return {k: v for k, v in (("value", _text(value)), ("timePeriod", unit)) if v is not None}


def client_request(action: Action) -> Any:
    """The request the executor builds for `action` (APT has 8 decimals)."""
    if isinstance(action, CreateDca):
        return DcaCreateRequest(
            chain_id=1,
            to_wallet=WALLET,
            from_token=APT,
            to_token=USDC,
            amount=action.amount,
            amount_type=action.amount_type,
            interval_value=action.interval_value,
            interval_period=action.interval_period,
            number_of_orders=action.orders,
            min_rate=action.min_rate,
            max_rate=action.max_rate,
            delay_value=action.delay_value,
            delay_period=action.delay_period,
            slippage=action.slippage,
            from_decimals=8,
        )
    if isinstance(action, CreateLimit):
        return LimitCreateRequest(
            chain_id=1,
            from_token=APT,
            to_token=USDC,
            from_wallet=WALLET,
            to_wallet=WALLET,
            amount=action.amount,
            rate=action.rate,
            slippage=action.slippage,
            expiry_value=action.expiry_value,
            expiry_period=action.expiry_period,
            from_decimals=8,
        )
    assert isinstance(action, Swap)
    return SwapRequest(
        from_token=APT, to_token=USDC, from_amount=action.sell_amount, slippage=action.slippage
    )


def raw_body(action: CreateDca | CreateLimit) -> dict[str, Any]:
    """The body the client would write for `action`, without any of its checks."""
    if isinstance(action, CreateDca):
        body: dict[str, Any] = {
            "chainId": "1",
            "toWalletAddress": WALLET,
            "fromTokenAddress": APT,
            "toTokenAddress": USDC,
            "fromTokenAmount": {"value": _text(action.amount), "type": action.amount_type},
            "interval": _pair(action.interval_value, action.interval_period),
            "numberOfOrders": action.orders,
            "minRateToTokenPerFromToken": _text(action.min_rate),
            "maxRateToTokenPerFromToken": _text(action.max_rate),
            "delay": _pair(action.delay_value, action.delay_period),
            "slippagePercentage": _text(action.slippage),
        }
    else:
        body = {
            "chainId": "1",
            "fromWalletAddress": APT,
            "toTokenAddress": USDC,
            "toWalletAddress": WALLET,
            "fromTokenAmount": _text(action.amount),
            "rateToTokenPerFromToken": _text(action.rate),
            "slippagePercentage": _text(action.slippage),
            "expiry": _pair(action.expiry_value, action.expiry_period),
        }
    return {k: v for k, v in body.items() if v is not None}


async def answers(world: PaperWorld, action: Action) -> tuple[Any, Any, Any]:
    """(client error or None, service message or None, backtest detail or None)."""
    request = client_request(action)
    client_error: RequestRuleError | None = None
    try:
        sent: Any = (
            request.to_query("current", with_tx_data=False)
            if isinstance(request, SwapRequest)
            else request.to_body()
        )
    except RequestRuleError as exc:
        client_error = exc
        sent = None
    async with client_for(world.provider_api) as http:
        if isinstance(action, Swap):
            params = (
                sent
                if sent is not None
                else {
                    "fromTokenAddress": APT,
                    "toTokenAddress": USDC,
                    "fromTokenAmount": _text(action.sell_amount),
                    "slippagePercentage": _text(action.slippage),
                }
            )
            response = await http.post("/swap", params=params)
        else:
            assert isinstance(action, CreateDca | CreateLimit)
            kind = "dca" if isinstance(action, CreateDca) else "limit"
            body = sent if sent is not None else raw_body(action)
            response = await http.post(f"/{kind}/v1/createOrder", json=body)
    if response.status_code == 200:
        service = None
    else:
        assert response.status_code == 400, response.text
        service = response.json()["message"]
    broker = CoreBroker(world.market, WALLET, world.market.tokens.book, {APT, USDC})
    outcome = await broker.carry_out("s", action)
    backtest = None if outcome.state == "confirmed" else outcome.detail
    return client_error, service, backtest


def case(action: Action, field: str | None, **change: Any) -> Any:
    return pytest.param(replace(action, **change), field, id=f"{action.key}-{change}")


CASES = [
    # DCA createOrder
    case(DCA, None),
    case(DCA, "fromTokenAmount.value", amount=D(0)),
    case(DCA, "fromTokenAmount.value", amount=D(-1)),
    case(DCA, "fromTokenAmount.value", amount=D("NaN")),
    case(DCA, "fromTokenAmount.value", amount=D("1E-9")),  # below one base unit of APT
    case(DCA, "fromTokenAmount.value", amount=D("3E-8")),  # 3 base units, 4 slices
    case(DCA, None, amount=D("1E-8"), amount_type="perorder"),
    case(DCA, "fromTokenAmount.type", amount_type="each"),
    case(DCA, "numberOfOrders", orders=0),
    case(DCA, "numberOfOrders", orders=True),
    case(DCA, "interval.value", interval_value=0),
    case(DCA, "interval.timePeriod", interval_period="fortnight"),
    case(DCA, None, delay_value=0, delay_period="hour"),
    case(DCA, "delay", delay_value=1),
    case(DCA, "delay", delay_period="day"),
    case(DCA, "delay.value", delay_value=-1, delay_period="hour"),
    case(DCA, None, min_rate=D("0.1"), max_rate=D(1000)),
    case(DCA, None, min_rate=D(0), max_rate=D("Infinity")),  # bounds that bound nothing
    case(DCA, "minRateToTokenPerFromToken", min_rate=D(2), max_rate=D(1)),
    case(DCA, "minRateToTokenPerFromToken", min_rate=D(-1)),
    case(DCA, "minRateToTokenPerFromToken", min_rate=D("Infinity")),
    case(DCA, "minRateToTokenPerFromToken", min_rate=D("NaN")),
    case(DCA, "maxRateToTokenPerFromToken", max_rate=D(0)),
    case(DCA, None, slippage=D("0.57")),
    case(DCA, "slippagePercentage", slippage=D(150)),
    case(DCA, "slippagePercentage", slippage=D("-0.1")),
    # limit createOrder
    case(LIMIT, None),
    case(LIMIT, None, slippage="auto"),
    case(LIMIT, None, slippage=D("0.57"), expiry_value=None, expiry_period=None),
    case(LIMIT, "rateToTokenPerFromToken", rate=D(0)),
    case(LIMIT, "rateToTokenPerFromToken", rate=D(-2)),
    case(LIMIT, "rateToTokenPerFromToken", rate=D("Infinity")),
    case(LIMIT, "rateToTokenPerFromToken", rate=D("NaN")),
    case(LIMIT, "fromTokenAmount", amount=D(0)),
    case(LIMIT, "fromTokenAmount", amount=D("1E-9")),
    case(LIMIT, "expiry", expiry_period=None),
    case(LIMIT, "expiry.value", expiry_value=0),
    case(LIMIT, "expiry.timePeriod", expiry_period="decade"),
    case(LIMIT, "slippagePercentage", slippage=D(101)),
    # swaps
    case(SWAP, None),
    case(SWAP, None, slippage="auto"),
    case(SWAP, None, slippage=D("5.57")),
    case(SWAP, "fromTokenAmount", sell_amount=D(0)),
    case(SWAP, "fromTokenAmount", sell_amount=D(-1)),
    case(SWAP, "slippagePercentage", slippage=D(101)),
    case(SWAP, "slippagePercentage", slippage=D("-0.1")),
]


@pytest.mark.parametrize(("action", "field"), CASES)
async def test_client_service_and_backtest_agree(
    world: PaperWorld, action: Action, field: str | None
) -> None:
    client, service, backtest = await answers(world, action)
    if field is None:
        assert (client, service, backtest) == (None, None, None)
        return
    assert client is not None and client.field == field, client
    assert service is not None and backtest is not None, (service, backtest)
    assert service == backtest, (service, backtest)
    assert service.startswith(field)
    # The client's words are the rule's, after `field: ` (its own form of error); it names
    # a token by the address it sends, the others by symbol.
    words = str(client).split(": ", 1)[1].replace(APT, "APT")
    assert words in service, (str(client), service)
