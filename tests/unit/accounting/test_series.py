"""The position through time (`bot.accounting.series`), by hand and against `account`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.accounting import CostMethod, Pair, PriceBook, PricePoint, Trade, account, ratio
from bot.accounting.exact import total
from bot.accounting.series import position_series

APT = "APT"
USDC = "USDC"
DAY0 = datetime(2026, 11, 2, tzinfo=UTC)
HOUR = timedelta(hours=1)
PAIR = Pair(base=APT, quote=USDC)


def trade(when: datetime, sold_token: str, sold: str, bought: str, ref: str) -> Trade:
    """USDC → APT (or APT → USDC when `sold_token` is APT)."""
    return Trade(
        time=when,
        strategy="s",
        wallet="w",
        ref=ref,
        sold_token=sold_token,
        sold=Decimal(sold),
        bought_token=APT if sold_token == USDC else USDC,
        bought=Decimal(bought),
    )


def prices(apt: list[tuple[datetime, str]]) -> PriceBook:
    """APT at the given prices, USDC at 1 from a day before."""
    return PriceBook.of_points(
        {
            APT: [PricePoint(t, Decimal(p)) for t, p in apt],
            USDC: [PricePoint(DAY0 - 24 * HOUR, Decimal(1))],
        }
    )


def test_points_at_trades_and_moments_by_hand() -> None:
    # APT at 4 from 0 h, 6 from 2 h, 8 from 4 h. Buy 1 APT for 4 USDC at 1 h, 1 for 6 at
    # 3 h, sell 1.5 for 12 USDC at 5 h.
    book = prices([(DAY0, "4"), (DAY0 + 2 * HOUR, "6"), (DAY0 + 4 * HOUR, "8")])
    trades = [
        trade(DAY0 + HOUR, USDC, "4", "1", "b1"),
        trade(DAY0 + 3 * HOUR, USDC, "6", "1", "b2"),
        trade(DAY0 + 5 * HOUR, APT, "1.5", "12", "s1"),
    ]
    moments = [DAY0, DAY0 + 2 * HOUR, DAY0 + 2 * HOUR, DAY0 + 6 * HOUR]  # DAY0: before
    series = position_series(trades, book, moments=moments, pair=PAIR)
    assert series.opening is None
    assert [p.time for p in series.points] == [DAY0 + k * HOUR for k in (1, 2, 3, 5, 6)]
    one, two, three, five, six = series.points
    assert (one.held, one.value_usd, one.cost_usd) == ({APT: 1}, 4, 4)
    assert (two.value_usd, two.cost_usd, two.pnl_usd) == (6, 4, 2)  # APT at 6 now
    assert (three.held, three.value_usd, three.cost_usd) == ({APT: 2}, 12, 10)
    assert three.average_entry == 5 and three.market == 6
    # FIFO: the sale takes lot 1 (4) and half of lot 2 (3): realised 12 − 7 = 5; the
    # 12 USDC got are a lot costing 12; 0.5 APT left costing 3, at 8 = 4.
    assert five.held == {APT: Decimal("0.5"), USDC: 12}
    assert (five.realised_usd, five.cost_usd, five.value_usd) == (5, 15, 16)
    assert five.pnl_usd == 6  # 5 realised + (16 − 15)
    assert six.pnl_usd == 6 and six.average_entry == 5  # a sale is no buy


@pytest.mark.parametrize("method", list(CostMethod))
def test_the_last_point_is_the_summary(method: CostMethod) -> None:
    book = prices([(DAY0, "4"), (DAY0 + 2 * HOUR, "6"), (DAY0 + 4 * HOUR, "8")])
    trades = [
        trade(DAY0 + HOUR, USDC, "4", "1", "b1"),
        trade(DAY0 + 3 * HOUR, USDC, "6", "1", "b2"),
        trade(DAY0 + 5 * HOUR, APT, "1.5", "12", "s1"),
    ]
    end = DAY0 + 6 * HOUR
    summary = account(trades, book, valued_at=end, method=method, end=end)
    last = position_series(trades, book, moments=[end], method=method, end=end).points[-1]
    assert last.realised_usd == summary.totals.realised_usd
    assert last.value_usd == total(h.value_usd or Decimal(0) for h in summary.holdings)
    assert last.cost_usd == total(h.cost_usd for h in summary.holdings)
    assert last.pnl_usd == summary.pnl_usd
    assert last.held == {h.token: h.quantity for h in summary.holdings}


def test_trades_before_the_window_open_it() -> None:
    # Bought 1 APT for 4 before the window; in it, it is sold for 6: realised 2.
    book = prices([(DAY0, "4"), (DAY0 + 2 * HOUR, "6")])
    trades = [
        trade(DAY0 + HOUR, USDC, "4", "1", "b1"),
        trade(DAY0 + 3 * HOUR, APT, "1", "6", "s1"),
    ]
    start = DAY0 + 2 * HOUR
    series = position_series(trades, book, start=start, pair=PAIR)
    assert series.opening is not None
    assert series.opening.time == start
    assert (series.opening.held, series.opening.value_usd, series.opening.cost_usd) == (
        {APT: 1},
        6,
        4,
    )
    assert series.opening.realised_usd == 0 and series.opening.average_entry is None
    (sold,) = series.points
    assert (sold.realised_usd, sold.held, sold.pnl_usd) == (2, {USDC: 6}, 2)


def test_a_token_without_a_price_has_no_value() -> None:
    book = PriceBook.of_points({USDC: [PricePoint(DAY0, Decimal(1))]})
    series = position_series([trade(DAY0 + HOUR, USDC, "5", "1", "b1")], book, pair=PAIR)
    (point,) = series.points
    assert point.value_usd is None and point.pnl_usd is None and point.market is None
    assert point.cost_usd == 5 and point.average_entry == 5


def test_no_trades_no_points() -> None:
    series = position_series([], prices([(DAY0, "4")]), moments=[DAY0])
    assert series.points == () and series.opening is None


amounts = st.integers(min_value=1, max_value=10**6).map(lambda n: Decimal(n).scaleb(-4))


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.tuples(st.booleans(), amounts, amounts), min_size=1, max_size=25),
    method=st.sampled_from(list(CostMethod)),
)
def test_every_point_agrees_with_account_up_to_then(
    steps: list[tuple[bool, Decimal, Decimal]], method: CostMethod
) -> None:
    # Random buys and sells an hour apart, APT's price changing every 30 minutes: the
    # point after each trade equals `account` of the trades up to it.
    book = prices([(DAY0 + k * HOUR / 2, str(3 + k % 5)) for k in range(2 * len(steps) + 2)])
    trades = [
        trade(DAY0 + (k + 1) * HOUR, APT if sell else USDC, str(a), str(b), f"t{k}")
        for k, (sell, a, b) in enumerate(steps)
    ]
    series = position_series(trades, book, method=method, pair=PAIR)
    for k, point in enumerate(series.points):
        summary = account(trades[: k + 1], book, valued_at=point.time, method=method, pair=PAIR)
        assert point.realised_usd == summary.totals.realised_usd
        assert point.pnl_usd == summary.pnl_usd
        assert point.cost_usd == total(h.cost_usd for h in summary.holdings)
        position = summary.position
        assert position is not None
        assert point.average_entry == position.average_entry
    buys = [t for t in trades if t.sold_token == USDC]
    if buys:
        paid = total(t.sold for t in buys)
        got = total(t.bought for t in buys)
        assert series.points[-1].average_entry == ratio(paid, got)


def test_points_at_moments_only_still_count_every_trade() -> None:
    book = prices([(DAY0, "4"), (DAY0 + 2 * HOUR, "6"), (DAY0 + 4 * HOUR, "8")])
    trades = [
        trade(DAY0 + HOUR, USDC, "4", "1", "b1"),
        trade(DAY0 + 3 * HOUR, USDC, "6", "1", "b2"),
        trade(DAY0 + 5 * HOUR, APT, "1.5", "12", "s1"),
    ]
    moments = [DAY0 + 2 * HOUR, DAY0 + 6 * HOUR]
    every = position_series(trades, book, moments=moments, pair=PAIR)
    only = position_series(trades, book, moments=moments, pair=PAIR, at_trades=False)
    assert [p.time for p in only.points] == moments
    assert list(only.points) == [p for p in every.points if p.time in moments]
