"""What the Telegram control says: message splitting, windows, and the hand-checked texts."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from bot.accounting import BucketPeriod, PriceBook, PricePoint, Trade, by_strategy
from bot.app.telegram_desk import window_start
from bot.journal.views import OrderView
from bot.ops.status_file import DaemonStatus, StrategyStatus
from bot.ops.telegram_answers import (
    balance_text,
    orders_text,
    period_text,
    profit_text,
    split_message,
    status_text,
    utf16_length,
)
from bot.price_view import PriceConvention

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_split_keeps_lines_whole_and_counts_utf16_units() -> None:
    lines = ["😀" * 10] * 30  # 20 UTF-16 units a line, 10 characters
    parts = split_message("\n".join(lines), limit=100)
    assert all(utf16_length(p) <= 100 for p in parts)
    assert [len(p.split("\n")) for p in parts] == [4] * 7 + [2]  # 4*20 + 3 newlines = 83
    assert "\n".join(parts) == "\n".join(lines)


def test_split_cuts_an_overlong_line_and_never_sends_nothing() -> None:
    parts = split_message("a" * 250 + "\nb", limit=100)
    assert parts == ["a" * 100, "a" * 100, "a" * 50 + "\nb"]
    assert split_message("😀" * 60, limit=101) == ["😀" * 50, "😀" * 10]
    assert split_message("  \n ") == ["(nothing to say)"]


@pytest.mark.parametrize(
    ("period", "count", "zone", "expected"),
    [
        (BucketPeriod.DAY, 1, "UTC", datetime(2026, 3, 1, tzinfo=UTC)),
        (BucketPeriod.DAY, 7, "UTC", datetime(2026, 2, 23, tzinfo=UTC)),
        # 2026-03-01 12:00 UTC is 13:00 in Berlin; its day starts at 23:00 UTC the day before
        (BucketPeriod.DAY, 2, "Europe/Berlin", datetime(2026, 2, 27, 23, tzinfo=UTC)),
        (BucketPeriod.WEEK, 1, "UTC", datetime(2026, 2, 23, tzinfo=UTC)),  # a Sunday: Monday
        (BucketPeriod.WEEK, 3, "UTC", datetime(2026, 2, 9, tzinfo=UTC)),
        (BucketPeriod.MONTH, 1, "UTC", datetime(2026, 3, 1, tzinfo=UTC)),
        (BucketPeriod.MONTH, 4, "UTC", datetime(2025, 12, 1, tzinfo=UTC)),
        (BucketPeriod.MONTH, 15, "UTC", datetime(2025, 1, 1, tzinfo=UTC)),
    ],
)
def test_window_start(period: BucketPeriod, count: int, zone: str, expected: datetime) -> None:
    assert window_start(T0, period, count, zone) == expected


def trade(ref: str, strategy: str, when: datetime, usdc: str, apt: str) -> Trade:
    return Trade(
        time=when,
        strategy=strategy,
        wallet="0x1",
        ref=ref,
        sold_token="USDC",
        sold=Decimal(usdc),
        bought_token="APT",
        bought=Decimal(apt),
        gas_octas=1000,
        gas_usd=Decimal("0.01"),
    )


def book() -> PriceBook:
    return PriceBook.of_points(
        {
            "USDC": [PricePoint(T0.replace(day=1, hour=0), Decimal(1))],
            "APT": [
                PricePoint(T0.replace(day=1, hour=0), Decimal(5)),
                PricePoint(T0.replace(day=3), Decimal(6)),
            ],
        }
    )


def test_profit_and_period_texts_by_hand() -> None:
    trades = [
        trade("a1", "dca-a", T0, "10", "2"),
        trade("a2", "dca-a", T0.replace(day=2), "10", "2"),
        trade("b1", "dca-b", T0.replace(day=2), "5", "1"),
    ]
    end = T0.replace(day=3)
    prices = PriceConvention(["USDC"])
    summaries = by_strategy(trades, book(), valued_at=end, period=BucketPeriod.DAY)
    text = profit_text(summaries, prices)
    assert "dca-a (2 trades, cost basis FIFO)" in text
    assert "invested 20 USDC" in text and "received 4 APT" in text
    assert "avg entry 5 USDC per APT" in text
    assert "value 24.00 USD" in text  # 4 APT at 6
    assert "market mean 5 (+0.00 %)" in text  # 5 all the window long
    # the gas is part of the cost: 24 - (20 + 0.02)
    assert "P&L 3.98 USD (realised 0.00 USD, unrealised 3.98 USD)" in text
    assert "gas 0.00002 APT (0.02 USD)" in text
    assert "dca-b (1 trade, cost basis FIFO)" in text
    assert text.endswith("all strategies: P&L 4.97 USD")  # dca-b: 6 - 5.01

    daily = period_text(summaries, BucketPeriod.DAY, 3, "UTC")
    assert daily.splitlines() == [
        "the last 3 days (UTC): trades, traded, fees+gas, realised P&L",
        "2026-03-02: 2, 15.00 USD, 0.02 USD, 0.00 USD",  # newest first, both strategies
        "2026-03-01: 1, 10.00 USD, 0.01 USD, 0.00 USD",
    ]
    assert period_text({}, BucketPeriod.WEEK, 1, "UTC") == "no trades in the last 1 week (UTC)"
    assert profit_text({}, prices) == "no trades in the journal yet"


def test_status_orders_and_balance_texts() -> None:
    status = DaemonStatus(
        pid=1,
        state="running",
        started_at="2026-03-01T00:00:00Z",
        updated_at="2026-03-01T12:00:00Z",
        mode="paper",
        wallet="0xw",
        version="1",
        strategies={"dca-a": StrategyStatus(ticks=3, actions=1, paused=True)},
        open_orders=2,
        apt_balance="1.5",
    )
    text = status_text(status)
    assert text.splitlines()[:3] == ["bot running (paper mode)", "wallet 0xw", "health ok"]
    assert "dca-a PAUSED: 3 ticks, 1 actions, 0 errors, last tick never" in text
    assert "open orders 2" in text and "APT for gas 1.5" in text

    order = OrderView(
        kind="dca",
        order_id="0xabc",
        wallet="0xw",
        from_token="USDC",
        to_token="APT",
        status="active",
        amount_total=Decimal("100"),
        strategy="dca-a",
        amount_spent=Decimal("25"),
        to_amount_received=Decimal("4.98"),
        orders_total=4,
        orders_completed=1,
        row_id=1,
        created_at=T0,
        updated_at=T0,
        last_seen_at=T0,
    )
    assert orders_text([order], PriceConvention(["USDC"])) == (
        "1 open order\ndca 0xabc (dca-a) active: 25 of 100 USDC -> 4.98 APT, 1 of 4 done"
    )
    assert orders_text([], PriceConvention()) == "no open orders"
    assert balance_text("0xw", [("APT", Decimal("1.50")), ("USDC", None)]) == (
        "wallet 0xw\nAPT: 1.5\nUSDC: unknown"
    )
    assert balance_text(None, []) == "no wallet configured"
