"""Fills and price ticks read back from a real journal file become trades and prices."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.accounting import FeeKind, account
from bot.accounting.from_journal import price_book, trades_of_order
from bot.journal import Journal
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot, PriceTickRow

T0 = datetime(2026, 5, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as opened:
        yield opened


def test_a_dca_order_read_back_from_the_journal(journal: Journal) -> None:
    snapshot = OrderSnapshot(
        kind="dca",
        order_id="0xorder",
        wallet=WALLET,
        from_token=USDC,
        to_token=APT,
        status="cancelled",
        amount_total=Decimal("100"),
        strategy="dca-apt",
    )
    fills = [
        FillRecord("0xt1", "created", 0, from_amount=Decimal("100"), time=T0),
        # 25 USDC sold, 0.05 of it the keeper's, 4.99 APT got.
        FillRecord(
            "0xt2",
            "filled",
            1,
            Decimal("25"),
            Decimal("4.99"),
            Decimal("0.05"),
            T0 + timedelta(hours=1),
        ),
        FillRecord("0xt3", "attempted", 2, from_amount=Decimal("25"), time=T0 + timedelta(hours=2)),
        FillRecord("0xt4", "cancelled", 3, from_amount=Decimal("75"), time=T0 + timedelta(hours=3)),
    ]
    journal.observe_orders(
        [OrderObservation(snapshot, fills=fills)],
        observed_at=T0 + timedelta(hours=4),
        source="poll",
    )
    journal.add_price_ticks(
        [
            PriceTickRow(T0, APT, Decimal("5")),
            PriceTickRow(T0, USDC, Decimal("1")),
            PriceTickRow(T0 + timedelta(hours=2), APT, Decimal("6")),
        ]
    )
    order = journal.order("dca", "0xorder")
    assert order is not None
    trades = trades_of_order(order, journal.fills("dca", "0xorder"))
    assert len(trades) == 1  # only the execution; the refund (cancelled) is no trade
    (trade,) = trades
    assert (trade.strategy, trade.ref, trade.label) == ("dca-apt", "dca:0xorder#1", "0xt2")
    assert (trade.sold_token, trade.sold, trade.bought_token, trade.bought) == (
        USDC,
        Decimal("25"),
        APT,
        Decimal("4.99"),
    )
    assert [(f.kind, f.token, f.amount) for f in trade.fees] == [
        (FeeKind.KEEPER, USDC, Decimal("0.05"))
    ]
    book = price_book(journal.price_ticks(APT) + journal.price_ticks(USDC))
    summary = account(trades, book, valued_at=T0 + timedelta(hours=4))
    assert summary.totals.invested == {USDC: Decimal("25")}
    assert summary.totals.fees_usd == Decimal("0.05")
    # 4.99 APT costing 25, worth 6 each: 29.94 − 25.
    assert summary.unrealised_usd == Decimal("4.94")
