"""Two wallets on one journal (SQLite and PostgreSQL): neither sees nor takes the other's
intents, orders, transactions, strategy state, pauses or commands; the heartbeat rows."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.engine.pauses import paused_strategies, store_pause
from bot.journal import DaemonView, Journal, JournalError, OrderSnapshot
from bot.journal.copy import copy_journal

from .conftest import T0, USDC, WALLET

APT = "0x1::aptos_coin::AptosCoin"
OTHER = "0x" + "cd" * 32
TX_A = "0x" + "1a" * 32
TX_B = "0x" + "2b" * 32


def snapshot(wallet: str, order_id: str) -> OrderSnapshot:
    return OrderSnapshot(
        kind="limit",
        order_id=order_id,
        wallet=wallet,
        from_token=APT,
        to_token=USDC,
        status="active",
        amount_total=Decimal("1.5"),
        strategy="ladder",  # the same strategy name in both wallets
    )


@pytest.fixture
def pair(url: str) -> Iterator[tuple[Journal, Journal]]:
    with Journal.open(url, wallet=WALLET) as a, Journal.open(url, wallet=OTHER) as b:
        yield a, b


def test_intents_of_the_same_strategy_and_key_are_each_wallets_own(
    pair: tuple[Journal, Journal],
) -> None:
    a, b = pair
    first = a.record_intent("ladder", WALLET, "swap", "k1", {"n": 1}, at=T0)
    second = b.record_intent("ladder", OTHER, "swap", "k1", {"n": 2}, at=T0)
    assert not first.existing and not second.existing and first.id != second.id
    assert [i.id for i in a.intents()] == [first.id]
    assert [i.id for i in b.intents()] == [second.id]
    assert a.intent_states("ladder") == {"k1": "planned"} == b.intent_states("ladder")
    assert b.intent(first.id) is None and b.intent_history(first.id) == []
    assert b.intent_by_key("ladder", "k1") == replace(second, existing=False)
    with pytest.raises(JournalError, match=f"no intent {first.id}"):
        b.set_intent_state(first.id, "sent", at=T0)
    with pytest.raises(JournalError, match="in the journal of"):
        b.record_intent("ladder", WALLET, "swap", "k2", {}, at=T0)
    assert a.intent(first.id) is not None and a.intent(first.id).state == "planned"  # type: ignore[union-attr]


def test_orders_and_transactions_are_each_wallets_own(pair: tuple[Journal, Journal]) -> None:
    a, b = pair
    a.upsert_order(snapshot(WALLET, "L-A"), observed_at=T0, source="create")
    b.upsert_order(snapshot(OTHER, "L-B"), observed_at=T0, source="create")
    assert [o.order_id for o in a.orders()] == ["L-A"]
    assert [o.order_id for o in b.orders(wallet=WALLET)] == []  # never another wallet's
    assert b.order("limit", "L-A") is None and b.transitions("limit", "L-A") == []
    assert [o.order_id for o in b.orders_page()[0]] == ["L-B"] and b.orders_page()[1] == 1
    with pytest.raises(JournalError, match="in the journal of"):
        b.upsert_order(snapshot(WALLET, "L-A"), observed_at=T0, source="poll")
    a.record_transaction(TX_A, WALLET, 1, "swap", at=T0)
    b.record_transaction(TX_B, OTHER, 1, "swap", at=T0)
    assert b.transaction(TX_A) is None and [t.hash for t in b.transactions()] == [TX_B]
    with pytest.raises(JournalError, match="no transaction"):
        b.update_transaction(TX_A, "committed", at=T0)
    with pytest.raises(JournalError, match="in the journal of"):
        b.record_transaction(TX_A, WALLET, 1, "swap", at=T0)
    with Journal.open(a.engine.url, readonly=True) as everything:
        assert {o.order_id for o in everything.orders()} == {"L-A", "L-B"}
        assert len(everything.transactions()) == 2


def test_strategy_state_and_pauses_are_each_wallets_own(pair: tuple[Journal, Journal]) -> None:
    a, b = pair
    a.set_state("ladder", "rung", Decimal("1.5"), at=T0)
    assert b.get_state("ladder", "rung") is None and b.states("ladder") == {}
    b.set_state("ladder", "rung", 7, at=T0)
    assert a.get_state("ladder", "rung") == Decimal("1.5") and b.get_state("ladder", "rung") == 7
    assert store_pause(a, "ladder", True, at=T0)
    assert paused_strategies(a) == {"ladder": T0} and paused_strategies(b) == {}
    assert not b.delete_state("@daemon", "paused:ladder")
    assert paused_strategies(a) == {"ladder": T0}


def test_a_command_for_one_wallet_is_taken_by_its_daemon_only(
    pair: tuple[Journal, Journal],
) -> None:
    a, b = pair
    with Journal.open(a.engine.url, readonly=True, wallet=WALLET) as tool:
        queued = tool.enqueue_command("pause", {"strategy": "ladder"}, at=T0)
    assert b.take_command(at=T0) is None
    assert b.command(queued) is None and b.commands() == []
    with pytest.raises(JournalError, match=f"no command {queued}"):
        b.finish_command(queued, True, at=T0)
    taken = a.take_command(at=T0)
    assert taken is not None and taken.id == queued and taken.wallet == WALLET
    a.finish_command(queued, True, "ladder paused", at=T0)
    assert a.command(queued).state == "done"  # type: ignore[union-attr]
    # A tool opened for no wallet may name the wallet it queues for.
    with Journal.open(a.engine.url, readonly=True) as everything:
        for_b = everything.enqueue_command("resume", {"strategy": "ladder"}, at=T0, wallet=OTHER)
    assert a.take_command(at=T0) is None
    assert b.take_command(at=T0).id == for_b  # type: ignore[union-attr]


def test_the_export_of_a_wallets_journal_holds_its_rows_only(
    pair: tuple[Journal, Journal],
) -> None:
    a, b = pair
    a.record_intent("ladder", WALLET, "swap", "k", {}, at=T0)
    b.record_intent("ladder", OTHER, "swap", "k", {}, at=T0)
    a.upsert_order(snapshot(WALLET, "L-A"), observed_at=T0, source="create")
    b.upsert_order(snapshot(OTHER, "L-B"), observed_at=T0, source="create")
    a.set_state("ladder", "x", 1, at=T0)
    b.set_state("ladder", "x", 2, at=T0)
    out = io.StringIO()
    counts = b.export("json", out)
    data = json.loads(out.getvalue())
    assert counts["intents"] == counts["orders"] == counts["order_transitions"] == 1
    assert {row["wallet"] for row in data["intents"] + data["orders"]} == {OTHER}
    assert [row["value_json"] for row in data["strategy_state"]] == ["2"]


def test_rows_no_wallet_was_named_for_go_to_the_first_daemon_that_claims_them(
    pair: tuple[Journal, Journal],
) -> None:
    a, b = pair
    with Journal.open(a.engine.url) as unnamed:  # a tool of before, opened for no wallet
        unnamed.set_state("@daemon", "paused:ladder", {"since": T0}, at=T0)
        unnamed.set_state("ladder", "rung", 3, at=T0)
        queued = unnamed.enqueue_command("pause", {"strategy": "other"}, at=T0)
    a.set_state("ladder", "rung", 1, at=T0)  # a's own value is kept
    assert a.claim_unnamed() == 2  # the pause and the command
    assert paused_strategies(a) == {"ladder": T0} and a.get_state("ladder", "rung") == 1
    assert a.take_command(at=T0).id == queued  # type: ignore[union-attr]
    assert b.claim_unnamed() == 1  # the key a held already stays unnamed, nothing else
    assert paused_strategies(b) == {} and b.get_state("ladder", "rung") == 3


def test_each_wallets_daemon_row(pair: tuple[Journal, Journal]) -> None:
    a, b = pair
    row = DaemonView(WALLET, "host-a", 10, "live", "running", "ok", "1.0", 2, 60, T0, T0)
    a.record_daemon(row)
    a.record_daemon(replace(row, beat_at=T0 + timedelta(minutes=1), last_tick_at=T0))
    b.record_daemon(replace(row, wallet=OTHER, host="host-b", health="degraded: x"))
    with pytest.raises(JournalError, match="in the journal of"):
        b.record_daemon(row)
    assert [d.host for d in a.daemons()] == ["host-a"]
    with Journal.open(a.engine.url, readonly=True) as everything:
        listed = everything.daemons()
    assert [(d.wallet, d.host, d.health) for d in listed] == [
        (WALLET, "host-a", "ok"),
        (OTHER, "host-b", "degraded: x"),
    ]
    assert listed[0].beat_at == T0 + timedelta(minutes=1) and listed[0].last_tick_at == T0


def test_a_journal_is_opened_for_one_wallet_only(url: str) -> None:
    with Journal.open(url, wallet=WALLET.upper().replace("0X", "0x")) as journal:
        assert journal.wallet == WALLET
        journal.bind_wallet(WALLET)  # the same: nothing changes
        with pytest.raises(JournalError, match="not 0x"):
            journal.bind_wallet(OTHER)
    with pytest.raises(JournalError, match="wallet"):
        Journal.open(url, wallet="not-an-address")


def test_a_journal_of_two_wallets_copies_exactly(
    pair: tuple[Journal, Journal], tmp_path: Path
) -> None:
    a, b = pair
    for journal, wallet in ((a, WALLET), (b, OTHER)):
        journal.record_intent("ladder", wallet, "swap", "k", {}, at=T0)
        journal.set_state("ladder", "rung", wallet[-4:], at=T0)
        journal.set_state("@daemon", "paused:ladder", {"since": T0}, at=T0)
        journal.enqueue_command("pause", {"strategy": "ladder"}, at=T0)
        journal.record_daemon(
            DaemonView(wallet, "h", 1, "live", "running", "ok", "1", 1, 60, T0, T0)
        )
    destination = f"sqlite:///{tmp_path / 'copy.db'}"
    with Journal.open(destination) as target:
        copied = copy_journal(a.engine, target.engine, size=1)
    assert {c.table: c.rows for c in copied}["strategy_state"] == 4
    with Journal.open(destination, readonly=True, wallet=OTHER) as copy_b:
        assert copy_b.get_state("ladder", "rung") == OTHER[-4:]
        assert [d.wallet for d in copy_b.daemons()] == [OTHER]
        assert len(copy_b.intents()) == len(copy_b.commands()) == 1
    assert b.get_state("ladder", "rung") == OTHER[-4:]
