"""`bot.price_view`: one way to show a price, exact, with bounds that stay true."""

from __future__ import annotations

from decimal import Decimal, localcontext

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from bot.aptos.tokens import Token, TokenBook
from bot.config import Settings
from bot.price_view import (
    DEFAULT_PRICE_QUOTE,
    Price,
    PriceConvention,
    amounts_text,
    common_unit,
    measured_price_text,
    percent_text,
    round_significant,
    usd_text,
)

APT_COIN = "0x1::aptos_coin::AptosCoin"
USDC_FA = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
LZ_USDC = "0xf22bede237a07e121b56d91a491eb7bcdfd1f5907926a9e58338f964a01b17fa::asset::USDC"
WETH = "0x" + "ee" * 32
ZRO = "0x" + "11" * 32
BOOK = TokenBook(
    [
        Token(8, "APT", coin_type=APT_COIN, fa_address="0xa", provider_symbol="APT"),
        Token(6, "USDC", fa_address=USDC_FA, provider_symbol="USDC"),
        Token(6, "USDC", coin_type=LZ_USDC, provider_symbol="lzUSDC"),
        Token(8, "WETH", fa_address=WETH),
    ]
)


def test_a_limit_buying_apt_with_usdc_is_shown_in_usdc_per_apt_with_the_bound_flipped() -> None:
    # Sell 25 USDC for at least 0.2028 APT per USDC = pay at most 1/0.2028 = 4.93096… USDC.
    price = PriceConvention().of_rate(Decimal("0.2028"), got="APT", paid="USDC", bound="min")
    assert price == Price(Decimal("4.931"), "USDC", "APT", "≤")
    assert str(price) == "≤ 4.931 USDC per APT"
    assert isinstance(price.value, Decimal)


def test_a_limit_selling_apt_for_usdc_keeps_its_rate_and_its_bound() -> None:
    price = PriceConvention().of_rate(Decimal("5.003"), got="USDC", paid="APT", bound="min")
    assert str(price) == "≥ 5.003 USDC per APT"
    # A ceiling ("max") on the same rate reads the other way round.
    ceiling = PriceConvention().of_rate(Decimal("5.003"), got="USDC", paid="APT", bound="max")
    assert str(ceiling) == "≤ 5.003 USDC per APT"
    inverted = PriceConvention().of_rate(Decimal("0.2028"), got="APT", paid="USDC", bound="max")
    assert inverted == Price(Decimal("4.930"), "USDC", "APT", "≥")  # floor: 4.93096… → 4.930
    assert str(inverted) == "≥ 4.93 USDC per APT"


def test_an_exact_inverse_is_shown_exactly() -> None:
    prices = PriceConvention()
    assert prices.of_rate(Decimal("0.2"), got="APT", paid="USDC") == Price(
        Decimal(5), "USDC", "APT"
    )
    assert prices.of_rate(Decimal("0.0032"), got="APT", paid="USDC", bound="min") == Price(
        Decimal("312.5"), "USDC", "APT", "≤"
    )
    assert prices.of_rate(Decimal("1000"), got="USDC", paid="APT") == Price(
        Decimal(1000), "USDC", "APT"
    )


def test_digits_follow_the_rate_at_least_four_at_most_ten() -> None:
    prices = PriceConvention()
    one_digit = prices.of_rate(Decimal("3"), got="APT", paid="USDC")
    assert one_digit is not None and one_digit.value == Decimal("0.3333")  # half-even, 4 digits
    assert str(prices.of_rate(Decimal("3"), got="APT", paid="USDC", bound="min")) == (
        "≤ 0.3334 USDC per APT"
    )
    assert str(prices.of_rate(Decimal("3"), got="APT", paid="USDC", bound="max")) == (
        "≥ 0.3333 USDC per APT"
    )
    precise = prices.of_rate(Decimal("0.20281234"), got="APT", paid="USDC", bound="min")
    assert precise is not None and precise.value == Decimal("4.9306665")  # 4.930666…: 8 digits, up
    long = prices.of_rate(Decimal("0.2028123456789012"), got="APT", paid="USDC")
    assert long is not None and len(long.value.as_tuple().digits) == 10


@given(
    st.decimals(
        min_value=Decimal("1e-12"), max_value=Decimal("1e12"), allow_nan=False, places=14
    ).filter(lambda d: d > 0),
    st.sampled_from(["min", "max"]),
)
def test_a_shown_bound_is_true_of_the_order_or_names_its_very_rate(
    rate: Decimal, bound: str
) -> None:
    """Rounded outward (an order that takes at least `rate` APT per USDC never pays more
    than the shown `≤` price), unless a number as short names the same rate at the rate's
    own precision; never further from the truth than a unit of its last digit."""
    price = PriceConvention().of_rate(
        rate, got="APT", paid="USDC", bound="min" if bound == "min" else "max"
    )
    assert price is not None and price.unit == "USDC per APT"
    with localcontext() as ctx:
        ctx.prec = 100
        product = price.value * rate  # shown USDC per APT × APT per USDC, exactly
        exact = 1 / rate
        back = 1 / price.value
    precision = len(rate.normalize().as_tuple().digits)
    same_rate = round_significant(back, precision) == rate
    if bound == "min":
        assert price.relation == "≤" and (product >= 1 or same_rate)
    else:
        assert price.relation == "≥" and (product <= 1 or same_rate)
    shown_digits = len(price.value.normalize().as_tuple().digits)
    assert shown_digits <= min(max(precision, 4), 10)
    assert abs(price.value - exact) < Decimal(1).scaleb(exact.adjusted() - shown_digits + 1)


def test_a_rate_computed_as_an_inverse_shows_the_number_it_came_from() -> None:
    prices = PriceConvention()
    with localcontext() as ctx:
        ctx.prec = 12  # as the limit ladder computes its rungs
        rung = 1 / Decimal("4.9")
    assert rung == Decimal("0.204081632653")
    assert str(prices.of_rate(rung, got="APT", paid="USDC", bound="min")) == ("≤ 4.9 USDC per APT")
    # The outward-rounded number wins where it names the rate too.
    assert str(prices.of_rate(Decimal("0.2028"), got="APT", paid="USDC", bound="min")) == (
        "≤ 4.931 USDC per APT"
    )
    odd = prices.of_rate(Decimal("0.20408163265306122449"), got="APT", paid="USDC", bound="min")
    assert odd is not None and odd.value == Decimal("4.9")  # 4.9 names it at 20 digits
    # A rate no short number names: the outward-rounded 10 digits.
    truncated = prices.of_rate(Decimal("0.2040816326"), got="APT", paid="USDC", bound="min")
    assert truncated is not None and truncated.value == Decimal("4.900000002")  # 4.90000000176…


def test_an_average_from_amounts_is_quoted_the_same_way_whatever_the_direction() -> None:
    prices = PriceConvention()
    bought = prices.of_amounts(Decimal(25), "USDC", Decimal("4.99"), "APT")
    sold = prices.of_amounts(Decimal("4.99"), "APT", Decimal(25), "USDC")
    assert bought == sold == Price(Decimal("5.010"), "USDC", "APT")
    assert bought is not None and bought.number == "5.01"
    many = prices.of_amounts(Decimal(20), "USDC", Decimal("3.98396738"), "APT")
    assert many is not None and many.value == Decimal("5.02012")  # 6 digits for a measure
    assert prices.of_amounts(Decimal(0), "USDC", Decimal(1), "APT") is None
    assert prices.of_amounts(Decimal(1), "USDC", Decimal(0), "APT") is None


def test_a_bound_that_limits_nothing_is_no_price() -> None:
    prices = PriceConvention()
    assert prices.of_rate(Decimal("Infinity"), got="APT", paid="USDC", bound="max") is None
    assert prices.of_rate(Decimal(0), got="APT", paid="USDC", bound="min") is None
    assert prices.of_rate(Decimal(-1), got="APT", paid="USDC") is None


def test_the_preference_list_decides_and_is_case_insensitive() -> None:
    assert PriceConvention().unit("apt", "usdc") == "usdc per apt"
    assert PriceConvention().quote_of("APT", "USDT") == "USDT"
    apt_first = PriceConvention(["APT", "USDC"])
    assert str(apt_first.of_rate(Decimal("0.2"), got="APT", paid="USDC")) == "0.2 APT per USDC"
    assert apt_first.quote_of("usdc", "apt") == "apt"


def test_unknown_pairs_are_quoted_stably_by_name() -> None:
    prices = PriceConvention()
    assert prices.quote_of("WETH", "ZRO") == prices.quote_of("ZRO", "WETH") == "WETH"
    assert prices.unit("ZRO", "WETH") == prices.unit("WETH", "ZRO") == "WETH per ZRO"
    a = prices.of_rate(Decimal(4), got="ZRO", paid="WETH", bound="min")
    b = prices.of_rate(Decimal("0.25"), got="WETH", paid="ZRO", bound="max")
    assert str(a) == str(b) == "≤ 0.25 WETH per ZRO"


def test_ties_are_broken_by_name_then_identity() -> None:
    # USDt and USDT are both listed: the same rank once compared without case.
    prices = PriceConvention(["usdt"])
    assert prices.quote_of("USDT", "USDt") == prices.quote_of("USDt", "USDT") == "USDT"
    # Two unknown addresses: by their (shortened) names, then identities.
    assert prices.quote_of(ZRO, WETH) == prices.quote_of(WETH, ZRO) == ZRO


def test_the_book_matches_addresses_to_symbols_and_tells_bridged_copies_apart() -> None:
    prices = PriceConvention(book=BOOK)
    assert prices.quote_of(APT_COIN, USDC_FA) == USDC_FA
    assert prices.unit(APT_COIN, USDC_FA) == "USDC per APT"
    assert prices.label("0xa") == "APT" and prices.label(LZ_USDC) == "lzUSDC"
    # lzUSDC's on-chain symbol is USDC, but the listed "USDC" is native USDC: APT wins.
    assert prices.rank(LZ_USDC) is None
    assert prices.quote_of(LZ_USDC, APT_COIN) == APT_COIN
    # A preference given as an address matches the token however it is named.
    address, rest = LZ_USDC.split("::", 1)
    by_address = PriceConvention(["0x" + address[2:].upper() + "::" + rest], book=BOOK)
    assert by_address.rank("lzUSDC") == 0 and by_address.rank(USDC_FA) is None
    # No book: a coin type is named in full, or shortened for tables.
    assert PriceConvention().label(WETH) == WETH
    assert PriceConvention(short_names=True).label(WETH) == WETH[:10] + "…"


def test_round_significant() -> None:
    assert round_significant(Decimal("9.9995"), 4, "ROUND_CEILING") == Decimal(10)
    assert round_significant(Decimal("0.000123456"), 3) == Decimal("0.000123")
    assert round_significant(Decimal("123456"), 2) == Decimal("1.2E+5")
    assert round_significant(Decimal(5), 4) == Decimal(5)
    assert round_significant(Decimal(0), 4) == 0
    with pytest.raises(ValueError):
        round_significant(Decimal(1), 0)


def test_common_unit() -> None:
    assert common_unit(["USDC per APT", "USDC per APT"]) == "USDC per APT"
    assert common_unit(["USDC per APT", "APT per WETH"]) is None
    assert common_unit([]) is None


def test_display_settings_default_and_validation() -> None:
    assert Settings().display.price_quote == list(DEFAULT_PRICE_QUOTE)
    assert Settings(display={"price_quote": [" APT "]}).display.price_quote == ["APT"]
    with pytest.raises(ValidationError, match="not a token symbol"):
        Settings(display={"price_quote": ["USDC", " "]})


def test_usd_figures_round_half_to_even_and_a_zero_has_no_minus_sign() -> None:
    assert usd_text(Decimal("1234.505")) == "1,234.50 USD"
    assert usd_text(Decimal("-0.635"), signed=True) == "-0.64 USD"
    assert usd_text(Decimal("1.2"), signed=True) == "+1.20 USD"
    # A loss of less than half a cent (the gas of an order's creation) shows as nothing lost.
    assert usd_text(Decimal("-0.0045")) == "0.00 USD"
    assert usd_text(Decimal("-0.0045"), signed=True) == "+0.00 USD"
    assert usd_text(None) == "n/a"


def test_percents_and_measured_prices() -> None:
    assert percent_text(Decimal("0.3649")) == "+0.36 %"
    assert percent_text(Decimal("-1.175")) == "-1.18 %"
    assert percent_text(Decimal("-0.001")) == "+0.00 %"
    assert measured_price_text(Decimal("5.0243512")) == "5.02435"
    assert measured_price_text(None) == "n/a"


def test_amounts_are_exact_and_named_by_the_convention() -> None:
    prices = PriceConvention(book=BOOK)
    sums = {USDC_FA: Decimal("10.50"), APT_COIN: Decimal("1.25000000")}
    assert amounts_text(sums, prices) == "10.5 USDC, 1.25 APT"
    assert amounts_text({}, prices) == "-"
    assert amounts_text({}, prices, none="nothing") == "nothing"
