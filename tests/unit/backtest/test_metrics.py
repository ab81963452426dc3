"""Backtest metrics on hand-made results, against figures computed by hand."""

from __future__ import annotations

from bot.backtest.metrics import compute_metrics, main_pair, with_no_bounds
from bot.backtest.result import BacktestOrder
from tests.support.backtest_results import (
    APT,
    HOUR,
    T0,
    USDC,
    D,
    buy,
    four_slice_dca,
    make_result,
    sell,
)


def test_four_slice_dca_gives_the_hand_computed_figures() -> None:
    m = compute_metrics(four_slice_dca())
    assert (m.quote, m.asset) == (USDC, APT)
    assert m.invested == D(400) and m.invested_usd == D(400)
    assert m.received == D(75)
    assert m.avg_entry_usd == D(400) / D(75)  # 5.333… USD per APT
    assert m.avg_entry_quote == D(400) / D(75)
    assert m.mean_price_usd == D(6)  # (5 + 4 + 5 + 10) / 4
    assert round(m.entry_vs_mean_percent or 0, 6) == D("-11.111111")  # 5.333 vs 6
    assert m.end_price_usd == D(10)
    assert m.value_at_end_usd == D(750)
    assert m.pnl_usd == D(350)
    assert m.return_percent == D("87.5")
    # PnL path 0 → −20 (20 APT at 4 cost 100, then 25 more at 4) → 25 → 350.
    assert m.max_drawdown_usd == D(20)
    assert m.max_drawdown_percent == D(10)  # 20 of the stake: 100 held at the peak + 100 added
    assert (m.orders, m.fills, m.skips, m.swaps) == (1, 4, 0, 0)
    assert m.orders_by_status == {"filled": 1}
    assert m.fees == {USDC: D(0)} and m.fees_usd == 0


def test_drawdown_of_a_single_buy_is_the_price_drawdown() -> None:
    # 20 APT bought at 5; the price goes 5 → 10 → 2 → 8: value 100 → 200 → 40 → 160.
    result = make_result([buy(0, "100", "20", "5")], ["5", "10", "2", "8"])
    m = compute_metrics(result)
    assert m.max_drawdown_usd == D(160)  # PnL +100 → −60
    assert m.max_drawdown_percent == D(80)  # 200 → 40, as the price 10 → 2
    assert m.value_at_end_usd == D(160) and m.pnl_usd == D(60)


def test_drawdown_sees_price_points_between_fills() -> None:
    # One buy at hour 0, then the price dips at hour 2 with no fill there.
    prices = ["5", "5", "1", "5", "5"]
    m = compute_metrics(make_result([buy(0, "100", "20", "5")], prices))
    assert m.max_drawdown_usd == D(80)  # 20 APT × (5 − 1)
    assert m.drawdown_points == 1 + 5  # the fill, and start + 3 inner points + end
    coarse = compute_metrics(make_result([buy(0, "100", "20", "5")], prices), points=2)
    assert coarse.max_drawdown_usd < D(80)  # the documented resolution limit


def test_skipped_slices_are_counted_not_traded() -> None:
    fills = [
        buy(0, "100", "20", "5"),
        buy(1, "0", "0", "4", skipped=True),
        buy(2, "100", "20", "5"),
    ]
    m = compute_metrics(make_result(fills, ["5", "4", "5"]))
    assert (m.fills, m.skips) == (2, 1)
    assert m.invested == D(200) and m.received == D(40)
    assert m.avg_entry_usd == D(5)


def test_fees_are_summed_by_token_and_in_usd() -> None:
    fills = [buy(0, "100", "19.9", "5", fee="0.3"), buy(1, "100", "24.9", "4", fee="0.3")]
    m = compute_metrics(make_result(fills, ["5", "4"]))
    assert m.fees == {USDC: D("0.6")}
    assert m.fees_usd == D("0.6")
    assert m.invested == D(200)  # the sold amounts include the fees
    assert m.received == D("44.8")


def test_lump_sum_spends_the_same_amount_at_the_start_price_and_fee_rate() -> None:
    # Fee 0.5 % of each 100 USDC slice; lump sum: 400 USDC at 5 → 400 × 0.995 / 5 = 79.6 APT.
    fills = [
        buy(0, "100", "19.9", "5", fee="0.5"),
        buy(1, "100", "24.875", "4", fee="0.5"),
        buy(2, "100", "19.9", "5", fee="0.5"),
        buy(3, "100", "9.95", "10", fee="0.5"),
    ]
    m = compute_metrics(make_result(fills, ["5", "4", "5", "10"]))
    lump = m.lump_sum
    assert lump is not None
    assert lump.invested_usd == D(400)
    assert lump.received == D("79.6")
    assert lump.value_at_end_usd == D(796)
    assert lump.pnl_usd == D(396) and lump.return_percent == D(99)
    assert m.received == D("74.625")
    assert m.value_at_end_usd == D("746.25")
    assert m.return_percent == D("86.5625")  # the DCA did worse than the lump sum here


def test_fees_and_slippage_lower_the_result_by_their_amounts() -> None:
    clean = compute_metrics(four_slice_dca())
    # The same slices, each 1 % worse (fees and slippage take 1 APT of every 100 bought).
    fills = [
        buy(0, "100", "19.8", "5", fee="1"),
        buy(1, "100", "24.75", "4", fee="1"),
        buy(2, "100", "19.8", "5", fee="1"),
        buy(3, "100", "9.9", "10", fee="1"),
    ]
    costly = compute_metrics(make_result(fills, ["5", "4", "5", "10"]))
    assert clean.received - costly.received == D("0.75")
    assert clean.pnl_usd - costly.pnl_usd == D("7.5")  # 0.75 APT at the end price 10
    assert costly.fees_usd == D(4)


def test_sells_back_reduce_the_position_and_count_as_proceeds() -> None:
    fills = [buy(0, "100", "20", "5"), sell(1, "10", "100", "10")]
    m = compute_metrics(make_result(fills, ["5", "10", "8"]))
    assert (m.quote, m.asset) == (USDC, APT)
    assert m.sold_back == D(10) and m.proceeds == D(100) and m.proceeds_usd == D(100)
    assert m.held_at_end == D(10)
    assert m.value_at_end_usd == D(180)  # 10 APT at 8 + 100 USDC realised
    assert m.pnl_usd == D(80)


def test_orders_refunds_and_locked_funds_are_reported() -> None:
    orders = [
        BacktestOrder("limit", "l-1", T0, USDC, APT, D(50), "filled", T0 + HOUR),
        BacktestOrder("limit", "l-2", T0, USDC, APT, D(50), "expired", T0 + HOUR, D(50)),
        BacktestOrder("limit", "l-3", T0, USDC, APT, D(50), "active", None),
    ]
    result = make_result(
        [buy(1, "50", "12.5", "4", kind="limit", order_id="l-1")],
        ["5", "4", "5"],
        orders,
        locked_at_end={USDC: D(50), APT: D(0)},
    )
    m = compute_metrics(result)
    assert m.orders == 3
    assert m.orders_by_status == {"active": 1, "expired": 1, "filled": 1}
    assert m.refunded == {USDC: D(50)}
    assert m.locked_at_end == {USDC: D(50)}
    assert m.wallet_start_usd == D(1000)
    assert m.wallet_end_usd == D(600) + D(75) * D(5) + D(50)


def test_no_trades_gives_zeros_and_no_return() -> None:
    result = make_result([], ["5", "6"], end_balances={USDC: D(1000)})
    m = compute_metrics(result)
    assert main_pair(result) is None
    assert (m.invested, m.received, m.pnl_usd, m.max_drawdown_usd) == (0, 0, 0, 0)
    assert m.return_percent is None and m.avg_entry_usd is None and m.lump_sum is None
    assert m.path == []


def test_main_pair_is_the_direction_with_most_fills() -> None:
    fills = [sell(0, "1", "5", "5"), buy(1, "100", "25", "4"), buy(2, "100", "20", "5")]
    assert main_pair(make_result(fills, ["5", "4", "5"])) == (USDC, APT)


def test_no_bounds_comparison_is_attached() -> None:
    bounded = compute_metrics(make_result([buy(0, "100", "20", "5")], ["5", "4"]))
    free = compute_metrics(four_slice_dca())
    m = with_no_bounds(bounded, free, ["min_rate"])
    assert m.no_bounds is not None
    assert m.no_bounds.pnl_usd == D(350) and m.no_bounds.return_percent == D("87.5")
    assert "min_rate" in m.no_bounds.note
