"""Swaps, gas and the provider's USD values read back from a real journal file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.accounting import BucketPeriod, FeeKind, PriceBook, PricePoint, account, by_strategy
from bot.accounting.from_journal import journal_records
from bot.accounting.records import GasCost
from bot.journal import Journal
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot, SwapFillRecord

T0 = datetime(2026, 5, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
BOOK = PriceBook.of_points({APT: [PricePoint(T0, Decimal(5))], USDC: [PricePoint(T0, Decimal(1))]})


def tx_hash(n: int) -> str:
    return "0x" + f"{n:064x}"


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as opened:
        yield opened


def executed(
    journal: Journal, intent_id: int, n: int, state: str, gas_used: int, *, price: int | None = 100
) -> str:
    """A transaction of the intent, executed on chain with this gas."""
    journal.record_transaction(tx_hash(n), WALLET, n, json.dumps({}), at=T0, intent_id=intent_id)
    journal.update_transaction(
        tx_hash(n),
        state,
        at=T0 + timedelta(minutes=n),
        gas_used=gas_used,
        gas_unit_price=price,
        committed_at=T0 + timedelta(minutes=n),
    )
    return tx_hash(n)


def test_swaps_orders_and_gas_become_trades_and_gas_costs(journal: Journal) -> None:
    create = journal.record_intent("dca", WALLET, "create_dca", "c", {}, at=T0).id
    cancel = journal.record_intent("dca", WALLET, "cancel_dca", "x", {}, at=T0).id
    swap = journal.record_intent("dip", WALLET, "swap", "s", {}, at=T0).id
    aborted = journal.record_intent("dip", WALLET, "swap", "a", {}, at=T0).id
    old = journal.record_intent("dip", WALLET, "create_limit", "o", {}, at=T0).id
    executed(journal, create, 1, "committed", 1000)
    executed(journal, cancel, 2, "committed", 300)
    swap_hash = executed(journal, swap, 3, "committed", 1227)
    executed(journal, aborted, 4, "failed", 50)
    old_hash = executed(journal, old, 5, "committed", 800, price=None)  # before revision 0005
    journal.record_transaction(tx_hash(6), WALLET, 6, "{}", at=T0, intent_id=create)
    journal.update_transaction(tx_hash(6), "expired", at=T0)  # never ran: no gas
    journal.record_swap_fill(
        SwapFillRecord(swap, swap_hash, USDC, Decimal(100), APT, Decimal("19.9"), "chain", T0),
        at=T0,
    )
    snapshot = OrderSnapshot("dca", "o1", WALLET, USDC, APT, "active", Decimal(50), "dca")
    fill = FillRecord(
        "t1",
        "filled",
        1,
        Decimal(25),
        Decimal("4.9"),
        Decimal("0.05"),
        T0 + timedelta(hours=1),
        from_amount_usd=Decimal("25.5"),
        to_amount_usd=Decimal("25.48"),
        fee_amount_usd=Decimal("0.051"),
    )
    journal.observe_orders(
        [OrderObservation(snapshot, fills=[fill])], observed_at=T0, source="poll"
    )

    records = journal_records(journal, book=BOOK)
    assert records.gas_unknown == [old_hash]
    [dca_trade] = [t for t in records.trades if t.strategy == "dca"]
    assert dca_trade.sold_usd_price == Decimal("1.02")  # 25.5 USD / 25 USDC: the provider's
    assert dca_trade.bought_usd_price == Decimal("5.2")
    assert dca_trade.fees[0].usd == Decimal("0.051") and dca_trade.gas_octas == 0
    [swap_trade] = [t for t in records.trades if t.strategy == "dip"]
    assert (swap_trade.sold, swap_trade.bought, swap_trade.gas_octas) == (
        Decimal(100),
        Decimal("19.9"),
        122_700,
    )
    assert swap_trade.gas_usd == Decimal("0.006135")  # 0.001227 APT at 5 USD
    assert sorted((c.label, c.gas_octas) for c in records.gas) == [
        ("cancel_dca", 30_000),
        ("create_dca", 100_000),
        ("swap", 5_000),  # the aborted swap: gas paid, nothing traded
    ]

    summaries = by_strategy(records.trades, BOOK, valued_at=T0 + timedelta(days=1), gas=records.gas)
    dca = summaries["dca"].totals
    assert dca.gas_octas == 130_000 and dca.gas_usd == Decimal("0.0065")
    assert dca.traded_usd == Decimal("25.5")  # the provider's value, before the book's 25
    assert dca.fees[FeeKind.KEEPER] == {USDC: Decimal("0.05")} and dca.fees_usd == Decimal("0.051")
    assert dca.realised_usd == Decimal("-0.0065")  # gas outside trades is a realised cost
    dip = summaries["dip"].totals
    assert dip.gas_octas == 127_700 and dip.invested == {USDC: Decimal(100)}


def test_gas_outside_trades_falls_in_its_bucket_and_window() -> None:
    later = T0 + timedelta(days=2)
    gas = [
        GasCost(T0, "s", WALLET, tx_hash(1), 1000, Decimal("0.5")),
        GasCost(later, "s", WALLET, tx_hash(2), 2000, None),
    ]
    whole = account([], BOOK, valued_at=later, gas=gas, period=None)
    assert (whole.totals.gas_octas, whole.totals.gas_usd, whole.totals.gas_unvalued) == (
        3000,
        Decimal("0.5"),
        1,
    )
    assert whole.totals.trades == 0 and whole.totals.realised_usd == Decimal("-0.5")
    daily = account([], BOOK, valued_at=later, gas=gas, start=later, period=BucketPeriod.DAY)
    assert daily.totals.gas_octas == 2000
    assert [(b.label, b.figures.gas_octas) for b in daily.buckets] == [("2026-05-03", 2000)]
