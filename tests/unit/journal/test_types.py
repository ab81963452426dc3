from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, Table, insert, select, text
from sqlalchemy.exc import StatementError

from bot.journal.db import make_engine
from bot.journal.types import BigIntText, DecimalText, UtcDateTime, decimal_text

U128_MAX = 2**128 - 1
ATTO = Decimal("0.000000000000000001")

metadata = MetaData()
values = Table(
    "t",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("amount", DecimalText()),
    Column("units", BigIntText()),
    Column("at", UtcDateTime()),
)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'types.db'}")
    metadata.create_all(engine)
    yield engine
    engine.dispose()


def _roundtrip(engine: Engine, **row: object) -> tuple[Any, tuple[Any, ...]]:
    with engine.begin() as conn:
        key = conn.execute(insert(values).values(**row)).inserted_primary_key
        assert key is not None
        new_id = key[0]
    with engine.connect() as conn:
        back = conn.execute(select(values).where(values.c.id == new_id)).one()
        raw = conn.execute(
            text(
                "SELECT amount, typeof(amount), units, typeof(units), at, typeof(at) FROM t "
                "WHERE id = :id"
            ),
            {"id": new_id},
        ).one()
    return back, tuple(raw)


def test_u128_max_and_atto_round_trip_exactly_as_text(engine: Engine) -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    back, raw = _roundtrip(engine, amount=ATTO, units=U128_MAX, at=at)
    assert back.amount == ATTO and str(back.amount) == "1E-18"
    assert back.units == U128_MAX and type(back.units) is int
    assert back.at == at and back.at.tzinfo is not None
    assert raw == (
        "0.000000000000000001",
        "text",
        "340282366920938463463374607431768211455",
        "text",
        "2026-01-02T03:04:05.678901+00:00",
        "text",
    )


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        (Decimal("Infinity"), "Infinity"),
        (Decimal("-Infinity"), "-Infinity"),
        (Decimal("1.50"), "1.5"),
        (Decimal("1E+30"), "1000000000000000000000000000000"),
        (Decimal("-0"), "0"),
        (Decimal("-12.340"), "-12.34"),
        (Decimal(2**200), str(2**200)),
        (7, "7"),
        (
            Decimal("123456789012345678901234567890.123456789012345678901234567890"),
            "123456789012345678901234567890.12345678901234567890123456789",
        ),
    ],
)
def test_decimal_text_is_canonical_and_exact(
    engine: Engine, value: Decimal | int, stored: str
) -> None:
    back, raw = _roundtrip(engine, amount=value)
    assert raw[0] == stored and raw[1] == "text"
    assert back.amount == Decimal(value)


def test_negative_and_huge_integers(engine: Engine) -> None:
    for number in (0, -(2**127), 2**256 - 1):
        back, raw = _roundtrip(engine, units=number)
        assert back.units == number and raw[2] == str(number)


@pytest.mark.parametrize("bad", [1.5, float("nan"), True, "1.5", Decimal("NaN")])
def test_decimal_refuses_float_nan_bool_and_text(engine: Engine, bad: object) -> None:
    with pytest.raises(StatementError) as info:
        _roundtrip(engine, amount=bad)
    assert isinstance(info.value.orig, TypeError | ValueError)


def test_float_error_message_is_clear() -> None:
    with pytest.raises(TypeError, match=r"exact amount required.*float"):
        decimal_text(0.1)


@pytest.mark.parametrize("bad", [1.0, True, "12", Decimal(3)])
def test_bigint_refuses_non_int(engine: Engine, bad: object) -> None:
    with pytest.raises(StatementError):
        _roundtrip(engine, units=bad)


def test_naive_datetime_refused(engine: Engine) -> None:
    with pytest.raises(StatementError, match="naive datetime"):
        _roundtrip(engine, at=datetime(2026, 1, 1))


def test_aware_non_utc_is_stored_as_utc(engine: Engine) -> None:
    at = datetime(2026, 1, 1, 9, 0, tzinfo=timezone(timedelta(hours=9)))
    back, raw = _roundtrip(engine, at=at)
    assert raw[4] == "2026-01-01T00:00:00.000000+00:00"
    assert back.at == at and back.at.utcoffset() == timedelta(0)


def test_time_text_orders_like_time(engine: Engine) -> None:
    times = [datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=n) for n in (10, 0, 999999)]
    times.append(datetime(2025, 12, 31, 23, 59, 59, tzinfo=UTC))
    for at in times:
        _roundtrip(engine, at=at)
    with engine.connect() as conn:
        ordered = [r.at for r in conn.execute(select(values.c.at).order_by(values.c.at))]
    assert ordered == sorted(times)
