from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from bot.api.errors import RequestRuleError
from bot.api.models import OrderFilter
from bot.api.params import (
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    LimitCreateRequest,
    SwapRequest,
    SwapVariant,
    check_slippage,
)

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "ab" * 32
BASE = SwapRequest(from_token=APT, to_token=USDC, from_amount=Decimal("1.5"))


def query(request: SwapRequest, variant: SwapVariant = "current", **kw: Any) -> dict[str, str]:
    kw.setdefault("with_tx_data", False)
    return dict(request.to_query(variant, **kw))


def assert_rule(field: str, call: Any) -> None:
    with pytest.raises(RequestRuleError) as info:
        call()
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


# --- swap -------------------------------------------------------------------------


def test_swap_exact_in_query() -> None:
    q = query(replace(BASE, chain_id=1))
    assert q == {
        "chainId": "1",
        "fromTokenAddress": APT,
        "toTokenAddress": USDC,
        "fromTokenAmount": "1.5",
    }
    assert BASE.exact_in is True


def test_swap_exact_out_query() -> None:
    request = SwapRequest(from_token=APT, to_token=USDC, to_amount=Decimal("10.50"))
    q = query(request)
    assert q["toTokenAmount"] == "10.5"
    assert "fromTokenAmount" not in q
    assert request.exact_in is False


@pytest.mark.parametrize(("from_amount", "to_amount"), [(None, None), (Decimal(1), Decimal(2))])
def test_swap_exactly_one_amount(from_amount: Decimal | None, to_amount: Decimal | None) -> None:
    request = SwapRequest(
        from_token=APT, to_token=USDC, from_amount=from_amount, to_amount=to_amount
    )
    assert_rule("fromTokenAmount/toTokenAmount", lambda: query(request))


@pytest.mark.parametrize("amount", [Decimal(0), Decimal(-1), Decimal("Infinity"), 1.5])
def test_swap_amount_must_be_positive_decimal(amount: Any) -> None:
    assert_rule("fromTokenAmount", lambda: query(replace(BASE, from_amount=amount)))


def test_swap_amount_written_without_exponent() -> None:
    assert query(replace(BASE, from_amount=Decimal("1E-8")))["fromTokenAmount"] == "0.00000001"


def test_swap_token_required() -> None:
    assert_rule("toTokenAddress", lambda: query(replace(BASE, to_token="  ")))


@pytest.mark.parametrize(
    ("value", "variant", "expected"),
    [
        ("auto", "current", "auto"),
        ("AUTO", "legacy", "auto"),
        (Decimal("0.57"), "current", "0.5"),
        (Decimal("0.57"), "legacy", "0.57"),
        (Decimal("0.555"), "legacy", "0.55"),
        (Decimal("0.599"), "current", "0.5"),
        ("1.99", "current", "1.9"),
        (Decimal(0), "current", "0"),
        (Decimal(100), "current", "100"),
        (Decimal("5.00"), "legacy", "5"),
    ],
)
def test_slippage_truncation(value: Any, variant: SwapVariant, expected: str) -> None:
    assert check_slippage(value, variant) == expected
    assert query(replace(BASE, slippage=value), variant)["slippagePercentage"] == expected


def test_slippage_absent_leaves_provider_default() -> None:
    assert check_slippage(None) is None
    assert "slippagePercentage" not in query(BASE)


@pytest.mark.parametrize("value", [Decimal("100.1"), Decimal("-0.1"), "abc", 0.5, "NaN"])
def test_slippage_out_of_range_or_not_exact(value: Any) -> None:
    assert_rule("slippagePercentage", lambda: check_slippage(value))


@pytest.mark.parametrize(
    ("fee", "variant", "expected"),
    [
        (Decimal("0.25"), "current", "0.2"),
        (Decimal("0.25"), "legacy", "0.25"),
        (Decimal("1.999"), "legacy", "1.99"),
        (Decimal(2), "current", "2"),
        (Decimal(0), "current", "0"),
    ],
)
def test_integrator_fee_percentage(fee: Decimal, variant: SwapVariant, expected: str) -> None:
    q = query(replace(BASE, integrator_fee_percentage=fee), variant)
    assert q["integratorFeePercentage"] == expected


@pytest.mark.parametrize("fee", [Decimal("2.01"), Decimal("-0.1")])
def test_integrator_fee_percentage_bounds(fee: Decimal) -> None:
    request = replace(BASE, integrator_fee_percentage=fee)
    assert_rule("integratorFeePercentage", lambda: query(request))


def test_integrator_fee_address() -> None:
    assert query(replace(BASE, integrator_fee_address=WALLET))["integratorFeeAddress"] == WALLET


@pytest.mark.parametrize("address", ["0x1", "0x" + "a" * 63, "0x" + "a" * 65, "0x" + "g" * 64])
def test_integrator_fee_address_must_be_64_hex(address: str) -> None:
    request = replace(BASE, integrator_fee_address=address)
    assert_rule("integratorFeeAddress", lambda: query(request))


# Real request forms, from @panoraexchange/swap-sdk dist/index.es.js (1.3.1 Quote.getQuote,
# and 1.0.8 the same): `excludeSources: excludeSources?.join(",")`,
# `includeSources: includeSources?.join(",")`, `includePools: includePools?.join(",")`,
# `maxHops, disableSplits` as given; booleans reach the query as axios writes them.


@pytest.mark.parametrize("variant", ["current", "legacy"])
def test_source_lists_are_comma_joined_as_every_sdk_sends_them(variant: SwapVariant) -> None:
    included = query(replace(BASE, include_sources=("Thala", "Hyperion")), variant)
    excluded = query(replace(BASE, exclude_sources=("Cellana",)), variant)
    assert included["includeSources"] == "Thala,Hyperion"
    assert excluded["excludeSources"] == "Cellana"


def test_include_and_exclude_sources_together_are_refused_as_the_sdk_does() -> None:
    # SDK 1.3.1 checkIncludeExcludeSources: "Only one of includeSources or excludeSources
    # can be provided at a time".
    both = replace(BASE, include_sources=("Thala",), exclude_sources=("Cellana",))
    assert_rule("includeSources/excludeSources", lambda: query(both))
    assert_rule("includeSources/excludeSources", lambda: query(both, "legacy"))


@pytest.mark.parametrize("variant", ["current", "legacy"])
def test_include_pools_in_both_variants(variant: SwapVariant) -> None:
    assert query(replace(BASE, include_pools=("0x1", "0x2")), variant)["includePools"] == "0x1,0x2"


def test_include_pools_at_most_ten() -> None:
    pools = tuple(f"0x{i:x}" for i in range(11))
    assert_rule("includePools", lambda: query(replace(BASE, include_pools=pools), "legacy"))
    q = query(replace(BASE, include_pools=pools[:10]), "legacy")
    assert q["includePools"] == ",".join(pools[:10])


def test_include_pools_with_comma_skipped_and_reported() -> None:
    comma_pool = "0x1::curves::LP<0x1::a::A, 0x1::b::B>"
    pools = (*(f"0x{i:x}" for i in range(10)), comma_pool)
    skipped: list[str] = []
    q = query(replace(BASE, include_pools=pools), "legacy", skipped_pools=skipped)
    assert skipped == [comma_pool]
    assert q["includePools"].split(",") == list(pools[:10])


@pytest.mark.parametrize("variant", ["current", "legacy"])
def test_only_direct_routes_in_both_variants(variant: SwapVariant) -> None:
    assert query(replace(BASE, only_direct_routes=True), variant)["onlyDirectRoutes"] == "true"
    direct = query(replace(BASE, only_direct_routes=False), variant)
    assert direct["onlyDirectRoutes"] == "false"


def test_current_route_controls_as_sdk_131_sends_them() -> None:
    request = replace(
        BASE, include_pools=("0x1",), only_direct_routes=False, max_hops=3, disable_splits=True
    )
    q = query(request, "current")
    assert (q["includePools"], q["onlyDirectRoutes"]) == ("0x1", "false")
    assert (q["maxHops"], q["disableSplits"]) == ("3", "true")
    assert query(replace(BASE, max_hops="max"))["maxHops"] == "max"
    assert "maxHops" not in query(BASE) and "disableSplits" not in query(BASE)


@pytest.mark.parametrize("hops", [0, 6, True, "2"])
def test_max_hops_is_one_to_five_or_max(hops: Any) -> None:
    assert_rule("maxHops", lambda: query(replace(BASE, max_hops=hops)))


def test_max_hops_and_disable_splits_are_current_only() -> None:
    assert_rule("maxHops", lambda: query(replace(BASE, max_hops=2), "legacy"))
    assert_rule("disableSplits", lambda: query(replace(BASE, disable_splits=True), "legacy"))


def test_to_wallet_required_with_tx_data() -> None:
    assert_rule("toWalletAddress", lambda: query(BASE, with_tx_data=True))
    assert query(replace(BASE, to_wallet=WALLET), with_tx_data=True)["toWalletAddress"] == WALLET
    assert "toWalletAddress" not in query(BASE, with_tx_data=False)


def test_to_wallet_must_start_with_0x() -> None:
    request = replace(BASE, to_wallet="ab" * 32)
    assert_rule("toWalletAddress", lambda: query(request, with_tx_data=True))


# --- DCA createOrder ---------------------------------------------------------------

DCA = DcaCreateRequest(
    chain_id=1,
    to_wallet=WALLET,
    from_token=USDC,
    to_token=APT,
    amount=Decimal("100.00"),
    amount_type="total",
    interval_value=1,
    interval_period="day",
    number_of_orders=4,
)


def test_dca_body_nested_json() -> None:
    assert DCA.to_body() == {
        "chainId": "1",
        "toWalletAddress": WALLET,
        "fromTokenAddress": USDC,
        "toTokenAddress": APT,
        "fromTokenAmount": {"value": "100", "type": "total"},
        "interval": {"value": "1", "timePeriod": "day"},
        "numberOfOrders": 4,
    }


def test_dca_body_optional_fields() -> None:
    body = replace(
        DCA,
        amount_type="perorder",
        min_rate=Decimal("0.1"),
        max_rate=Decimal("0.2"),
        delay_value=0,
        delay_period="hour",
        slippage=Decimal("0.57"),
    ).to_body()
    assert body["fromTokenAmount"] == {"value": "100", "type": "perorder"}
    assert body["minRateToTokenPerFromToken"] == "0.1"
    assert body["maxRateToTokenPerFromToken"] == "0.2"
    assert body["delay"] == {"value": "0", "timePeriod": "hour"}
    assert body["slippagePercentage"] == "0.5"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"interval_period": "fortnight"}, "interval.timePeriod"),
        ({"interval_value": 0}, "interval.value"),
        ({"number_of_orders": 0}, "numberOfOrders"),
        ({"number_of_orders": True}, "numberOfOrders"),
        ({"amount": Decimal(0)}, "fromTokenAmount.value"),
        ({"amount_type": "each"}, "fromTokenAmount.type"),
        ({"to_wallet": "wallet"}, "toWalletAddress"),
        ({"from_token": ""}, "fromTokenAddress"),
        ({"min_rate": Decimal(2), "max_rate": Decimal(1)}, "minRateToTokenPerFromToken"),
        ({"max_rate": Decimal(0)}, "maxRateToTokenPerFromToken"),
        ({"delay_value": 1}, "delay"),
        ({"delay_value": 1, "delay_period": "year"}, "delay.timePeriod"),
        ({"slippage": Decimal("100.1")}, "slippagePercentage"),
    ],
)
def test_dca_rules(change: dict[str, Any], field: str) -> None:
    request = replace(DCA, **change)
    assert_rule(field, request.to_body)


def test_dca_period_error_lists_allowed_values() -> None:
    with pytest.raises(RequestRuleError, match="minute, hour, day, week, month"):
        replace(DCA, interval_period="fortnight").to_body()


# --- limit createOrder -------------------------------------------------------------

LIMIT = LimitCreateRequest(
    chain_id=1,
    from_token=USDC,
    to_token=APT,
    from_wallet=WALLET,
    to_wallet=WALLET,
    amount=Decimal("50"),
    rate=Decimal("0.125"),
)


def test_limit_body_from_field_token_sends_exactly_the_docs_fields() -> None:
    body = LIMIT.to_body("token")
    assert body == {
        "chainId": "1",
        "fromWalletAddress": USDC,
        "toTokenAddress": APT,
        "toWalletAddress": WALLET,
        "fromTokenAmount": "50",
        "rateToTokenPerFromToken": "0.125",
    }


def test_limit_body_from_field_wallet_names_the_token_apart() -> None:
    body = LIMIT.to_body("wallet")
    assert body["fromWalletAddress"] == WALLET
    assert body["fromTokenAddress"] == USDC


def test_limit_body_slippage_and_expiry() -> None:
    body = replace(LIMIT, slippage="auto", expiry_value=7, expiry_period="day").to_body()
    assert body["slippagePercentage"] == "auto"
    assert body["expiry"] == {"value": "7", "timePeriod": "day"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"rate": Decimal(0)}, "rateToTokenPerFromToken"),
        ({"amount": Decimal(-5)}, "fromTokenAmount"),
        ({"expiry_value": 1}, "expiry"),
        ({"expiry_value": 0, "expiry_period": "day"}, "expiry.value"),
        ({"expiry_value": 1, "expiry_period": "decade"}, "expiry.timePeriod"),
        ({"slippage": Decimal(101)}, "slippagePercentage"),
        ({"from_wallet": "nope"}, "fromWalletAddress"),
    ],
)
def test_limit_rules(change: dict[str, Any], field: str) -> None:
    request = replace(LIMIT, **change)
    assert_rule(field, request.to_body)


# --- cancelOrder / getOrders -------------------------------------------------------


def test_cancel_body_uses_provider_prefix() -> None:
    request = CancelOrderRequest(order_id="0xabc", chain_id=1, to_wallet=WALLET)
    assert request.to_body("panora") == {
        "panoraTxId": "0xabc",
        "chainId": "1",
        "toWalletAddress": WALLET,
    }
    assert CancelOrderRequest(order_id="0xabc").to_body("svc") == {"svcTxId": "0xabc"}


def test_cancel_needs_order_id() -> None:
    assert_rule("panoraTxId", lambda: CancelOrderRequest(order_id=" ").to_body("panora"))


def test_get_orders_body() -> None:
    request = GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.COMPLETED)
    assert request.to_body("panora") == {
        "chainId": 1,
        "toWalletAddress": WALLET,
        "status": "completed",
        "txDetails": True,
        "limit": 50,
        "pageNumber": 1,
    }
    with_id = replace(request, order_id="0xabc", page_number=3, limit=10, tx_details=False)
    body = with_id.to_body("panora")
    assert body["panoraTxId"] == "0xabc"
    assert (body["pageNumber"], body["limit"], body["txDetails"]) == (3, 10, False)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"status": "filled"}, "status"),
        ({"limit": 0}, "limit"),
        ({"page_number": 0}, "pageNumber"),
        ({"wallet": ""}, "toWalletAddress"),
    ],
)
def test_get_orders_rules(change: dict[str, Any], field: str) -> None:
    request = replace(
        GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE), **change
    )
    assert_rule(field, lambda: request.to_body("panora"))


def test_get_orders_limit_has_an_upper_bound() -> None:
    from bot.api.params import MAX_PAGE_SIZE, GetOrdersRequest

    request = GetOrdersRequest(
        chain_id=1, wallet="0x" + "ab" * 32, status=OrderFilter.ACTIVE, limit=MAX_PAGE_SIZE + 1
    )
    with pytest.raises(RequestRuleError) as caught:
        request.to_body("panora")
    assert caught.value.field == "limit"


# --- rules shared with the paper service and the backtest (bot.order_rules) --------


def test_dca_rate_bounds_that_bound_nothing_are_left_out() -> None:
    # A minimum of 0 and a maximum of Infinity are what the service reads as no bound
    # (and shows for an absent one): the body leaves them out rather than refusing.
    body = replace(DCA, min_rate=Decimal(0), max_rate=Decimal("Infinity")).to_body()
    assert "minRateToTokenPerFromToken" not in body
    assert "maxRateToTokenPerFromToken" not in body


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"min_rate": Decimal("Infinity")}, "cannot be Infinity"),
        ({"min_rate": Decimal(-1)}, "must not be negative"),
        ({"max_rate": Decimal("NaN")}, "must be a number"),
    ],
)
def test_dca_rate_bounds_refused_as_the_service_refuses(change: dict[str, Any], words: str) -> None:
    with pytest.raises(RequestRuleError, match=words):
        replace(DCA, **change).to_body()


def test_dca_slippage_has_no_auto() -> None:
    assert_rule("slippagePercentage", replace(DCA, slippage="auto").to_body)  # type: ignore[arg-type]


def test_with_the_decimals_amounts_are_held_to_base_units_before_sending() -> None:
    # USDC has 6 decimals: 0.0000001 is below one base unit; 0.000003 USDC in total is
    # 3 base units, too few for 4 orders. Without the decimals only "above 0" is checked.
    tiny = replace(DCA, amount=Decimal("0.0000001"))
    assert tiny.to_body()["fromTokenAmount"]["value"] == "0.0000001"
    assert_rule("fromTokenAmount.value", replace(tiny, from_decimals=6).to_body)
    few = replace(DCA, amount=Decimal("0.000003"), from_decimals=6)
    with pytest.raises(RequestRuleError, match="too small to split into numberOfOrders"):
        few.to_body()
    assert replace(few, amount_type="perorder").to_body()["fromTokenAmount"]["value"] == "0.000003"
    limit = replace(LIMIT, amount=Decimal("0.0000001"), from_decimals=6)
    assert_rule("fromTokenAmount", limit.to_body)
    assert replace(limit, amount=Decimal("0.000001")).to_body()["fromTokenAmount"] == "0.000001"


def test_whole_numbers_refuse_floats_and_accept_ints() -> None:
    assert_rule("numberOfOrders", replace(DCA, number_of_orders=4.0).to_body)  # type: ignore[arg-type]
    assert replace(DCA, number_of_orders=7).to_body()["numberOfOrders"] == 7
