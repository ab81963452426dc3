"""Fill notifications with numbers: a fill's amounts and price, the strategy's average entry.

A real SQLite journal in `tmp_path`; the expected numbers are worked out by hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.app.reporter import order_event_lines
from bot.aptos.tokens import Token, TokenBook
from bot.config import AlertSettings
from bot.engine.events import (
    FillsRecorded,
    OrderCancelled,
    OrderCreated,
    OrderFilled,
    OrderPartiallyFilled,
)
from bot.journal import FillRecord, FillView, Journal, OrderSnapshot, OrderView
from bot.ops.alert_sources import AlertSources
from bot.ops.fill_news import FillNews, FillNewsReader, OrderEnd
from bot.price_view import PriceConvention
from tests.support.alerts import START, FakeAlerter

WALLET = "0x" + "ab" * 32
APT = Token(8, "APT", coin_type="0x1::aptos_coin::AptosCoin")
USDC = Token(6, "USDC", fa_address="0x" + "bae" + "0" * 61)
DCA_ID = "0x" + "d1" * 32
OTHER_ID = "0x" + "d2" * 32
LIMIT_ID = "0x" + "11" * 32
SELL_ID = "0x" + "5e" * 32


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(f"sqlite:///{tmp_path / 'journal.db'}") as j:
        yield j


@pytest.fixture
def reader(journal: Journal) -> FillNewsReader:
    return FillNewsReader(journal, PriceConvention(["USDC", "APT"], TokenBook([APT, USDC])))


def order(journal: Journal, order_id: str, kind: str = "dca", **fields: object) -> None:
    values: dict[str, object] = {
        "kind": kind,
        "order_id": order_id,
        "wallet": WALLET,
        "from_token": USDC.address,
        "to_token": APT.address,
        "status": "active",
        "amount_total": Decimal(100),
        "strategy": "dca-apt",
    }
    values |= fields
    journal.upsert_order(OrderSnapshot(**values), observed_at=START, source="poll")  # type: ignore[arg-type]


def fill(journal: Journal, order_id: str, n: int, sold: str, got: str, kind: str = "dca") -> None:
    record = FillRecord(
        tx_id=f"0x{n:064x}",
        type="filled",
        tx_number=n,
        from_amount=Decimal(sold),
        to_amount=Decimal(got),
        time=START + timedelta(hours=n),
    )
    assert journal.add_fill(kind, order_id, record, at=START + timedelta(hours=n))


def test_a_batch_of_dca_slices_says_amounts_price_average_entry_and_progress(
    journal: Journal, reader: FillNewsReader
) -> None:
    order(journal, DCA_ID, orders_total=4, orders_completed=2)
    fill(journal, DCA_ID, 1, "25", "5")  # 5 USDC per APT
    fill(journal, DCA_ID, 2, "25", "4")  # 6.25
    news = reader.news(FillsRecorded("dca", DCA_ID, 2))
    assert isinstance(news, FillNews)
    assert (news.sold, news.bought) == (Decimal(50), Decimal(9))
    # 50 / 9 = 5.5555…: four significant digits (both amounts have one), half to even.
    assert news.line() == (
        "dca-apt bought 9 APT for 50 USDC at 5.556 USDC per APT (avg entry 5.556, 2 of 4 done)"
    )
    # A third slice: its own price, and the average over all three (75 / 14.5).
    journal.upsert_order(
        OrderSnapshot(
            "dca",
            DCA_ID,
            WALLET,
            USDC.address,
            APT.address,
            "active",
            Decimal(100),
            orders_total=4,
            orders_completed=3,
        ),
        observed_at=START + timedelta(hours=3),
        source="poll",
    )
    fill(journal, DCA_ID, 3, "25", "5.5")
    third = reader.news(FillsRecorded("dca", DCA_ID, 1))
    assert isinstance(third, FillNews)
    assert third.line() == (
        "dca-apt bought 5.5 APT for 25 USDC at 4.545 USDC per APT (avg entry 5.172, 3 of 4 done)"
    )
    assert third.fields() == {
        "strategy": "dca-apt",
        "order_kind": "dca",
        "order_id": DCA_ID,
        "fills": 1,
        "sold_token": "USDC",
        "sold": "25",
        "bought_token": "APT",
        "bought": "5.5",
        "price": "4.545 USDC per APT",
        "average_entry": "5.172 USDC per APT",
        "average_exit": None,
        "done": "3",
        "total": "4",
    }


def test_the_average_entry_counts_only_the_strategys_own_fills(
    journal: Journal, reader: FillNewsReader
) -> None:
    order(journal, DCA_ID, orders_total=4)
    order(journal, OTHER_ID, strategy="someone-else", orders_total=4)
    fill(journal, OTHER_ID, 1, "25", "1")  # 25 USDC per APT: not dca-apt's
    fill(journal, DCA_ID, 2, "30", "6")
    news = reader.news(FillsRecorded("dca", DCA_ID, 1))
    assert isinstance(news, FillNews) and news.average_entry is not None
    assert news.average_entry.value == Decimal(5)
    assert news.done == 1  # no orders_completed from the provider yet: the fills are counted


def test_a_partial_limit_fill_says_how_much_of_the_deposit_is_filled(
    journal: Journal, reader: FillNewsReader
) -> None:
    order(journal, LIMIT_ID, kind="limit", amount_total=Decimal(50), amount_spent=Decimal(30))
    fill(journal, LIMIT_ID, 1, "30", "6.1", kind="limit")
    [line] = order_event_lines(FillsRecorded("limit", LIMIT_ID, 1), reader)
    assert line == (
        "dca-apt bought 6.1 APT for 30 USDC at 4.918 USDC per APT "
        "(avg entry 4.918, 30 of 50 USDC filled)"
    )
    # The partial status says nothing of its own: the fills' line says it.
    assert order_event_lines(OrderPartiallyFilled("limit", LIMIT_ID, "active", "x"), reader) == []


def test_a_sale_says_sold_and_the_average_exit(journal: Journal, reader: FillNewsReader) -> None:
    order(
        journal,
        SELL_ID,
        kind="limit",
        from_token=APT.address,
        to_token=USDC.address,
        amount_total=Decimal(2),
        strategy="take-profit",
    )
    fill(journal, SELL_ID, 1, "2", "12.5", kind="limit")
    news = reader.news(FillsRecorded("limit", SELL_ID, 1))
    assert isinstance(news, FillNews) and not news.buying
    assert news.line() == (
        "take-profit sold 2 APT for 12.5 USDC at 6.25 USDC per APT "
        "(avg exit 6.25, 2 of 2 APT filled)"
    )


def test_a_refund_record_is_no_fill_news(journal: Journal, reader: FillNewsReader) -> None:
    order(journal, DCA_ID)
    refund = FillRecord(tx_id="0x" + "ee" * 32, type="cancelled", from_amount=Decimal(75))
    journal.add_fill("dca", DCA_ID, refund, at=START)
    assert reader.news(FillsRecorded("dca", DCA_ID, 1)) is None
    assert order_event_lines(FillsRecorded("dca", DCA_ID, 1), reader) == []


def test_an_ended_order_says_what_it_spent_got_and_gave_back(
    journal: Journal, reader: FillNewsReader
) -> None:
    order(
        journal,
        DCA_ID,
        status="cancelled",
        amount_spent=Decimal(50),
        to_amount_received=Decimal(9),
    )
    end = reader.news(OrderCancelled("dca", DCA_ID, "active", "cancelled"))
    assert isinstance(end, OrderEnd)
    assert end.returned == Decimal(50)
    assert end.line() == (
        "dca-apt: DCA order 0xd1d1d1d1… cancelled: 50 of 100 USDC → 9 APT at 5.556 USDC per "
        "APT; 50 USDC returned"
    )
    order(
        journal,
        OTHER_ID,
        status="filled",
        amount_spent=Decimal(100),
        to_amount_received=Decimal(20),
    )
    [line] = order_event_lines(OrderFilled("dca", OTHER_ID, "active", "filled"), reader)
    assert line == "dca-apt: DCA order 0xd2d2d2d2… filled: 100 USDC → 20 APT at 5 USDC per APT"


def test_other_order_events_are_words_never_class_names(
    journal: Journal, reader: FillNewsReader
) -> None:
    order(journal, DCA_ID)
    [line] = order_event_lines(OrderCreated("dca", DCA_ID, None, "active"), reader)
    assert line == "dca-apt: DCA order 0xd1d1d1d1… is live"
    assert order_event_lines(FillsRecorded("dca", "0xnone", 1), reader) == []  # not journaled
    [gone] = order_event_lines(OrderCancelled("dca", "0xnone", "active", "cancelled"), reader)
    assert gone == "DCA order 0xnone cancelled (was active)"


class CountingJournal:
    """The journal, counting how often an order is read."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.reads = 0
        self.histories = 0

    def order(self, kind: str, order_id: str) -> OrderView | None:
        self.reads += 1
        return self.journal.order(kind, order_id)

    def fills(self, kind: str, order_id: str) -> list[FillView]:
        return self.journal.fills(kind, order_id)

    def orders(self, *, strategy: str | None = None) -> list[OrderView]:
        return self.journal.orders(strategy=strategy)

    def fills_by_order(self, strategy: str) -> dict[tuple[str, str], list[FillView]]:
        self.histories += 1
        return self.journal.fills_by_order(strategy)


def test_the_average_entry_reads_the_strategys_history_once_then_adds_each_events_fills(
    journal: Journal,
) -> None:
    order(journal, DCA_ID, orders_total=6)
    order(journal, SELL_ID, kind="limit", from_token=APT.address, to_token=USDC.address)
    fill(journal, DCA_ID, 1, "25", "5")
    counting = CountingJournal(journal)
    reader = FillNewsReader(counting, PriceConvention(["USDC"], TokenBook([APT, USDC])))
    first = reader.news(FillsRecorded("dca", DCA_ID, 1))
    assert isinstance(first, FillNews) and str(first.average_entry) == "5 USDC per APT"
    fill(journal, DCA_ID, 2, "25", "4")
    second = reader.news(FillsRecorded("dca", DCA_ID, 1))
    fill(journal, SELL_ID, 3, "2", "13", kind="limit")  # a sale: the entry stays
    reader.news(FillsRecorded("limit", SELL_ID, 1))
    fill(journal, DCA_ID, 4, "30.5", "5.5")
    third = reader.news(FillsRecorded("dca", DCA_ID, 1))
    assert counting.histories == 1
    assert isinstance(second, FillNews) and isinstance(third, FillNews)
    assert str(second.average_entry) == "5.556 USDC per APT"  # 50 / 9
    # 80.5 / 14.5 = 5.5517…, as a fresh reader reading the whole history says too.
    assert str(third.average_entry) == "5.552 USDC per APT"
    fresh = FillNewsReader(journal, PriceConvention(["USDC"], TokenBook([APT, USDC])))
    again = fresh.news(FillsRecorded("dca", DCA_ID, 1))
    assert isinstance(again, FillNews) and again.average_entry == third.average_entry
    assert again.average_exit == third.average_exit is not None


def test_the_fill_alert_carries_amounts_price_and_average_entry_read_once(
    journal: Journal,
) -> None:
    order(journal, DCA_ID, orders_total=4, orders_completed=1)
    fill(journal, DCA_ID, 1, "25", "5")
    counting = CountingJournal(journal)
    reader = FillNewsReader(counting, PriceConvention(["USDC"], TokenBook([APT, USDC])))
    alerter = FakeAlerter()
    sources = AlertSources(alerter, AlertSettings(), orders=journal, news=reader)
    event = FillsRecorded("dca", DCA_ID, 1)
    [line] = order_event_lines(event, reader)  # the console first, as the daemon does
    sources.on_order_event(event)
    assert counting.reads == 1  # the alert reused the console's numbers
    [alert] = alerter.emitted
    assert alert.kind == "fill"
    assert (
        alert.text
        == line
        == ("dca-apt bought 5 APT for 25 USDC at 5 USDC per APT (avg entry 5, 1 of 4 done)")
    )
    assert {k: alert.fields[k] for k in ("sold", "bought", "price", "average_entry")} == {
        "sold": "25",
        "bought": "5",
        "price": "5 USDC per APT",
        "average_entry": "5 USDC per APT",
    }


def test_the_filled_alert_carries_the_orders_numbers(journal: Journal) -> None:
    order(
        journal, DCA_ID, status="filled", amount_spent=Decimal(100), to_amount_received=Decimal(16)
    )
    reader = FillNewsReader(journal, PriceConvention(["USDC"], TokenBook([APT, USDC])))
    alerter = FakeAlerter()
    sources = AlertSources(alerter, AlertSettings(), orders=journal, news=reader)
    sources.on_order_event(OrderFilled("dca", DCA_ID, "active", "filled"))
    [alert] = alerter.emitted
    assert alert.kind == "order_filled"
    assert (
        alert.text
        == "dca-apt: DCA order 0xd1d1d1d1… filled: 100 USDC → 16 APT at 6.25 USDC per APT"
    )
    assert alert.fields["average_price"] == "6.25 USDC per APT"
    assert alert.fields["amount_spent"] == "100"
    assert alert.fields["to_amount_received"] == "16"


def test_without_news_no_fill_alert_is_sent(journal: Journal) -> None:
    order(journal, DCA_ID)
    fill(journal, DCA_ID, 1, "25", "5")
    alerter = FakeAlerter()
    AlertSources(alerter, AlertSettings(), orders=journal).on_order_event(
        FillsRecorded("dca", DCA_ID, 1)
    )
    assert alerter.emitted == []


def test_a_journal_failure_gives_words_without_numbers(journal: Journal) -> None:
    order(journal, DCA_ID)
    reader = FillNewsReader(journal, PriceConvention(["USDC"], TokenBook([APT, USDC])))
    journal.close()
    assert reader.news(FillsRecorded("dca", DCA_ID, 1)) is None


def test_an_order_cancelled_before_any_fill_says_nothing_was_spent(
    journal: Journal, reader: FillNewsReader
) -> None:
    order(
        journal,
        LIMIT_ID,
        kind="limit",
        status="cancelled",
        amount_total=Decimal(50),
        amount_spent=Decimal(0),
        amount_balance=Decimal(50),
    )
    [line] = order_event_lines(OrderCancelled("limit", LIMIT_ID, "active", "cancelled"), reader)
    assert (
        line
        == "dca-apt: limit order 0x11111111… cancelled: nothing spent of 50 USDC; 50 USDC returned"
    )
