"""A swap's fill from its committed transaction: the chain's balance changes, else bounds."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from bot.aptos.tokens import Token, TokenBook
from bot.engine.swap_fills import swap_fill
from bot.journal.views import TransactionView

T0 = datetime(2026, 5, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = Token(decimals=8, symbol="APT", coin_type="0x1::aptos_coin::AptosCoin", fa_address="0xa")
USDC = Token(decimals=6, symbol="USDC", fa_address="0x" + "bb" * 32)
BOOK = TokenBook([APT, USDC])


def tx(
    changes: dict[str, int] | None,
    *,
    state: str = "committed",
    exact_out: bool = False,
    committed_at: datetime | None = T0,
) -> TransactionView:
    summary = {
        "function": "0x1::router::swap",
        "intent": {
            "kind": "swap",
            "sell": USDC.address,
            "sell_amount": "100000000",
            "buy": APT.address,
            "min_out": "1900000000",
            "exact_out": exact_out,
        },
    }
    return TransactionView(
        hash="0x" + "12" * 32,
        sender=WALLET,
        sequence_number=1,
        payload_summary=json.dumps(summary),
        state=state,
        intent_id=7,
        gas_used=1000,
        vm_status="Executed successfully",
        created_at=T0,
        updated_at=T0 + timedelta(seconds=9),
        gas_unit_price=100,
        balance_changes=changes,
        committed_at=committed_at,
    )


def test_the_amounts_are_the_senders_balance_changes_under_any_spelling_of_the_token() -> None:
    # APT reported under its FA address; the fill names it as the journal's orders do.
    fill = swap_fill(7, tx({USDC.address: -100_000_000, "0xa": 1_993_000_000}), BOOK, at=T0)
    assert fill is not None
    assert (fill.sold_token, fill.sold_amount) == (USDC.address, Decimal(100))
    assert (fill.bought_token, fill.bought_amount) == (APT.address, Decimal("19.93"))
    assert (fill.source, fill.time, fill.intent_id) == ("chain", T0, 7)


def test_without_balance_changes_the_fill_is_the_intents_bounds_and_says_so() -> None:
    later = T0 + timedelta(minutes=1)
    fill = swap_fill(7, tx(None, committed_at=None), BOOK, at=later)
    assert fill is not None
    assert (fill.sold_amount, fill.bought_amount, fill.source, fill.time) == (
        Decimal(100),
        Decimal(19),
        "bounds",
        later,
    )


def test_changes_that_make_no_sense_for_the_swap_fall_back_to_bounds() -> None:
    odd = swap_fill(7, tx({USDC.address: 5, APT.address: -3}), BOOK, at=T0)  # sold < 0
    assert odd is not None and odd.source == "bounds"


def test_no_fill_for_a_transaction_that_did_not_commit_or_names_unknown_tokens() -> None:
    assert swap_fill(7, tx({USDC.address: -1}, state="failed"), BOOK, at=T0) is None
    assert swap_fill(7, tx({USDC.address: -1, APT.address: 1}), TokenBook([APT]), at=T0) is None
