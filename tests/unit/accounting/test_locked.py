"""Funds locked in open orders: exact per-token sums, valued at the moment asked."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from bot.accounting.locked import OpenOrder, locked_funds
from bot.accounting.prices import PriceBook, PricePoint

T0 = datetime(2026, 5, 1, tzinfo=UTC)
T1 = datetime(2026, 5, 2, tzinfo=UTC)
BOOK = PriceBook.of_points(
    {"USDC": [PricePoint(T0, Decimal("0.9998"))], "APT": [PricePoint(T1, Decimal("5.1"))]}
)


def test_open_orders_sum_per_token_and_are_valued_at_the_moment() -> None:
    orders = [
        OpenOrder("dca", "0xa", "dca:1", "USDC", Decimal("75")),
        OpenOrder("ladder", "0xa", "limit:2", "USDC", Decimal("0.000001")),
        OpenOrder("tp", "0xa", "limit:3", "APT", Decimal("2.5")),
        OpenOrder("ladder", "0xa", "limit:4", "USDC", Decimal("0")),
    ]
    usdc, apt = locked_funds(orders, BOOK, T0)
    assert (usdc.token, usdc.amount, usdc.orders) == ("USDC", Decimal("75.000001"), 3)
    assert usdc.usd == Decimal("75.000001") * Decimal("0.9998")  # exact: 74.9850009998
    assert usdc.usd == Decimal("74.9850009998")
    assert (apt.amount, apt.orders, apt.usd) == (Decimal("2.5"), 1, None)  # no APT price yet
    assert locked_funds(orders, BOOK, T1)[1].usd == Decimal("12.75")


def test_a_negative_or_float_amount_is_refused_naming_the_order() -> None:
    with pytest.raises(ValueError, match="limit:9"):
        OpenOrder("s", "0xa", "limit:9", "USDC", Decimal("-1"))
    with pytest.raises(ValueError, match="limit:9"):
        OpenOrder("s", "0xa", "limit:9", "USDC", 1.5)  # type: ignore[arg-type]
    assert locked_funds([], BOOK, T0) == []
