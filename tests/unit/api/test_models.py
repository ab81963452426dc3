from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel, ValidationError

from bot.api.errors import NoRoute
from bot.api.models import (
    DCA_STATUSES,
    LIMIT_STATUSES,
    DcaOrder,
    Interval,
    LimitOrder,
    OrderFilter,
    OrderResult,
    OrderToken,
    PriceRecord,
    SwapResponseExactIn,
    SwapResponseExactOut,
    TxDetail,
    parse_wire_time,
)
from bot.api.wire import unprefix_keys
from bot.domain import OrderStatus
from bot.money import loads_exact
from tests.support.fixtures import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES
TXDATA_FIXTURE = FIXTURES / "aptos" / "panora_router_entry_txdata.json"
M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], text: str) -> M:
    return model.model_validate(loads_exact(text), context={"prefix": "panora"})


def txdata_fixture() -> dict[str, Any]:
    assert TXDATA_FIXTURE.is_file(), f"missing fixture {TXDATA_FIXTURE}"
    data: dict[str, Any] = json.loads(TXDATA_FIXTURE.read_text())
    return data


# --- 2.1 price record ---------------------------------------------------------------


def test_price_record_strings() -> None:
    rec = parse(
        PriceRecord,
        """{"chainId": 1, "panoraId": "apt-1", "tokenAddress": "0x1::aptos_coin::AptosCoin",
        "faAddress": "0xa", "name": "Aptos Coin", "symbol": "APT", "decimals": 8,
        "panoraSymbol": "APT", "usdPrice": "8.123456789", "nativePrice": "1",
        "priceChange24H": "-3.25", "panoraUI": true, "panoraTags": ["Native", "Verified"]}""",
    )
    assert rec.usd_price == Decimal("8.123456789")
    assert rec.native_price == Decimal("1")
    assert rec.price_change_24h == Decimal("-3.25")
    assert rec.svc_id == "apt-1"
    assert rec.svc_symbol == "APT"
    assert rec.svc_ui is True
    assert rec.svc_tags == ["Native", "Verified"]
    assert rec.decimals == 8


def test_price_record_numbers_are_exact_decimals() -> None:
    rec = parse(
        PriceRecord,
        '{"decimals": "6", "usdPrice": 0.1, "nativePrice": 12, "priceChange24H": -0.07}',
    )
    assert isinstance(rec.usd_price, Decimal)
    assert rec.usd_price == Decimal("0.1")
    assert rec.native_price == Decimal(12)
    assert rec.price_change_24h == Decimal("-0.07")
    assert rec.decimals == 6


def test_price_record_null_usd_price_stays_none() -> None:
    rec = parse(PriceRecord, '{"decimals": 8, "usdPrice": null}')
    assert rec.usd_price is None


@pytest.mark.parametrize(
    ("raw", "expected"), [("true", True), ('"true"', True), ('"false"', False)]
)
def test_price_record_ui_flag_bool_or_text(raw: str, expected: bool) -> None:
    rec = parse(PriceRecord, f'{{"decimals": 8, "panoraUI": {raw}}}')
    assert rec.svc_ui is expected


def test_price_record_reads_svc_and_panora_tag_spellings() -> None:
    svc = parse(PriceRecord, '{"decimals": 8, "svcTags": ["Banned"]}')
    panora = parse(PriceRecord, '{"decimals": 8, "panoraTags": ["Banned"]}')
    text = parse(PriceRecord, '{"decimals": 8, "panoraTags": "Meme, Verified"}')
    assert svc.svc_tags == panora.svc_tags == ["Banned"]
    assert text.svc_tags == ["Meme", "Verified"]


def test_price_record_keeps_unknown_fields() -> None:
    rec = parse(PriceRecord, '{"decimals": 8, "logoUrl": "https://x/apt.svg", "newField": 0.5}')
    assert rec.model_extra == {"logoUrl": "https://x/apt.svg", "newField": Decimal("0.5")}
    assert rec.unknown_fields == ["logoUrl", "newField"]


def test_price_record_requires_decimals() -> None:
    with pytest.raises(ValidationError):
        parse(PriceRecord, '{"symbol": "APT"}')


# --- 2.2 / 2.5 order parts ----------------------------------------------------------


def test_order_token() -> None:
    tok = parse(OrderToken, '{"address": "0xa", "symbol": "APT", "decimals": 8, "name": "Aptos"}')
    assert (tok.address, tok.symbol, tok.decimals, tok.name) == ("0xa", "APT", 8, "Aptos")


def test_interval_value_as_text_or_number() -> None:
    assert parse(Interval, '{"value": "7", "timePeriod": "day"}') == Interval(
        value=7, timePeriod="day"
    )
    assert parse(Interval, '{"value": 2, "timePeriod": "fortnight"}').time_period == "fortnight"


TX_DETAIL = """{"txId": "0xfeed", "txNumber": 2, "type": "filled", "attemptNumber": 1,
 "fromTokenAmount": "25", "fromTokenAmountUSD": "25.01", "toTokenAmount": 3.125,
 "toTokenAmountUSD": null, "feeTokenAmount": "0.01", "feeTokenAmountUSD": "0.01",
 "time": %s, "priceFromTokenPerToToken": "8", "priceToTokenPerFromToken": "0.125",
 "keeperWalletAddress": "0x5"}"""


def test_tx_detail_limit_variant_iso_time() -> None:
    detail = parse(TxDetail, TX_DETAIL % '"2024-05-01T12:00:00Z"')
    assert detail.keeper_wallet_address == "0x5"
    assert detail.to_token_amount == Decimal("3.125")
    assert detail.to_token_amount_usd is None
    assert detail.price_to_token_per_from_token == Decimal("0.125")
    assert detail.time_utc == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert detail.dedup_key == ("0xfeed", 2)


def test_tx_detail_epoch_seconds_time() -> None:
    detail = parse(TxDetail, TX_DETAIL % "1714564800")
    assert detail.time_utc == datetime(2024, 5, 1, 12, tzinfo=UTC)


# --- 2.3 DCA order ------------------------------------------------------------------

TOKENS = """"fromToken": {"address": "0xbae2", "symbol": "USDC", "decimals": 6, "name": "USDC"},
 "toToken": {"address": "0xa", "symbol": "APT", "decimals": 8, "name": "Aptos Coin"},
 "feeToken": {"address": "0xbae2", "symbol": "USDC", "decimals": 6, "name": "USDC"}"""


def dca_json(**override: Any) -> dict[str, Any]:
    data: dict[str, Any] = loads_exact(
        "{"
        + TOKENS
        + """, "panoraTxId": "dca-1",
 "fromTokenAmountTotal": "100", "fromTokenAmountSpent": 0.1, "fromTokenAmountBalance": "99.9",
 "fromTokenAmountWithdrawn": "0", "toTokenAmountWithdrawn": "0.0125",
 "numberOfOrdersTotal": 4, "fromTokenAmountPerOrder": "25", "numberOfOrdersRemaining": 3,
 "numberOfOrdersCompleted": 1, "interval": {"value": "1", "timePeriod": "day"},
 "createdAtTime": "2024-05-01T00:00:00Z", "nextOrderTime": "2024-05-02T00:00:00Z",
 "estimatedCompletionTime": "2024-05-04T00:00:00Z",
 "avgPriceFromTokenPerToToken": "8", "avgPriceToTokenPerFromToken": "0.125",
 "minRateToTokenPerFromToken": "0.1", "maxRateToTokenPerFromToken": "Infinity",
 "status": "active", "platformId": "panora", "slippagePercentage": "0.5",
 "delay": {"value": "2", "timePeriod": "hour"}, "txDetails": []}"""
    )
    data.update(override)
    return data


def validate_dca(data: dict[str, Any]) -> DcaOrder:
    return DcaOrder.model_validate(data, context={"prefix": "panora"})


def test_dca_order_all_fields() -> None:
    order = validate_dca(dca_json())
    assert order.order_id == "dca-1"
    assert order.from_token.decimals == 6
    assert order.to_token.symbol == "APT"
    assert order.fee_token is not None and order.fee_token.address == "0xbae2"
    assert order.from_token_amount_total == Decimal("100")
    assert order.from_token_amount_balance == Decimal("99.9")
    assert order.to_token_amount_withdrawn == Decimal("0.0125")
    assert order.from_token_amount_per_order == Decimal("25")
    assert (order.number_of_orders_total, order.number_of_orders_remaining) == (4, 3)
    assert order.number_of_orders_completed == 1
    assert order.interval == Interval(value=1, timePeriod="day")
    assert order.delay == Interval(value=2, timePeriod="hour")
    assert order.created_at == datetime(2024, 5, 1, tzinfo=UTC)
    assert order.avg_price_to_token_per_from_token == Decimal("0.125")
    assert order.min_rate_to_token_per_from_token == Decimal("0.1")
    assert order.platform_id == "panora"
    assert order.slippage_percentage == Decimal("0.5")
    assert order.tx_details == []
    assert order.is_final is False


def test_dca_order_amounts_are_exact_decimals_never_float() -> None:
    order = validate_dca(dca_json())
    assert type(order.from_token_amount_spent) is Decimal
    assert order.from_token_amount_spent == Decimal("0.1")
    for value in order.model_dump().values():
        assert not isinstance(value, float)


def test_dca_order_infinity_max_rate() -> None:
    rate = validate_dca(dca_json()).max_rate_to_token_per_from_token
    assert rate is not None and rate.is_infinite() and rate > 0


def test_dca_order_accepts_svc_spelling() -> None:
    data = dca_json()
    data["svcTxId"] = data.pop("panoraTxId")
    assert validate_dca(data).order_id == "dca-1"


def test_dca_order_unknown_status_parses() -> None:
    order = validate_dca(dca_json(status="paused"))
    assert order.status == "paused"
    assert order.status not in DCA_STATUSES
    assert order.is_final is False


def test_dca_order_filled_is_final() -> None:
    assert validate_dca(dca_json(status="filled")).is_final is True


def test_dca_order_missing_id_rejected() -> None:
    data = dca_json()
    del data["panoraTxId"]
    with pytest.raises(ValidationError, match="svcTxId"):
        validate_dca(data)


def test_dca_order_empty_id_rejected() -> None:
    with pytest.raises(ValidationError, match="order id is empty"):
        validate_dca(dca_json(panoraTxId="  "))


@pytest.mark.parametrize("field", ["fromTokenAmountTotal", "fromTokenAmountSpent"])
def test_dca_order_negative_amount_rejected(field: str) -> None:
    with pytest.raises(ValidationError, match="negative"):
        validate_dca(dca_json(**{field: "-1"}))


def test_dca_order_negative_rate_rejected() -> None:
    with pytest.raises(ValidationError, match="negative"):
        validate_dca(dca_json(minRateToTokenPerFromToken="-0.1"))


def test_dca_order_with_tx_details() -> None:
    detail = loads_exact(TX_DETAIL % '"2024-05-01T12:00:00Z"')
    order = validate_dca(dca_json(txDetails=[detail]))
    assert order.tx_details is not None
    assert order.tx_details[0].from_token_amount == Decimal("25")


# --- 2.4 limit order ----------------------------------------------------------------


def test_limit_order_partially_filled() -> None:
    order = parse(
        LimitOrder,
        "{"
        + TOKENS
        + """, "panoraTxId": "lim-1", "createdAtTime": "2024-05-01T00:00:00+02:00",
 "status": "partially_filled", "expireAtTime": "2024-06-01T00:00:00Z",
 "fromTokenAmount": "50", "rateToTokenPerFromToken": 0.13, "fromTokenAmountSpent": "20",
 "fromTokenAmountBalance": "30", "fromTokenAmountWithdrawn": "0",
 "toTokenAmountWithdrawn": "2.6", "numberOfOrdersCompleted": 1,
 "avgPriceFromTokenPerToToken": "7.69", "avgPriceToTokenPerFromToken": "0.13",
 "slippagePercentage": "0.5", "txDetails": [%s]}"""
        % (TX_DETAIL % '"2024-05-01T12:00:00Z"'),
    )
    assert order.status == "partially_filled"
    assert order.status in LIMIT_STATUSES
    assert order.is_final is False
    assert order.from_token_amount == Decimal("50")
    assert order.rate_to_token_per_from_token == Decimal("0.13")
    assert order.expire_at == datetime(2024, 6, 1, tzinfo=UTC)
    assert order.created_at == datetime(2024, 4, 30, 22, tzinfo=UTC)
    assert order.tx_details is not None
    assert order.tx_details[0].keeper_wallet_address == "0x5"


# --- 2.6 swap -----------------------------------------------------------------------

HOP = """{"percentage": 100, "dexName": "Thala", "aggregatorName": "panora",
 "fromToken": {"tokenType": "0x1::aptos_coin::AptosCoin", "name": "Aptos", "symbol": "APT",
   "decimals": 8},
 "toToken": {"tokenType": "0xbae2", "name": "USDC", "symbol": "USDC", "decimals": 6}}"""
FEE_TOKEN = '{"tokenType": "0xbae2", "name": "USDC", "symbol": "USDC", "decimals": 6}'
TOKEN_INFO = """"fromToken": {"address": "0x1::aptos_coin::AptosCoin", "decimals": 8,
  "current_price": "8.1"},
 "toToken": {"address": "0xbae2", "decimals": 6, "current_price": "1.0001"}"""


def exact_in_text(amount: str, to_amount: str, tx_data: str) -> str:
    return (
        "{"
        + TOKEN_INFO
        + f""", "fromTokenAmount": {amount}, "fromTokenAmountUSD": null,
 "quotes": [{{"toTokenAmount": {to_amount}, "priceImpact": "-0.02",
   "slippagePercentage": 0.5, "feeAmount": "0", "feeAmountUSD": "0", "feeToken": {FEE_TOKEN},
   "minToTokenAmount": "8.06", "toTokenAmountUSD": null, "txData": {tx_data},
   "route": [{{"percentage": 100, "routeTaken": [[{HOP}, {HOP}]]}}]}}]}}"""
    )


@pytest.mark.parametrize(("amount", "to_amount"), [('"1"', '"8.1"'), ("1", "8.1")])
def test_swap_exact_in_strings_or_numbers(amount: str, to_amount: str) -> None:
    resp = parse(SwapResponseExactIn, exact_in_text(amount, to_amount, "null"))
    assert resp.from_token_amount == Decimal(1)
    assert resp.from_token_amount_usd is None
    assert resp.from_token.current_price == Decimal("8.1")
    assert resp.to_token.decimals == 6
    best = resp.best
    assert best.to_token_amount == Decimal("8.1")
    assert best.min_to_token_amount == Decimal("8.06")
    assert best.price_impact == Decimal("-0.02")
    assert best.slippage_percentage == Decimal("0.5")
    assert best.to_token_amount_usd is None
    assert best.fee_token is not None and best.fee_token.symbol == "USDC"
    assert best.tx_data is None


def test_swap_exact_in_route_hops() -> None:
    resp = parse(SwapResponseExactIn, exact_in_text('"1"', '"8.1"', "null"))
    assert resp.best.route is not None
    route = resp.best.route[0]
    assert route.percentage == Decimal(100)
    assert len(route.route_taken) == 1 and len(route.route_taken[0]) == 2
    hop = route.route_taken[0][0]
    assert hop.dex_name == "Thala"
    assert hop.aggregator_name == "panora"
    assert hop.from_token is not None and hop.from_token.token_type == "0x1::aptos_coin::AptosCoin"
    assert hop.to_token is not None and hop.to_token.decimals == 6


def test_swap_tx_data_real_fixture_preserved_exactly() -> None:
    fixture_text = TXDATA_FIXTURE.read_text()
    resp = parse(SwapResponseExactIn, exact_in_text('"1"', '"8.1"', fixture_text))
    tx_data = resp.best.tx_data
    assert tx_data is not None
    expected = txdata_fixture()
    assert tx_data.as_json() == expected
    assert tx_data.function.endswith("::panora_swap::router_entry")
    assert len(tx_data.type_arguments) == 32
    assert tx_data.arguments[0] is None
    assert tx_data.arguments[12] is None
    assert tx_data.arguments[5] == [[["40"]], [["11"]], [["11"]]]


def test_swap_without_quotes_parses_and_best_says_no_route() -> None:
    # `quotes: []` is the real "no route" answer (SDK 1.3.1 dist/index.es.js, Swap.swap:
    # "No routes present"): it parses, and asking for the best quote is NoRoute.
    text = "{" + TOKEN_INFO + ', "fromTokenAmount": "1", "quotes": []}'
    response = parse(SwapResponseExactIn, text)
    with pytest.raises(NoRoute, match=r"no route for 1 0x1::aptos_coin::AptosCoin → 0xbae2"):
        _ = response.best


# SDK 1.3.1 (@panoraexchange/swap-sdk 1.3.1, dist/types/resources/type.d.ts,
# MaxToTokenSwap): a top-level `feeToken` {address, name, symbol, decimals, current_price}
# and `quotes[].feeTokenAmount` / `feeTokenAmountUSD`; values here are made up, the keys,
# nesting and JSON types are the SDK's.
SDK_131_EXACT_IN = """{
 "fromToken": {"address": "0xa", "name": "Aptos Coin", "symbol": "APT", "decimals": 8,
   "current_price": "4.61"},
 "toToken": {"address": "0xbae2", "name": "USDC", "symbol": "USDC", "decimals": 6,
   "current_price": "0.9999"},
 "feeToken": {"address": "0xbae2", "name": "USDC", "symbol": "USDC", "decimals": 6,
   "current_price": "0.9999"},
 "fromTokenAmount": "1", "fromTokenAmountUSD": "4.61",
 "quotes": [{"toTokenAmount": "4.6", "priceImpact": "0.01", "slippagePercentage": "0.5",
   "minToTokenAmount": "4.577", "toTokenAmountUSD": "4.6", "feeTokenAmount": "0.0046",
   "feeTokenAmountUSD": "0.0046"}]}"""


def test_sdk_131_fee_fields_name_the_fee_token() -> None:
    response = parse(SwapResponseExactIn, SDK_131_EXACT_IN)
    best = response.best
    assert best.fee == Decimal("0.0046") and best.fee_usd == Decimal("0.0046")
    assert best.fee_amount is None and best.fee_token is None  # the older names are absent
    fee_token = response.fee_token_of(best)
    assert fee_token is not None and fee_token.symbol == "USDC"  # not the sold token
    assert fee_token.identity == "0xbae2" and fee_token.current_price == Decimal("0.9999")
    assert response.from_token.symbol == "APT"


def test_older_fee_fields_still_read() -> None:
    # SDK 1.0.8 (dist/types/resources/type.d.ts): per-quote feeAmount + feeToken {tokenType}.
    response = parse(SwapResponseExactIn, exact_in_text('"1"', '"8.1"', "null"))
    best = response.best
    assert best.fee == Decimal(0)
    fee_token = response.fee_token_of(best)
    assert fee_token is not None and fee_token.identity == "0xbae2"


@pytest.mark.parametrize(
    ("from_amount", "max_from", "slippage", "fee"),
    [('"8.1"', '"8.15"', '"0.5"', '"0"'), ("8.1", "8.15", "0.5", "0")],
)
def test_swap_exact_out_strings_or_numbers(
    from_amount: str, max_from: str, slippage: str, fee: str
) -> None:
    text = (
        "{"
        + TOKEN_INFO
        + f""", "toTokenAmount": "1", "toTokenAmountUSD": "8.1",
 "quotes": [{{"fromTokenAmount": {from_amount}, "maxFromTokenAmount": {max_from},
   "slippagePercentage": {slippage}, "feeAmount": {fee}, "feeToken": {FEE_TOKEN},
   "priceImpact": null, "fromTokenAmountUSD": null, "feeAmountUSD": "0",
   "route": [{{"percentage": "100", "routeTokens": [{FEE_TOKEN}],
               "routeTaken": [[{HOP}]]}}]}}]}}"""
    )
    resp = parse(SwapResponseExactOut, text)
    assert resp.to_token_amount == Decimal(1)
    assert resp.to_token_amount_usd == Decimal("8.1")
    best = resp.best
    assert best.from_token_amount == Decimal("8.1")
    assert best.max_from_token_amount == Decimal("8.15")
    assert best.slippage_percentage == Decimal("0.5")
    assert best.fee_amount == Decimal(0)
    assert best.price_impact is None
    assert best.from_token_amount_usd is None
    assert best.route is not None
    assert best.route[0].route_tokens is not None
    assert best.route[0].route_tokens[0].symbol == "USDC"


# --- createOrder / cancelOrder bodies -----------------------------------------------


def order_result(text: str) -> OrderResult:
    return OrderResult(raw=unprefix_keys(loads_exact(text), "panora"))


def test_order_result_id_from_panora_tx_id() -> None:
    assert order_result('{"panoraTxId": "0xabc"}').order_id == "0xabc"


def test_order_result_id_from_nested_data() -> None:
    assert order_result('{"data": {"panoraTxId": "0xdef"}}').order_id == "0xdef"
    assert order_result('{"data": {"orderId": 42}}').order_id == "42"


def test_order_result_without_id() -> None:
    assert order_result('{"ok": true}').order_id is None
    assert order_result('{"panoraTxId": ""}').order_id is None


def test_order_result_tx_data_present_and_absent() -> None:
    result = order_result(
        '{"panoraTxId": "x", "data": {"txData": ' + TXDATA_FIXTURE.read_text() + "}}"
    )
    assert result.tx_data is not None
    assert result.tx_data.as_json() == txdata_fixture()
    assert order_result('{"panoraTxId": "x"}').tx_data is None


# --- times and filters --------------------------------------------------------------

NOON = datetime(2024, 5, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        "2024-05-01T12:00:00Z",
        "2024-05-01T14:00:00+02:00",
        "2024-05-01T12:00:00",
        1714564800,
        "1714564800",
        1714564800000,
        Decimal(1714564800000),
    ],
)
def test_parse_wire_time(value: object) -> None:
    parsed = parse_wire_time(value)
    assert parsed == NOON
    assert parsed is not None and parsed.utcoffset() is not None


@pytest.mark.parametrize("value", ["garbage", "", None, True, ["2024"], "2024-13-45"])
def test_parse_wire_time_garbage_is_none(value: object) -> None:
    assert parse_wire_time(value) is None


def test_order_filter_values_kept_apart_from_statuses() -> None:
    assert {f.value for f in OrderFilter} == {"active", "completed"}
    assert "completed" not in DCA_STATUSES | LIMIT_STATUSES
    assert all(type(s) is OrderStatus for s in DCA_STATUSES | LIMIT_STATUSES)
    assert not any(isinstance(s, OrderFilter) for s in DCA_STATUSES | LIMIT_STATUSES)
