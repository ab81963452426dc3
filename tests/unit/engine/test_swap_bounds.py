"""A swap's own bounds: exact, rounded against loosening, from the reference not the quote."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bot.aptos.tokens import Token
from bot.engine.swap_bounds import (
    SwapLimits,
    bounds_exact_in,
    bounds_exact_out,
    quote_deviation,
)

APT = Token(symbol="APT", decimals=8, coin_type="0x1::aptos_coin::AptosCoin", fa_address="0xa")
USDC = Token(symbol="USDC", decimals=6, coin_type=None, fa_address="0x" + "bb" * 32)


def test_exact_in_minimum_is_the_reference_less_the_tolerance_rounded_up() -> None:
    # 1 APT at 5.25 USDC: 5.25 USDC = 5_250_000 units; 4% less = 5_040_000.
    bounds = bounds_exact_in(10**8, Decimal("5.25"), APT, USDC, Decimal(4))
    assert bounds.sell_amount == 10**8
    assert bounds.reference == 5_250_000
    assert bounds.min_out == 5_040_000
    # A fraction of a unit rounds the minimum up (stricter), never down.
    odd = bounds_exact_in(3, Decimal("0.5"), USDC, USDC, Decimal(0))
    assert (odd.reference, odd.min_out) == (1, 2)


def test_exact_out_maximum_is_the_reference_plus_the_tolerance_rounded_down() -> None:
    # Buy 10 USDC at 5 USDC per APT: 2 APT reference, 4% more = 2.08 APT.
    bounds = bounds_exact_out(10 * 10**6, Decimal(5), APT, USDC, Decimal(4))
    assert bounds.min_out == 10 * 10**6
    assert bounds.reference == 2 * 10**8
    assert bounds.sell_amount == 208_000_000
    odd = bounds_exact_out(1, Decimal(3), USDC, USDC, Decimal(0))
    assert (odd.reference, odd.sell_amount) == (1, 0)  # 1/3 unit: reference up, maximum down


def test_tolerance_is_deviation_plus_slippage_never_above_the_risk_maximum() -> None:
    limits = SwapLimits(Decimal(3), Decimal(1))
    assert limits.tolerance(None) == 4
    assert limits.tolerance(Decimal("0.5")) == Decimal("3.5")
    assert limits.tolerance(Decimal(50)) == 4


@pytest.mark.parametrize(
    ("quoted", "reference", "expected"),
    [(97, 100, Decimal(-3)), (110, 100, Decimal(10)), (100, 100, Decimal(0)), (5, 0, 100)],
)
def test_quote_deviation_is_exact_and_signed(
    quoted: int, reference: int, expected: Decimal
) -> None:
    assert quote_deviation(quoted, reference) == expected
