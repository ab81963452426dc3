"""Bad input: the client's models and list endpoints against arbitrary spec-shaped JSON.

Whatever a provider sends, a record either parses into exact values (no float, no NaN, no
negative amount, no unbounded number, a time that is UTC or absent, a record that can be
hashed and journaled) or is set aside and logged; a body that is not a page at all is a
`MalformedResponse`. Nothing else may come out: no crash, no hang.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

import httpx
import pytest
import structlog
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, SecretStr, ValidationError

from bot.api import ApiError, GetOrdersRequest, MalformedResponse, OrderFilter, PanoraClient
from bot.api.errors import NoRoute
from bot.api.models import (
    DcaOrder,
    LimitOrder,
    OrderResult,
    PriceRecord,
    SwapResponseExactIn,
    parse_wire_time,
)
from bot.api.params import SwapRequest
from bot.api.units import order_record_to_human
from bot.engine.observe import observation_of, record_hash
from bot.money import format_decimal, loads_exact
from tests.support.json_strategies import (
    APT,
    LONE_SURROGATE,
    USDC,
    WALLET,
    RawJson,
    ScriptedApi,
    broken_bodies,
    dumps,
    junk,
    order_pages,
    order_records,
    price_records,
    swap_bodies,
)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SIGNED = frozenset({"price_change_24h", "price_impact"})
"""The only numbers that may be negative; every other Decimal is an amount or a rate."""
kinds = st.sampled_from(["dca", "limit"])


def check_exact(model: BaseModel, where: str = "") -> None:
    """Every declared field holds an exact, bounded, sensible value (extras are kept raw)."""
    for name, info in type(model).model_fields.items():
        if info.annotation is Any:
            continue
        check_value(getattr(model, name), f"{where}{name}", name)


def check_value(value: object, where: str, name: str) -> None:
    assert not isinstance(value, float), f"{where} is a float"
    if isinstance(value, BaseModel):
        check_exact(value, where + ".")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_value(item, f"{where}[{i}]", name)
    elif isinstance(value, Decimal):
        assert not value.is_nan(), where
        if value.is_infinite():
            assert "rate" in name and value > 0, f"{where} is {value}"
        else:
            assert len(format_decimal(value)) <= 200, f"{where}: unbounded number"
        if name not in SIGNED:
            assert value >= 0, f"{where} is negative"
    elif isinstance(value, int) and not isinstance(value, bool):
        assert 0 <= value < 2**63, f"{where} = {value}"


def check_time(moment: datetime | None) -> None:
    assert moment is None or moment.utcoffset() == timedelta(0)


def parse(model: type[LimitOrder] | type[DcaOrder], text: str) -> LimitOrder | DcaOrder | None:
    try:
        return model.model_validate(loads_exact(text), context={"prefix": "panora"})
    except ValidationError:
        return None


@FUZZ
@given(st.data())
def test_an_order_record_parses_exactly_or_is_refused(data: st.DataObject) -> None:
    kind = data.draw(kinds)
    record = data.draw(order_records(kind))
    for units in ("human", "base"):
        raw = order_record_to_human(record) if units == "base" else record
        order = parse(DcaOrder if kind == "dca" else LimitOrder, dumps(raw))
        if order is None:
            continue
        check_exact(order)
        check_time(order.created_at)
        if isinstance(order, LimitOrder):
            check_time(order.expire_at)
        for detail in order.tx_details or ():
            check_time(detail.time_utc)
        # What the tracker does next never fails on a record the model accepted.
        digest = record_hash(order)
        assert digest == record_hash(order) and len(digest) == 64
        observation = observation_of(kind, order, WALLET, digest)
        assert observation.snapshot.order_id == order.order_id


@FUZZ
@given(price_records())
def test_a_price_record_parses_exactly_or_is_refused(record: dict[str, Any]) -> None:
    try:
        price = PriceRecord.model_validate(loads_exact(dumps(record)))
    except ValidationError:
        return
    check_exact(price)


@FUZZ
@given(swap_bodies())
@example(
    {
        "fromToken": {"address": "0x1::aptos_coin::AptosCoin", "decimals": 8, "current_price": "5"},
        "toToken": {"address": "0xbae2", "decimals": 6, "current_price": "1"},
        "fromTokenAmount": "10",
        "quotes": [],
    }
)
def test_a_swap_response_parses_exactly_or_is_refused(body: dict[str, Any]) -> None:
    try:
        swap = SwapResponseExactIn.model_validate(loads_exact(dumps(body)))
    except ValidationError:
        return
    check_exact(swap)
    if not swap.quotes:
        # The real API answers "no route" with `quotes: []` (wire decision 35).
        with pytest.raises(NoRoute):
            _ = swap.best
        return
    assert swap.best is swap.quotes[0]


@FUZZ
@given(st.one_of(junk, st.dictionaries(st.sampled_from(["svcTxId", "data", "txData"]), junk)))
def test_a_create_order_body_gives_an_id_or_none_and_txdata_or_a_validation_error(
    body: Any,
) -> None:
    result = OrderResult(raw=body if isinstance(body, dict) else {"data": body})
    assert result.order_id is None or (isinstance(result.order_id, str) and result.order_id)
    try:
        tx_data = result.tx_data
    except ValidationError:
        return
    assert tx_data is None or isinstance(tx_data.function, str)


# --- through the client, over loopback --------------------------------------------------------


@dataclass
class ApiRig:
    """The scripted API and one client per unit setting, on one event loop.

    In process (`httpx.ASGITransport`): the client's whole HTTP stack and parsing run, at
    ~1 ms per example instead of the ~45 ms a loopback socket costs (Nagle's algorithm
    meeting delayed ACKs: uvicorn's sockets are not TCP_NODELAY).
    """

    app: ScriptedApi
    runner: asyncio.Runner
    clients: dict[str, PanoraClient]

    def run(self, make: Callable[[PanoraClient], Awaitable[Any]], units: str = "human") -> Any:
        return self.runner.run(make(self.clients[units]))


@pytest.fixture(scope="module")
def api() -> Iterator[ApiRig]:
    app = ScriptedApi()
    with asyncio.Runner() as runner:
        clients = {units: runner.run(open_client(app, units)) for units in ("human", "base")}
        yield ApiRig(app, runner, clients)
        for c in clients.values():
            runner.run(c.aclose())


async def open_client(app: ScriptedApi, units: Literal["human", "base"]) -> PanoraClient:
    return PanoraClient(
        base_url="http://fuzz",
        transport=httpx.ASGITransport(app=app),
        api_key=SecretStr("fuzz-key-0123"),
        max_attempts=1,
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
        order_amount_units=units,
    )


def get_page(api: ApiRig, kind: str, units: str = "human") -> Any:
    request = GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE)
    return api.run(lambda c: c.get_orders("dca" if kind == "dca" else "limit", request), units)


@FUZZ
@given(st.data(), st.sampled_from(["human", "base"]))
def test_a_page_of_bad_records_keeps_the_good_ones_and_logs_the_rest(
    api: ApiRig, data: st.DataObject, units: str
) -> None:
    kind = data.draw(kinds)
    body = data.draw(order_pages(kind))
    api.app.handler = lambda method, path, request: (200, dumps(body))
    with structlog.testing.capture_logs() as logs:
        page = get_page(api, kind, units)
    assert len(page.orders) + len(page.rejected) == len(body["orders"])
    for order in page.orders:
        check_exact(order)
    logged = [e for e in logs if e["event"] == "api.record_rejected"]
    assert sorted(e["index"] for e in logged) == [r.index for r in page.rejected]
    assert all(r.error for r in page.rejected)


@FUZZ
@given(kinds, broken_bodies, st.sampled_from([200, 200, 404, 500, 429]))
def test_a_body_that_is_not_a_page_is_an_api_error_and_nothing_else(
    api: ApiRig, kind: str, body: Any, status: int
) -> None:
    api.app.handler = lambda method, path, request: (status, dumps(body))
    try:
        get_page(api, kind)
    except ApiError as exc:
        assert status != 200 or isinstance(exc, MalformedResponse)
    else:
        assert status == 200 and isinstance(body, dict) and isinstance(body.get("orders", []), list)


@FUZZ
@given(st.lists(st.one_of(price_records(), junk), max_size=6))
def test_a_price_list_keeps_the_good_records(api: ApiRig, records: list[Any]) -> None:
    api.app.handler = lambda method, path, request: (200, dumps(records))
    prices = api.run(lambda c: c.get_prices([APT, USDC]))
    assert len(prices.records) + len(prices.rejected) == len(records)
    for record in prices.records:
        check_exact(record)


@FUZZ
@given(swap_bodies())
@example({"fromToken": {}, "toToken": {}, "fromTokenAmount": "10", "quotes": []})
def test_a_swap_answer_is_a_quote_no_route_or_a_malformed_response(
    api: ApiRig, body: dict[str, Any]
) -> None:
    api.app.handler = lambda method, path, request: (200, dumps(body))
    request = SwapRequest(from_token=APT, to_token=USDC, from_amount=Decimal(10))
    try:
        swap = api.run(lambda c: c.quote(request))
    except NoRoute:
        assert body.get("quotes") == []  # the real API's "no route" (wire decision 35)
        return
    except MalformedResponse as exc:
        assert "does not match the spec" in str(exc)
        return
    check_exact(swap)


# --- the inputs that crashed or hung the client before (kept as plain examples) ---------------


@pytest.mark.parametrize(
    "value",
    [10**20, "99999999999999999999", "²", "0001-01-01T00:00:00+01:00", Decimal("1e999999999")],
)
def test_a_time_no_datetime_can_hold_is_absent_not_an_error(value: object) -> None:
    assert parse_wire_time(value) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("fromTokenAmount", RawJson("1e999999999")),
        ("fromTokenAmount", "1e-999999999"),
        ("rateToTokenPerFromToken", "1E+400"),
        ("numberOfOrdersCompleted", "1e999999999"),
        ("numberOfOrdersCompleted", 2**63),
        ("status", LONE_SURROGATE),
    ],
)
def test_a_record_with_an_unbounded_number_or_broken_text_is_refused(
    field: str, value: object
) -> None:
    record = {**LIMIT_RECORD, field: value}
    with pytest.raises(ValidationError):
        LimitOrder.model_validate(loads_exact(dumps(record)))


def test_base_units_with_absurd_decimals_are_left_for_the_model_to_judge() -> None:
    record = {**LIMIT_RECORD, "fromToken": {"address": APT, "decimals": 10**18}}
    assert order_record_to_human(record) == record
    huge = {**LIMIT_RECORD, "fromTokenAmount": "1e999999999"}
    assert order_record_to_human(huge)["fromTokenAmount"] == "1e999999999"


LIMIT_RECORD: dict[str, Any] = {
    "panoraTxId": "0xo1",
    "fromToken": {"address": APT, "decimals": 8},
    "toToken": {"address": USDC, "decimals": 6},
    "status": "active",
    "fromTokenAmount": "10",
    "rateToTokenPerFromToken": "6.5",
}
