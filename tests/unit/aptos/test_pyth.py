"""Pyth prices as the node's view answers them: exact, refused when malformed."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from bot.aptos.pyth import PythPriceError, parse_pyth_price, price_json


def answer(price: str = "523450000", expo: str = "8", negative: bool = False) -> list[Any]:
    return [
        {
            "price": {"negative": negative, "magnitude": price},
            "conf": "150000",
            "expo": {"negative": True, "magnitude": expo},
            "timestamp": "1764000000",
        }
    ]


def test_a_view_answer_reads_as_an_exact_usd_price() -> None:
    price = parse_pyth_price(answer())
    assert price.usd == Decimal("5.2345")
    assert price.confidence == Decimal("0.0015")
    assert price.timestamp == 1_764_000_000


def test_price_json_round_trips() -> None:
    parsed = parse_pyth_price([price_json(Decimal("0.99987"), Decimal("0.0002"), 7)])
    assert (parsed.usd, parsed.confidence, parsed.timestamp) == (
        Decimal("0.99987"),
        Decimal("0.0002"),
        7,
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "not a Price object"),
        (answer(negative=True), "not above zero"),
        (answer(price="0"), "not above zero"),
        (answer(price="1e9"), "price.magnitude is not a u64"),
        (answer(price=str(2**64)), "out of the u64 range"),
        (answer(expo="99"), "expo -99 is out of range"),
        ([{"price": 5}], "price is not an I64"),
    ],
)
def test_anything_else_is_refused(body: Any, message: str) -> None:
    with pytest.raises(PythPriceError, match=message):
        parse_pyth_price(body)
