from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from bot.journal.codec import decode_json, encode_json, raw_hash


def test_decimals_and_times_round_trip_exactly() -> None:
    value = {
        "amount": Decimal("0.000000000000000001"),
        "cap": Decimal("Infinity"),
        "units": 2**128 - 1,
        "when": datetime(2026, 1, 1, 9, tzinfo=timezone(timedelta(hours=9))),
        "nested": [Decimal("1.50"), {"ok": True, "none": None}],
        "tuple": (1, "a"),
    }
    text = encode_json(value)
    assert '"amount":{"$decimal":"0.000000000000000001"}' in text
    back = decode_json(text)
    assert back["amount"] == Decimal("0.000000000000000001")
    assert isinstance(back["amount"], Decimal)
    assert back["cap"] == Decimal("Infinity")
    assert back["units"] == 2**128 - 1
    assert back["when"] == datetime(2026, 1, 1, tzinfo=UTC)
    assert back["nested"] == [Decimal("1.5"), {"ok": True, "none": None}]
    assert back["tuple"] == [1, "a"]


def test_canonical_text_ignores_key_order() -> None:
    assert encode_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert raw_hash({"b": 1, "a": [1]}) == raw_hash({"a": [1], "b": 1})
    assert raw_hash({"a": 1}) != raw_hash({"a": 2})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"a": 0.1}, r"\$\.a: float"),
        ({"a": [Decimal("NaN")]}, r"\$\.a\[0\]: NaN"),
        ({"$decimal": "1"}, "reserved"),
        ({1: "x"}, "not a string"),
        ({"t": datetime(2026, 1, 1)}, "naive"),
        ({"s": {1, 2}}, "cannot store set"),
    ],
)
def test_refused_values_name_their_path(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        encode_json(value)


def test_decoding_a_float_is_refused() -> None:
    with pytest.raises(ValueError, match="float"):
        decode_json('{"a": 1.5}')
