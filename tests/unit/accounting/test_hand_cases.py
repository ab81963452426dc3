"""The issue's hand-computed cases: every expected number is worked out in the comments."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from bot.accounting import (
    BucketPeriod,
    CostMethod,
    Fee,
    FeeKind,
    Pair,
    PriceBook,
    PricePoint,
    Trade,
    account,
    by_strategy,
    by_wallet,
    ratio,
)

APT = "APT"
USDC = "USDC"
WALLET = "0xw1"
DAY0 = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday
DAY = timedelta(days=1)


def buy(when: datetime, sold: str, bought: str, ref: str, **extra: object) -> Trade:
    """A USDC → APT trade of `sold` USDC for `bought` APT."""
    return Trade(
        time=when,
        strategy=str(extra.pop("strategy", "dca")),
        wallet=str(extra.pop("wallet", WALLET)),
        ref=ref,
        sold_token=USDC,
        sold=Decimal(sold),
        bought_token=APT,
        bought=Decimal(bought),
        **extra,  # type: ignore[arg-type]
    )


def book(apt: list[tuple[datetime, str]]) -> PriceBook:
    """APT at the given prices, USDC at 1 from long before."""
    return PriceBook.of_points(
        {
            APT: [PricePoint(t, Decimal(p)) for t, p in apt],
            USDC: [PricePoint(DAY0 - 30 * DAY, Decimal(1))],
        }
    )


def test_four_slice_dca_with_fees_and_gas() -> None:
    # APT at 5, 4, 5, 8 USD from midnight of days 0..3; one 25 USDC slice at noon each day.
    # Each slice pays a 0.05 USDC provider fee (inside the 25 sold) and a 0.001 APT keeper
    # fee (outside what was received), and 50,000 octas of gas (0.0005 APT, valued at the
    # APT price of the day). Net 24.95 USDC buys 24.95/p APT: 4.99, 6.2375, 4.99, 3.11875.
    prices = book([(DAY0 + k * DAY, p) for k, p in enumerate(["5", "4", "5", "8"])])
    slices = [
        buy(
            DAY0 + k * DAY + timedelta(hours=12),
            "25",
            got,
            f"order-1#{k}",
            fees=(
                Fee(FeeKind.PROVIDER, USDC, Decimal("0.05")),
                Fee(FeeKind.KEEPER, APT, Decimal("0.001")),
            ),
            gas_octas=50_000,
            gas_usd=Decimal("0.0005") * Decimal(p),
        )
        for k, (got, p) in enumerate(
            [("4.99", "5"), ("6.2375", "4"), ("4.99", "5"), ("3.11875", "8")]
        )
    ]
    summary = account(
        slices,
        prices,
        valued_at=DAY0 + 4 * DAY,
        start=DAY0,
        end=DAY0 + 4 * DAY,
        period=BucketPeriod.DAY,
    )
    totals = summary.totals
    assert totals.trades == 4
    assert totals.invested == {USDC: Decimal("100")}
    assert totals.received == {APT: Decimal("19.33625")}  # 4.99 + 6.2375 + 4.99 + 3.11875
    assert totals.traded_usd == Decimal("100")
    assert totals.fees == {
        FeeKind.PROVIDER: {USDC: Decimal("0.20")},
        FeeKind.KEEPER: {APT: Decimal("0.004")},
    }
    # 4 × 0.05 + 0.001 × (5 + 4 + 5 + 8)
    assert totals.fees_usd == Decimal("0.222")
    assert totals.gas_octas == 200_000
    assert totals.gas_usd == Decimal("0.011")  # 0.0005 × (5 + 4 + 5 + 8)
    assert totals.realised_usd == 0  # USDC was spent from the opening balance: no gain
    assert summary.uncovered == {USDC: Decimal("100")}
    # Lots cost 25 + the day's gas each: 100 + 0.011. Held 19.33625 APT at 8 = 154.69.
    (held,) = summary.holdings
    assert (held.token, held.quantity, held.cost_usd) == (
        APT,
        Decimal("19.33625"),
        Decimal("100.011"),
    )
    assert held.value_usd == Decimal("154.69000")
    assert summary.unrealised_usd == Decimal("54.679")
    assert summary.pnl_usd == Decimal("54.679")
    position = summary.position
    assert position is not None
    assert position.pair == Pair(base=APT, quote=USDC)
    assert (position.paid, position.bought) == (Decimal("100"), Decimal("19.33625"))
    # 100 / 19.33625, to 40 significant digits; the market: each price held one day of
    # the four-day window, (5 + 4 + 5 + 8) / 4 = 5.5; 5.1716… / 5.5 − 1 = −5.97…%.
    assert position.average_entry == Decimal("5.171633589760165492274872325295752795914")
    assert position.market_mean == Decimal("5.5")
    assert position.entry_vs_market_percent is not None
    assert round(position.entry_vs_market_percent, 4) == Decimal("-5.9703")
    assert [b.label for b in summary.buckets] == [
        "2026-11-02",
        "2026-11-03",
        "2026-11-04",
        "2026-11-05",
    ]
    assert [b.figures.received[APT] for b in summary.buckets] == [
        Decimal("4.99"),
        Decimal("6.2375"),
        Decimal("4.99"),
        Decimal("3.11875"),
    ]


def test_limit_order_filled_in_two_parts() -> None:
    # A limit buy of 50 USDC at ≤ 5 USDC/APT fills 20 USDC → 4 APT (5.0), then 24 USDC →
    # 6 APT (4.0); the other 6 USDC stays in the order. Entry: 44 / 10 = 4.4 USDC per APT.
    prices = book([(DAY0, "5"), (DAY0 + DAY, "4"), (DAY0 + 2 * DAY, "4.5")])
    fills = [
        buy(DAY0 + timedelta(hours=1), "20", "4", "limit-7#1", strategy="ladder"),
        buy(DAY0 + DAY + timedelta(hours=1), "24", "6", "limit-7#2", strategy="ladder"),
    ]
    summary = account(fills, prices, valued_at=DAY0 + 2 * DAY)
    assert summary.totals.invested == {USDC: Decimal("44")}
    assert summary.totals.received == {APT: Decimal("10")}
    position = summary.position
    assert position is not None
    assert position.average_entry == Decimal("4.4")
    # No window given: first to last fill, 01:00 day 0 → 01:00 day 1. APT was 5 for 23 h
    # and 4 for 1 h: (5 × 23 + 4 × 1) / 24 = 119 / 24 = 4.958333… (40 digits).
    assert position.market_mean == ratio(Decimal(119), Decimal(24))
    assert str(position.market_mean) == "4.958333333333333333333333333333333333333"
    # Held 10 APT costing 44, at 4.5: 45 → unrealised 1.
    assert summary.unrealised_usd == Decimal("1.0")


def test_partial_refund_counts_only_what_was_spent() -> None:
    # A 4-slice DCA of 100 USDC is cancelled after two slices; the 50 USDC not spent comes
    # back as a refund, which is no trade: invested is the 50 the slices sold, not 100.
    prices = book([(DAY0, "5")])
    slices = [
        buy(DAY0 + timedelta(hours=h), "25", "5", f"dca-9#{h}", strategy="dca-9") for h in (1, 2)
    ]
    summary = account(slices, prices, valued_at=DAY0 + DAY)
    assert summary.totals.invested == {USDC: Decimal("50")}
    assert summary.totals.received == {APT: Decimal("10")}
    assert summary.holdings[0].cost_usd == Decimal("50")
    assert summary.unrealised_usd == 0


@pytest.mark.parametrize(
    ("method", "realised", "held_cost", "unrealised"),
    [
        # FIFO: the 1.5 sold is the 1 bought at 4 and half of the one at 6: cost 7;
        # 0.5 left costing 3, worth 4 → unrealised 1.
        (CostMethod.FIFO, Decimal("5"), Decimal("3"), Decimal("1")),
        # Average: 2 APT cost 10, 5 each; 1.5 sold cost 7.5; 0.5 left costs 2.5 → 1.5.
        (CostMethod.AVERAGE, Decimal("4.5"), Decimal("2.5"), Decimal("1.5")),
    ],
)
def test_fifo_and_average_cost_on_a_sale(
    method: CostMethod, realised: Decimal, held_cost: Decimal, unrealised: Decimal
) -> None:
    # Buy 1 APT for 4 USDC, 1 APT for 6 USDC, then sell 1.5 APT at 8 for 12 USDC.
    prices = book([(DAY0, "4"), (DAY0 + DAY, "6"), (DAY0 + 2 * DAY, "8")])
    trades = [
        buy(DAY0, "4", "1", "b1"),
        buy(DAY0 + DAY, "6", "1", "b2"),
        Trade(
            time=DAY0 + 2 * DAY,
            strategy="dca",
            wallet=WALLET,
            ref="s1",
            sold_token=APT,
            sold=Decimal("1.5"),
            bought_token=USDC,
            bought=Decimal("12"),
        ),
    ]
    summary = account(trades, prices, valued_at=DAY0 + 2 * DAY, method=method)
    assert summary.method is method
    assert summary.totals.realised_usd == realised  # 12 − cost of the 1.5 APT
    holdings = {h.token: h for h in summary.holdings}
    assert holdings[APT].quantity == Decimal("0.5")
    assert holdings[APT].cost_usd == held_cost
    assert holdings[USDC].cost_usd == Decimal("12")  # the proceeds, bought at their value
    assert summary.unrealised_usd == unrealised
    assert summary.pnl_usd == Decimal("6")  # the same under both: 12 + 4 − 10
    position = summary.position
    assert position is not None
    assert (position.sold, position.proceeds) == (Decimal("1.5"), Decimal("12"))


def test_strategies_have_their_own_lots_and_the_wallet_shares_them() -> None:
    # Strategy a buys 1 APT at 4; strategy b buys 1 at 6 and sells 1 at 8.
    # By strategy, b realises 8 − 6 = 2. By wallet (FIFO), the sale takes a's lot: 8 − 4.
    prices = book([(DAY0, "4"), (DAY0 + DAY, "6"), (DAY0 + 2 * DAY, "8")])
    trades = [
        buy(DAY0, "4", "1", "a1", strategy="a"),
        buy(DAY0 + DAY, "6", "1", "b1", strategy="b"),
        Trade(
            time=DAY0 + 2 * DAY,
            strategy="b",
            wallet=WALLET,
            ref="b2",
            sold_token=APT,
            sold=Decimal("1"),
            bought_token=USDC,
            bought=Decimal("8"),
        ),
    ]
    strategies = by_strategy(trades, prices, valued_at=DAY0 + 2 * DAY)
    assert list(strategies) == ["a", "b"]
    assert strategies["a"].totals.realised_usd == 0
    assert strategies["b"].totals.realised_usd == Decimal("2")
    wallets = by_wallet(trades, prices, valued_at=DAY0 + 2 * DAY)
    assert wallets[WALLET].totals.realised_usd == Decimal("4")


def test_trades_before_the_window_build_the_lots_only() -> None:
    # Bought 1 APT at 4 before the window; sold at 8 inside it: realised 4 in the window,
    # the purchase itself not counted.
    prices = book([(DAY0, "4"), (DAY0 + 2 * DAY, "8")])
    trades = [
        buy(DAY0, "4", "1", "b1"),
        Trade(
            time=DAY0 + 2 * DAY,
            strategy="dca",
            wallet=WALLET,
            ref="s1",
            sold_token=APT,
            sold=Decimal("1"),
            bought_token=USDC,
            bought=Decimal("8"),
        ),
    ]
    summary = account(trades, prices, valued_at=DAY0 + 3 * DAY, start=DAY0 + DAY)
    assert summary.totals.trades == 1
    assert summary.totals.invested == {APT: Decimal("1")}
    assert summary.totals.realised_usd == Decimal("4")
    assert summary.uncovered == {}
