"""`ArrayPath`: the paper core's price path over arrays, and its exact window search.

The search must answer exactly what the paper core's own merge-walk answers
(`PriceBook.first_ratio_at_least` over plain `PricePath`s), whatever the shape of the
two series: one side constant, both changing, few or many distinct prices, ratios that
land exactly on the threshold, coefficients beyond int64.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np
import pytest

from bot.aptos.tokens import Token
from bot.backtest.paths import ArrayPath, constant_path
from bot.paper.core.prices import PriceBook, PricePath
from bot.paper.core.registry import PaperTokens

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
US = 60_000_000
T0_US = int(T0.timestamp()) * 1_000_000
NUM = Token(decimals=6, symbol="NUM", fa_address="0x" + "a1" * 32)
DEN = Token(decimals=8, symbol="DEN", fa_address="0x" + "b2" * 32)


def array_path(minutes: list[int], prices: list[str]) -> ArrayPath:
    decimals = [Decimal(p) for p in prices]
    exponent = min(int(d.as_tuple().exponent) for d in decimals)
    coefs = [int(d.scaleb(-exponent)) for d in decimals]
    big = max(coefs) >= 1 << 63
    return ArrayPath(
        np.array([T0_US + m * US for m in minutes], dtype=np.int64),
        np.array(coefs, dtype=object if big else np.int64),
        exponent,
    )


def plain(path: ArrayPath) -> PricePath:
    return PricePath(path.times, path.prices)


def books(num: PricePath, den: PricePath) -> PriceBook:
    tokens = PaperTokens([NUM, DEN])
    return PriceBook(1, tokens, T0, replayed={NUM.address: num, DEN.address: den})


def both_ways(
    num: ArrayPath, den: ArrayPath, threshold: Decimal, after: datetime, until: datetime
) -> tuple[datetime | None, datetime | None]:
    """(the array search's answer, the core's merge-walk answer)."""
    fast = books(num, den).first_ratio_at_least(NUM.address, DEN.address, threshold, after, until)
    slow = books(plain(num), plain(den)).first_ratio_at_least(
        NUM.address, DEN.address, threshold, after, until
    )
    return fast, slow


def test_lookups_match_the_core_path() -> None:
    path = array_path([0, 1, 5], ["5.10", "4", "0.000000123456789012"])
    core = plain(path)
    for minutes in (-1, 0, 0.5, 1, 3, 5, 10_000):
        moment = T0 + minutes * MINUTE
        assert path.at(moment) == core.at(moment)
        assert path.step_start(moment) == core.step_start(moment)
        assert path.point_index(moment) == core.point_index(moment)
        assert path.next_change_after(moment) == core.next_change_after(moment)
    assert path.at(T0 + 5 * MINUTE) == Decimal("0.000000123456789012")  # exact


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        array_path([0], ["1"]).at(datetime(2026, 1, 1))


def test_points_must_increase_and_prices_be_positive() -> None:
    with pytest.raises(ValueError, match="increasing"):
        array_path([1, 1], ["1", "2"])
    with pytest.raises(ValueError, match="> 0"):
        ArrayPath(np.array([0], dtype=np.int64), np.array([0], dtype=np.int64), 0)


def test_a_ratio_exactly_on_the_threshold_counts() -> None:
    num = constant_path(Decimal(1))
    den = array_path([0, 1, 2, 3], ["5", "4.5", "4", "3"])
    fast, slow = both_ways(num, den, Decimal("0.25"), T0, T0 + 10 * MINUTE)
    assert fast == slow == T0 + 2 * MINUTE  # 1 / 4 == 0.25 exactly
    rising = array_path([0, 1, 2, 3], ["5", "7.99", "8", "9"])
    fast, slow = both_ways(rising, constant_path(Decimal(2)), Decimal(4), T0, T0 + 9 * MINUTE)
    assert fast == slow == T0 + 2 * MINUTE  # 8 / 2 == 4 exactly
    both = array_path([0, 1, 2, 3], ["1", "1.5", "2", "1"])
    fast, slow = both_ways(both, den, Decimal("0.5"), T0, T0 + 9 * MINUTE)
    assert fast == slow == T0 + 2 * MINUTE  # 2 / 4 == 0.5 exactly, both sides moving


def test_a_window_without_the_crossing_answers_none() -> None:
    num = constant_path(Decimal(1))
    den = array_path([0, 1, 2, 3], ["5", "4.5", "4", "3"])
    assert both_ways(num, den, Decimal("0.25"), T0, T0 + MINUTE) == (None, None)
    assert both_ways(num, den, Decimal("0.5"), T0, T0 + 10 * MINUTE) == (None, None)
    # The window is (after, until]: a crossing at `after` itself is not in it.
    fast, slow = both_ways(num, den, Decimal("0.25"), T0 + 2 * MINUTE, T0 + 10 * MINUTE)
    assert fast == slow == T0 + 3 * MINUTE


def test_no_ratio_before_both_sides_have_a_price() -> None:
    num = array_path([5, 6], ["10", "1"])
    den = array_path([0, 1], ["1", "1"])
    fast, slow = both_ways(num, den, Decimal("0.5"), T0 - MINUTE, T0 + 10 * MINUTE)
    assert fast == slow == T0 + 5 * MINUTE


def random_path(rng: random.Random, points: int, distinct: int, digits: int) -> ArrayPath:
    minutes = sorted(rng.sample(range(points * 3), points))
    pool = [f"{rng.randint(1, 10**digits)}e-{rng.randint(0, digits)}" for _ in range(distinct)]
    return array_path(minutes, [str(Decimal(rng.choice(pool))) for _ in minutes])


@pytest.mark.parametrize(
    ("shape", "num_points", "den_points", "distinct"),
    [
        ("constant denominator", 400, 1, 50),
        ("constant numerator", 1, 400, 50),
        ("few distinct denominators", 300, 300, 5),
        ("many distinct denominators", 300, 300, 200),
        ("longer than a chunk", 9000, 20, 400),
    ],
)
def test_the_search_agrees_with_the_core_walk(
    shape: str, num_points: int, den_points: int, distinct: int
) -> None:
    rng = random.Random(f"{shape}")
    found = 0
    for _ in range(25):
        num = random_path(rng, num_points, distinct, 9)
        den = random_path(rng, den_points, distinct, 9)
        # Thresholds around the ratios that occur, some exactly on one.
        ratios = [n / d for n in num.prices[:20] for d in den.prices[:5]]
        threshold = rng.choice(ratios) * rng.choice(
            [Decimal(1), Decimal("1.0001"), Decimal(10**12)]
        )
        span = max(num_points, den_points) * 3
        after = T0 + rng.randint(-5, span // 2) * MINUTE
        until = after + rng.randint(1, span) * MINUTE
        fast, slow = both_ways(num, den, threshold, after, until)
        assert fast == slow, (threshold, after, until)
        found += fast is not None
    assert 5 <= found <= 24  # crossings found and missed alike


def test_coefficients_beyond_int64_are_compared_exactly() -> None:
    num = array_path([0, 1, 2], ["0.000000000000000000001", "1000000", "2000000"])
    assert num.coefs.dtype == object
    den = array_path([0, 1, 2], ["1", "3", "0.5"])
    for threshold in (Decimal("333333.3333333333"), Decimal("4000000"), Decimal("1000000") / 3):
        fast, slow = both_ways(num, den, threshold, T0 - MINUTE, T0 + 5 * MINUTE)
        assert fast == slow


def test_it_pickles() -> None:
    import pickle

    path = array_path([0, 1], ["1.5", "2"])
    again = pickle.loads(pickle.dumps(path))
    assert again.prices == path.prices and again.times == path.times
