from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.money import (
    MoneyError,
    format_decimal,
    from_base_units,
    loads_exact,
    parse_decimal,
    to_base_units,
    to_base_units_down,
    truncate_places,
)


def test_loads_exact_fractions_become_decimal_ints_stay_int() -> None:
    data = loads_exact('{"a": 0.1, "b": 10, "c": 1e-18, "d": [2.50, "3.3"]}')
    assert type(data["a"]) is Decimal and data["a"] == Decimal("0.1")
    assert type(data["b"]) is int and data["b"] == 10
    assert data["c"] == Decimal("1E-18")
    assert data["d"] == [Decimal("2.50"), "3.3"]


def test_loads_exact_accepts_bytes() -> None:
    assert loads_exact(b'{"x": 0.3}') == {"x": Decimal("0.3")}


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_loads_exact_rejects_non_json_numbers(literal: str) -> None:
    with pytest.raises(ValueError, match="non-JSON number"):
        loads_exact(f'{{"x": {literal}}}')


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("10.5", Decimal("10.5")),
        (" 0.000000000000000001 ", Decimal("1E-18")),
        (10, Decimal(10)),
        (Decimal("2.5"), Decimal("2.5")),
        ("-3", Decimal(-3)),
        (2**128 - 1, Decimal(2**128 - 1)),
    ],
)
def test_parse_decimal_accepts(value: object, expected: Decimal) -> None:
    assert parse_decimal(value) == expected


@pytest.mark.parametrize(
    "value", [0.1, 1.0, True, False, "abc", "", "NaN", "sNaN", Decimal("NaN"), None, [1]]
)
def test_parse_decimal_rejects(value: object) -> None:
    with pytest.raises(MoneyError):
        parse_decimal(value, field="amount")


def test_parse_decimal_error_names_field() -> None:
    with pytest.raises(MoneyError, match=r"^fromTokenAmount: "):
        parse_decimal(0.5, field="fromTokenAmount")


def test_parse_decimal_infinity_only_when_allowed() -> None:
    with pytest.raises(MoneyError):
        parse_decimal("Infinity")
    assert parse_decimal("Infinity", allow_infinity=True).is_infinite()
    with pytest.raises(MoneyError):
        parse_decimal("-Infinity", allow_infinity=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("1.50"), "1.5"),
        (Decimal("1E+2"), "100"),
        (Decimal("1E-18"), "0.000000000000000001"),
        (Decimal("0"), "0"),
        (Decimal("0.000"), "0"),
        (Decimal("-0"), "0"),
        (Decimal("-2.500"), "-2.5"),
        (Decimal("100"), "100"),
        (Decimal("Infinity"), "Infinity"),
    ],
)
def test_format_decimal(value: Decimal, expected: str) -> None:
    assert format_decimal(value) == expected


@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [
        (Decimal("0.57"), 1, Decimal("0.5")),
        (Decimal("0.555"), 2, Decimal("0.55")),
        (Decimal("0.599"), 0, Decimal("0")),
        (Decimal("-0.57"), 1, Decimal("-0.5")),
        (Decimal("5"), 2, Decimal("5.00")),
        (
            Decimal("123456789012345678901234567890.129"),
            2,
            Decimal("123456789012345678901234567890.12"),
        ),
    ],
)
def test_truncate_places_toward_zero(value: Decimal, places: int, expected: Decimal) -> None:
    result = truncate_places(value, places)
    assert result == expected
    assert str(result) == str(expected)


@pytest.mark.parametrize(
    ("amount", "decimals", "units"),
    [
        (Decimal("10.5"), 8, 1_050_000_000),
        (Decimal("0.000000000000000001"), 18, 1),
        (Decimal("25"), 6, 25_000_000),
        (Decimal("1.10"), 1, 11),
        (Decimal(0), 8, 0),
        (Decimal(2**128 - 1), 0, 2**128 - 1),
    ],
)
def test_to_base_units_exact(amount: Decimal, decimals: int, units: int) -> None:
    assert to_base_units(amount, decimals) == units


def test_from_base_units_exact() -> None:
    assert from_base_units(123456, 6) == Decimal("0.123456")
    assert from_base_units(1, 18) == Decimal("0.000000000000000001")
    big = from_base_units(2**128 - 1, 18)
    assert format_decimal(big) == "340282366920938463463.374607431768211455"
    assert to_base_units(big, 18) == 2**128 - 1


@pytest.mark.parametrize(
    ("amount", "decimals"),
    [(Decimal("0.1234567"), 6), (Decimal("1.5"), 0), (Decimal("1E-19"), 18)],
)
def test_to_base_units_rejects_too_many_decimals(amount: Decimal, decimals: int) -> None:
    with pytest.raises(MoneyError, match="decimal places"):
        to_base_units(amount, decimals)


@pytest.mark.parametrize("amount", [Decimal(-1), Decimal("Infinity"), Decimal("NaN")])
def test_to_base_units_rejects_non_amounts(amount: Decimal) -> None:
    with pytest.raises(MoneyError):
        to_base_units(amount, 8)


@pytest.mark.parametrize("units", [1.0, True, "100", Decimal(100)])
def test_from_base_units_needs_int(units: object) -> None:
    with pytest.raises(MoneyError):
        from_base_units(units, 8)  # type: ignore[arg-type]


@given(units=st.integers(min_value=0, max_value=2**256), decimals=st.integers(0, 30))
def test_base_units_round_trip(units: int, decimals: int) -> None:
    human = from_base_units(units, decimals)
    assert to_base_units(human, decimals) == units
    assert to_base_units(parse_decimal(format_decimal(human)), decimals) == units


def test_to_base_units_down_drops_digits_beyond_the_tokens_decimals() -> None:
    assert to_base_units_down(Decimal("1.23456789"), 6) == 1_234_567
    assert to_base_units_down(Decimal("0.0000009"), 6) == 0
    assert to_base_units_down(Decimal("1" + "0" * 40 + ".5"), 0) == 10**40  # beyond 28 digits
    assert to_base_units_down(Decimal("1E+40"), 6) == 10**46  # one digit, 41 before the point
