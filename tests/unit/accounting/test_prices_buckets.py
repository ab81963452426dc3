"""Prices in force, time-weighted means, time-zone buckets, and refused input."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, Inexact

import pytest

from bot.accounting import (
    BucketPeriod,
    Fee,
    FeeKind,
    Pair,
    PriceBook,
    PricePoint,
    PriceSeries,
    Trade,
    account,
    bucket_label,
    bucket_of,
    zone_of,
)
from bot.accounting.exact import EXACT
from bot.money import MoneyError

T0 = datetime(2026, 3, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


MINUTE = timedelta(minutes=1)


def series(*points: tuple[int, str]) -> PriceSeries:
    """Points at T0 + m minutes."""
    return PriceSeries("APT", [PricePoint(T0 + m * MINUTE, Decimal(p)) for m, p in points])


def test_the_price_in_force_is_the_last_at_or_before() -> None:
    prices = series((0, "5"), (120, "6"))
    assert prices.at(T0 - HOUR) is None
    assert prices.at(T0) == Decimal("5")
    assert prices.at(T0 + HOUR) == Decimal("5")
    assert prices.at(T0 + 2 * HOUR) == Decimal("6")


def test_time_weighted_mean_weighs_by_how_long_a_price_held() -> None:
    # 4 for 3 h, then 10 recorded three times in the last hour: (4×3 + 10×1) / 4 = 5.5.
    # A plain mean of the points would say (4 + 10 + 10 + 10) / 4 = 8.5.
    prices = series((0, "4"), (180, "10"), (195, "10"), (210, "10"))
    assert prices.time_weighted_mean(T0, T0 + 4 * HOUR) == Decimal("5.5")
    # Before the first point nothing is known: only the covered part counts.
    assert prices.time_weighted_mean(T0 - 4 * HOUR, T0 + 4 * HOUR) == Decimal("5.5")
    assert prices.time_weighted_mean(T0 + HOUR, T0 + HOUR) == Decimal("4")  # an instant
    assert prices.time_weighted_mean(T0 - 2 * HOUR, T0 - HOUR) is None


def test_mean_in_quote_divides_the_two_usd_prices_at_each_moment() -> None:
    # APT 10 USD for 2 h then 12; USDC 1 for the first hour, 2 from then on (absurd but
    # checkable): APT/USDC = 10, 5, 6 for one hour each → mean 7.
    book = PriceBook(
        {
            "APT": series((0, "10"), (120, "12")),
            "USDC": PriceSeries(
                "USDC", [PricePoint(T0, Decimal(1)), PricePoint(T0 + HOUR, Decimal(2))]
            ),
        }
    )
    assert book.mean_in_quote(Pair("APT", "USDC"), T0, T0 + 3 * HOUR) == Decimal("7")
    assert book.mean_in_quote(Pair("APT", "DAI"), T0, T0 + 3 * HOUR) is None


def test_buckets_follow_the_local_calendar() -> None:
    # Sunday 22 Nov 2026, 23:30 UTC is Monday 00:30 in Berlin: another day, another week.
    moment = datetime(2026, 11, 22, 23, 30, tzinfo=UTC)
    utc, berlin = zone_of(None), zone_of("Europe/Berlin")
    day, week, month = BucketPeriod.DAY, BucketPeriod.WEEK, BucketPeriod.MONTH
    assert bucket_of(moment, day, utc) == date(2026, 11, 22)
    assert bucket_of(moment, day, berlin) == date(2026, 11, 23)
    assert bucket_label(bucket_of(moment, week, utc), week) == "2026-W47"
    assert bucket_label(bucket_of(moment, week, berlin), week) == "2026-W48"
    # 30 Nov 23:30 UTC is already December in Berlin.
    late = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)
    assert bucket_label(bucket_of(late, month, utc), month) == "2026-11"
    assert bucket_label(bucket_of(late, month, berlin), month) == "2026-12"


def test_a_bad_zone_name_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="Mars/Olympus"):
        zone_of("Mars/Olympus")
    with pytest.raises(ValueError, match="Mars/Olympus"):
        account([], PriceBook(), valued_at=T0, zone="Mars/Olympus")


def _trade(**changes: object) -> Trade:
    fields: dict[str, object] = {
        "time": T0,
        "strategy": "s",
        "wallet": "w",
        "ref": "r",
        "sold_token": "USDC",
        "sold": Decimal(1),
        "bought_token": "APT",
        "bought": Decimal(1),
    }
    fields.update(changes)
    return Trade(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "error", "text"),
    [
        ({"sold": 1.5}, MoneyError, "sold"),
        ({"bought": Decimal("NaN")}, MoneyError, "bought"),
        ({"sold": Decimal(-1)}, MoneyError, "sold"),
        ({"gas_octas": 1.0}, MoneyError, "gas_octas"),
        ({"gas_octas": -5}, MoneyError, "gas_octas"),
        ({"gas_usd": 0.1}, MoneyError, "gas_usd"),
        ({"time": datetime(2026, 3, 1)}, ValueError, "naive"),
        ({"bought_token": "USDC"}, ValueError, "same token"),
    ],
)
def test_bad_trades_are_refused(
    changes: dict[str, object], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        _trade(**changes)


def test_a_fee_amount_must_be_a_decimal() -> None:
    with pytest.raises(MoneyError, match="fee amount"):
        Fee(FeeKind.KEEPER, "APT", 0.1)  # type: ignore[arg-type]


def test_a_trade_without_any_price_is_listed_as_unvalued() -> None:
    summary = account([_trade(ref="x1")], PriceBook(), valued_at=T0)
    assert summary.unvalued == ("x1",)
    assert summary.totals.traded_usd == 0
    assert summary.totals.received == {"APT": Decimal(1)}
    assert summary.unrealised_usd is None  # APT is held and has no price


def test_a_trade_valued_by_its_own_prices_needs_no_book() -> None:
    trade = _trade(
        sold=Decimal("10"), sold_usd_price=Decimal("0.999"), bought_usd_price=Decimal("5")
    )
    summary = account([trade], PriceBook(), valued_at=T0)
    assert summary.totals.traded_usd == Decimal("9.990")
    assert summary.unvalued == ()


def test_exact_arithmetic_refuses_to_round() -> None:
    with pytest.raises(Inexact):
        EXACT.divide(Decimal(1), Decimal(3))
