"""The signer's slippage check allows the provider's rounding of the minimum to base units.

Found by the chaos harness (bench/chaos_kill.py): a strategy whose slippage equals
`[risk].max_slippage_percent` had every swap refused, because the provider's minimum
(expected × (1 − slippage), rounded down to a whole base unit) lies a fraction of a unit
more than the limit below the expected amount.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from bot.chain.errors import PolicyRefused
from harness.paper_chain import default_policy, router_txdata, swap_intent


@pytest.mark.parametrize(
    ("limit", "expected", "minimum"),
    [
        (Decimal("5"), 19_269, 18_305),  # 19269 × 0.95 = 18305.55, rounded down
        (Decimal("1"), 99_385_128, 98_391_276),  # a paper-world swap: × 0.99 = …276.72
    ],
)
def test_a_minimum_at_the_limit_rounded_down_is_accepted(
    limit: Decimal, expected: int, minimum: int
) -> None:
    policy = default_policy(max_slippage_percent=limit)
    policy.check_call(router_txdata(), swap_intent(min_out=minimum, expected_out=expected))


@pytest.mark.parametrize(
    ("limit", "expected", "minimum"),
    [(Decimal("5"), 19_269, 18_304), (Decimal("1"), 99_385_128, 98_391_275)],
)
def test_one_base_unit_lower_is_refused(limit: Decimal, expected: int, minimum: int) -> None:
    policy = default_policy(max_slippage_percent=limit)
    with pytest.raises(PolicyRefused, match="more than"):
        policy.check_call(router_txdata(), swap_intent(min_out=minimum, expected_out=expected))
