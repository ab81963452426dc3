"""Whose order a record is, and what the bot's own transactions say about an intent's order."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.api.models import LimitOrder
from bot.config import AlertSettings
from bot.engine.events import ForeignOrder
from bot.engine.evidence import deposits_of, hash_key, order_tx_hashes
from bot.engine.observe import ForeignOrders, foreign_wallet
from bot.journal import TransactionView
from bot.ops.alert_sources import AlertSources
from tests.support.alerts import FakeAlerter

OURS = "0x" + "ab" * 32
OTHER = "0x" + "cd" * 32
AT = datetime(2026, 3, 1, tzinfo=UTC)


def limit_record(**extra: Any) -> LimitOrder:
    return LimitOrder.model_validate(
        {
            "svcTxId": "0x01",
            "fromToken": {"address": "0x1::aptos_coin::AptosCoin"},
            "toToken": {"address": "0xbae"},
            "status": "active",
            "fromTokenAmount": "1",
            "rateToTokenPerFromToken": "1000",
            "txDetails": [{"txId": "0xAA" + "0" * 62, "type": "created"}],
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("page", "extra", "claim"),
    [
        (None, {}, None),  # the spec's record names nobody: the page's (ours)
        (OURS, {}, None),
        ("0xAB" + "ab" * 31, {"toWalletAddress": "ab" * 32}, None),  # other spellings of ours
        ("", {"walletAddress": None}, None),  # empty claims say nothing
        (OTHER, {}, OTHER),  # the page is another wallet's list
        (OURS, {"toWalletAddress": OTHER}, OTHER),  # the record says whose it is
        (OURS, {"ownerAddress": OTHER}, OTHER),
        (None, {"wallet": "somebody"}, "somebody"),  # no address: not ours either
        (None, {"owner": 7}, "7"),
    ],
)
def test_a_record_is_ours_unless_it_or_its_page_names_someone_else(
    page: str | None, extra: dict[str, Any], claim: str | None
) -> None:
    assert foreign_wallet(limit_record(**extra), OURS, page) == claim


def test_foreign_ids_are_counted_every_time_and_reported_once_in_bounded_memory() -> None:
    seen = ForeignOrders(remember=2)
    assert [seen.first_sighting("dca", i) for i in ("a", "a", "b", "a")] == [
        True,
        False,
        True,
        False,
    ]
    assert seen.first_sighting("limit", "a")  # another kind, another order
    assert (seen.ignored, seen.distinct) == (5, 2)  # "dca a" was forgotten for room


def tx(state: str, summary: dict[str, Any], tx_hash: str = "0x" + "aa" * 32) -> TransactionView:
    return TransactionView(tx_hash, OURS, 0, json.dumps(summary), state, 1, None, None, AT, AT)


def test_a_committed_deposit_names_its_order_by_summary_and_by_argument() -> None:
    summary = {"arguments": ["0xORDER", "30000000", ["0xnested"]], "intent": {"order_id": "0xO"}}
    deposits = deposits_of([tx("committed", summary)])
    assert deposits.committed == ("aa" * 32,) and deposits.named == ("0xO",)
    assert deposits.in_arguments("0xorder") and deposits.in_arguments("0xNESTED")
    assert not deposits.in_arguments("0xother")
    assert not (deposits.open or deposits.dead)


@pytest.mark.parametrize(
    ("states", "open_", "dead"),
    [
        ([], False, False),  # nothing signed (escrow style, or never sent)
        (["signed"], True, False),
        (["unknown"], True, False),
        (["failed"], False, True),
        (["expired", "failed"], False, True),
        (["expired", "submitted"], True, False),  # a replacement may still commit
    ],
)
def test_what_an_intents_transactions_leave_open(
    states: list[str], open_: bool, dead: bool
) -> None:
    deposits = deposits_of([tx(s, {"intent": {"order_id": "0xO"}}) for s in states])
    assert (deposits.open, deposits.dead, deposits.named) == (open_, dead, ())


def test_an_unreadable_summary_names_nothing() -> None:
    view = TransactionView(
        "0x" + "bb" * 32, OURS, 0, "{not json", "committed", 1, None, None, AT, AT
    )
    deposits = deposits_of([view])
    assert deposits.committed == ("bb" * 32,) and deposits.named == () and not deposits.arguments


def test_an_order_records_tx_details_in_comparable_form() -> None:
    assert order_tx_hashes(limit_record()) == {hash_key("0xaa" + "0" * 62)}


def test_a_foreign_order_becomes_one_alert_naming_whose_it_is() -> None:
    alerter = FakeAlerter()
    sources = AlertSources(alerter, AlertSettings())
    sources.on_order_event(ForeignOrder("limit", "0x" + "12" * 32, OTHER))
    [alert] = alerter.emitted
    assert alert.kind == "foreign_order"
    assert (
        alert.text
        == "Limit order 0x12121212… listed for our wallet belongs to 0xcdcdcdcd…: ignored"
    )
    assert alert.fields["listed_for"] == OTHER
