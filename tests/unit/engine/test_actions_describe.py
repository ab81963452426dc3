"""`describe(action)`: the line every output prints for an action, prices in one convention."""

from __future__ import annotations

from decimal import Decimal

from bot.aptos.tokens import Token, TokenBook
from bot.engine.actions import (
    DEFAULT_CONVENTION,
    CancelLimit,
    CreateDca,
    CreateLimit,
    Swap,
    describe,
)
from bot.price_view import PriceConvention

APT_COIN = "0x1::aptos_coin::AptosCoin"
USDC_FA = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def test_a_limit_buying_apt_reads_as_a_buy_at_most_the_inverted_rate() -> None:
    action = CreateLimit(
        key="k", sell="USDC", buy="APT", amount=Decimal(25), rate=Decimal("0.2028")
    )
    assert describe(action) == "create limit: buy APT with 25 USDC at ≤ 4.931 USDC per APT"


def test_a_limit_selling_apt_reads_as_a_sell_at_least_the_rate() -> None:
    action = CreateLimit(
        key="k",
        sell="APT",
        buy="USDC",
        amount=Decimal("1.5"),
        rate=Decimal("5.003"),
        expiry_value=1,
        expiry_period="day",
    )
    assert describe(action) == (
        "create limit: sell 1.5 APT for USDC at ≥ 5.003 USDC per APT, expires after 1 day"
    )


def test_the_convention_argument_changes_the_quote_and_names_tokens() -> None:
    action = CreateLimit(key="k", sell=USDC_FA, buy=APT_COIN, amount=Decimal(25), rate=Decimal(4))
    book = TokenBook([Token(8, "APT", coin_type=APT_COIN), Token(6, "USDC", fa_address=USDC_FA)])
    assert describe(action, PriceConvention(book=book)) == (
        "create limit: buy APT with 25 USDC at ≤ 0.25 USDC per APT"
    )
    assert describe(action, PriceConvention(["APT"], book)) == (
        "create limit: sell 25 USDC for APT at ≥ 4 APT per USDC"
    )
    # Without a book the default convention names tokens as the action gives them.
    assert describe(action) == describe(action, DEFAULT_CONVENTION)
    assert f"{USDC_FA} for {APT_COIN}" in describe(action)


def test_a_dca_says_its_price_bounds_in_the_convention() -> None:
    plain = CreateDca(
        key="k",
        sell="USDC",
        buy="APT",
        amount=Decimal(25),
        amount_type="perorder",
        orders=4,
        interval_value=1,
        interval_period="day",
    )
    assert describe(plain) == "create DCA: 25 USDC per order → APT, 4 orders every 1 day"
    bounded = CreateDca(
        key="k",
        sell="USDC",
        buy="APT",
        amount=Decimal(100),
        orders=4,
        interval_value=1,
        interval_period="day",
        min_rate=Decimal("0.18"),  # at least 0.18 APT per USDC: at most 5.556 USDC per APT
        max_rate=Decimal("0.25"),  # at most 0.25 APT per USDC: at least 4 USDC per APT
    )
    assert describe(bounded) == (
        "create DCA: 100 USDC in total → APT, 4 orders every 1 day, "
        "only at ≤ 5.556 USDC per APT and ≥ 4 USDC per APT"
    )
    unbounded = CreateDca(
        key="k",
        sell="USDC",
        buy="APT",
        amount=Decimal(100),
        orders=4,
        interval_value=1,
        interval_period="day",
        max_rate=Decimal("Infinity"),
    )
    assert "only at" not in describe(unbounded)


def test_swaps_and_cancels_are_unchanged() -> None:
    assert describe(Swap(key="k", sell="USDC", buy="APT", sell_amount=Decimal(10))) == (
        "swap: sell 10 (USDC → APT)"
    )
    assert describe(CancelLimit(key="k", order_id="0xab")) == "cancel limit order 0xab"
