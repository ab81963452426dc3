"""The spec's request rules (`bot.order_rules`), one by one: what each accepts, how it
normalises, and the field and words of each refusal."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from bot import order_rules as rules
from bot.order_rules import RuleError

D = Decimal


def refused(call: Any, *args: Any, **kwargs: Any) -> RuleError:
    with pytest.raises(RuleError) as info:
        call(*args, **kwargs)
    error = info.value
    assert isinstance(error, ValueError)  # every caller that catches ValueError sees it
    return error


def test_a_rule_error_reads_as_one_sentence_and_keeps_field_and_message_apart() -> None:
    error = RuleError("fromTokenAmount", "must be a positive amount, got 0")
    assert (error.field, error.message) == ("fromTokenAmount", "must be a positive amount, got 0")
    assert str(error) == "fromTokenAmount must be a positive amount, got 0"
    worded = RuleError("a", "b", sentence="Only one of a or b")
    assert (str(worded), worded.message) == ("Only one of a or b", "b")


# --- amounts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"), [(D("1.5"), D("1.5")), ("10", D(10)), (3, D(3)), (" 0.1 ", D("0.1"))]
)
def test_positive_amount_reads_decimals_ints_and_text(value: Any, expected: Decimal) -> None:
    assert rules.positive_amount("fromTokenAmount", value) == expected


@pytest.mark.parametrize(
    "value", [D(0), D(-1), "0", "-3", "abc", None, 1.5, True, D("NaN"), D("Infinity"), "1e999"]
)
def test_positive_amount_refuses_what_is_not_a_positive_exact_amount(value: Any) -> None:
    error = refused(rules.positive_amount, "fromTokenAmount", value)
    assert error.field == "fromTokenAmount"


def test_positive_amount_shows_what_it_was_given() -> None:
    assert str(refused(rules.positive_amount, "f", D(-3))) == "f must be a positive amount, got -3"
    assert str(refused(rules.positive_amount, "f", "x")) == "f must be a positive amount, got 'x'"


def test_base_units_round_down_to_the_decimals_and_need_one_unit() -> None:
    assert rules.base_units("fromTokenAmount", D("1.234567899"), 8, "APT") == 123456789
    assert rules.base_units("fromTokenAmount", "0.00000001", 8, "APT") == 1
    error = refused(rules.base_units, "fromTokenAmount", D("0.000000009"), 8, "APT")
    assert str(error) == "fromTokenAmount is smaller than one base unit of APT"


def test_base_units_refuse_more_than_a_u64() -> None:
    assert rules.base_units("v", D(2**64 - 1), 0, "X") == 2**64 - 1
    assert "u64" in refused(rules.base_units, "v", D(2**64 - 1), 1, "X").message
    assert refused(rules.base_units, "v", D(2**64), 0, "X").field == "v"


def test_a_huge_exponent_is_refused_before_any_arithmetic() -> None:
    assert refused(rules.base_units, "v", "1e999999999", 8, "APT").field == "v"


def test_amount_type_is_total_or_perorder() -> None:
    assert rules.amount_type("total") == "total" and rules.amount_type("perorder") == "perorder"
    assert refused(rules.amount_type, "each").field == "fromTokenAmount.type"


def test_a_total_must_make_one_base_unit_per_order() -> None:
    rules.split(4, 4, "total")
    rules.split(1, 4, "perorder")
    error = refused(rules.split, 3, 4, "total")
    assert error.field == "fromTokenAmount.value" and "numberOfOrders" in error.message


# --- whole numbers and periods ----------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [(4, 4), ("4", 4), (D("4.0"), 4), (" 7 ", 7)])
def test_whole_number_reads_ints_text_and_exact_json_numbers(value: Any, expected: int) -> None:
    assert rules.whole_number("numberOfOrders", value) == expected


@pytest.mark.parametrize("value", [0, -1, True, False, 1.0, D("1.5"), "many", None, "Infinity"])
def test_whole_number_refuses_the_rest(value: Any) -> None:
    error = refused(rules.whole_number, "numberOfOrders", value)
    assert error.message.startswith("must be a whole number ≥ 1, got ")


def test_whole_number_bounds() -> None:
    assert rules.whole_number("delay.value", 0, minimum=0) == 0
    assert rules.whole_number("limit", 1000, 1, rules.MAX_PAGE_SIZE) == 1000
    assert str(refused(rules.whole_number, "limit", 1001, 1, 1000)) == (
        "limit must be at most 1000, got 1001"
    )
    assert "at most" in refused(rules.whole_number, "n", "1e999999999").message


def test_period_pairs_a_whole_value_with_a_time_period() -> None:
    assert rules.period("interval", "2", "day") == (2, "day")
    assert rules.period("delay", 0, "minute", minimum=0) == (0, "minute")
    assert refused(rules.period, "delay", 1, None).field == "delay"
    assert refused(rules.period, "expiry", None, "day").field == "expiry"
    assert refused(rules.period, "expiry", 0, "day").field == "expiry.value"
    error = refused(rules.period, "interval", 1, "fortnight")
    assert str(error) == (
        "interval.timePeriod must be one of minute, hour, day, week, month, got 'fortnight'"
    )


# --- rates ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (None, None, (None, None)),
        (D("0.1"), D("0.2"), (D("0.1"), D("0.2"))),
        (D(0), D("Infinity"), (None, None)),
        ("0", "Infinity", (None, None)),
        ("", "", (None, None)),
        (D(2), D(2), (D(2), D(2))),
    ],
)
def test_rate_bounds_where_0_and_infinity_bound_nothing(
    low: Any, high: Any, expected: tuple[Decimal | None, Decimal | None]
) -> None:
    assert rules.rate_bounds(low, high) == expected


@pytest.mark.parametrize(
    ("low", "high", "field", "words"),
    [
        (D("Infinity"), None, "minRateToTokenPerFromToken", "cannot be Infinity"),
        ("infinity", None, "minRateToTokenPerFromToken", "cannot be Infinity"),
        (D(-1), None, "minRateToTokenPerFromToken", "must not be negative"),
        (None, D("-Infinity"), "maxRateToTokenPerFromToken", "must not be negative"),
        (D("NaN"), None, "minRateToTokenPerFromToken", "must be a number"),
        (None, "abc", "maxRateToTokenPerFromToken", "must be a number"),
        (None, 0.5, "maxRateToTokenPerFromToken", "must be a number"),
        (None, D(0), "maxRateToTokenPerFromToken", "must be positive"),
        (D(2), D(1), "minRateToTokenPerFromToken", "must not exceed"),
    ],
)
def test_rate_bounds_refusals(low: Any, high: Any, field: str, words: str) -> None:
    error = refused(rules.rate_bounds, low, high)
    assert error.field == field and words in error.message


@pytest.mark.parametrize("value", [D(0), D(-2), D("Infinity"), D("NaN"), None, "", "x"])
def test_a_limit_rate_is_a_finite_number_above_0(value: Any) -> None:
    assert refused(rules.limit_rate, value).field == "rateToTokenPerFromToken"
    assert rules.limit_rate("1000") == D(1000) and rules.limit_rate(D("0.125")) == D("0.125")


# --- percentages ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (D("0.57"), 1, D("0.5")),
        ("0.57", 2, D("0.57")),
        (D("0.599"), 1, D("0.5")),
        ("100", 1, D(100)),
        (0, 1, D(0)),
        ("AUTO", 1, "auto"),
        (" auto ", 2, "auto"),
        (None, 1, None),
        ("", 1, None),
    ],
)
def test_slippage_auto_or_0_to_100_truncated(value: Any, digits: int, expected: Any) -> None:
    assert rules.slippage(value, digits) == expected


@pytest.mark.parametrize("value", [D("100.1"), D("-0.1"), "abc", 0.5, "NaN", True])
def test_slippage_outside_0_to_100_or_inexact_is_refused(value: Any) -> None:
    error = refused(rules.slippage, value)
    assert error.field == "slippagePercentage"
    assert error.message.startswith("must be between 0 and 100, got ")


def test_a_dca_slippage_has_no_auto() -> None:
    assert rules.dca_slippage(D("1.25")) == D("1.2") and rules.dca_slippage(None) is None
    assert refused(rules.dca_slippage, "auto").field == "slippagePercentage"


def test_integrator_fee_is_a_percentage_up_to_2() -> None:
    fee = rules.INTEGRATOR_FEE_MAX
    assert rules.percentage("integratorFeePercentage", "1.999", fee, 2) == D("1.99")
    assert refused(rules.percentage, "integratorFeePercentage", "2.01", fee).message == (
        "must be between 0 and 2, got 2.01"
    )


def test_places_by_swap_variant() -> None:
    assert (rules.places("current"), rules.places("legacy")) == (1, 2)


# --- addresses and route controls -------------------------------------------------------------


def test_addresses() -> None:
    assert rules.hex_address("toWalletAddress", "0xab") == "0xab"
    for bad in ("ab" * 32, "0x", None, 5):
        assert refused(rules.hex_address, "toWalletAddress", bad).field == "toWalletAddress"
    assert rules.fee_address("0x" + "12" * 32) == "0x" + "12" * 32
    for bad in ("0x12", "0x" + "g" * 64, "0x" + "ab" * 33, None):
        assert refused(rules.fee_address, bad).field == "integratorFeeAddress"


def test_sources_never_together_in_the_sdks_words() -> None:
    rules.one_of_sources("Thala", None)
    rules.one_of_sources(None, ("Cellana",))
    error = refused(rules.one_of_sources, "Thala", "Cellana")
    assert error.field == "includeSources/excludeSources"
    assert str(error) == "Only one of includeSources or excludeSources can be provided at a time"


def test_route_controls() -> None:
    rules.include_pools(10)
    assert str(refused(rules.include_pools, 11)) == "includePools accepts at most 10 pools, got 11"
    assert [rules.max_hops(v) for v in (1, 5, "max")] == ["1", "5", "max"]
    for bad in (0, 6, True, "2", None):
        assert refused(rules.max_hops, bad).field == "maxHops"


@pytest.mark.parametrize("rate", [D("1e999999"), D("1e-999999999"), D("1e41"), "1e-41"])
def test_a_rate_no_market_has_is_refused_before_anything_is_written(rate: Any) -> None:
    error = refused(rules.limit_rate, rate)
    assert error.field == "rateToTokenPerFromToken" and "out of range" in str(error)
    assert len(str(error)) < 200
    assert refused(rules.rate_bounds, None, rate).field == "maxRateToTokenPerFromToken"


def test_an_amount_below_any_token_is_refused_and_errors_stay_one_short_line() -> None:
    assert "smaller than any token amount" in str(refused(rules.positive_amount, "a", D("1e-41")))
    assert str(refused(rules.positive_amount, "a", "-5\n")) == "a must be a positive amount, got -5"
    long = str(refused(rules.positive_amount, "a", "x" * 1000))
    assert "\n" not in long and len(long) < 120 and long.endswith("…")
    assert rules.limit_rate(D("1e40")) == D("1e40") and rules.limit_rate("1e-40") == D("1e-40")
