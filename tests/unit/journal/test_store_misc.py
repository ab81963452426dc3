from __future__ import annotations

import csv
import io
import json
import threading
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.journal import Journal, JournalError, OrderSnapshot, PriceTickRow
from bot.journal.migrate import upgrade

from .conftest import APT, T0, USDC, WALLET

TX = "0x" + "1a" * 32


def test_transaction_recorded_before_submit_then_updated(journal: Journal) -> None:
    intent = journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)
    signed = journal.record_transaction(
        TX.upper().replace("0X", "0x"),
        WALLET,
        2**64 - 1,
        "0x1::panora_swap::router_entry",
        at=T0,
        intent_id=intent.id,
    )
    assert signed.state == "signed" and signed.hash == TX and signed.sequence_number == 2**64 - 1
    # Recording the same signed bytes again is harmless; another sender is a conflict.
    assert journal.record_transaction(TX, WALLET, 2**64 - 1, "x", at=T0) == signed
    with pytest.raises(JournalError, match="already recorded"):
        journal.record_transaction(TX, WALLET, 5, "x", at=T0)
    later = T0 + timedelta(seconds=3)
    journal.update_transaction(TX, "submitted", at=later)
    done = journal.update_transaction(
        TX, "committed", at=later, gas_used=2**128 - 1, vm_status="Executed successfully"
    )
    assert (done.state, done.gas_used, done.vm_status) == (
        "committed",
        2**128 - 1,
        "Executed successfully",
    )
    with pytest.raises(JournalError, match="committed → failed"):
        journal.update_transaction(TX, "failed", at=later)
    assert journal.transactions(intent_id=intent.id) == [done]
    assert journal.transactions(states=["signed"]) == []
    assert journal.transaction(TX) == done
    with pytest.raises(JournalError, match="transaction hash"):
        journal.record_transaction("0x123", WALLET, 1, "x", at=T0)
    with pytest.raises(JournalError, match="no transaction"):
        journal.update_transaction("0x" + "00" * 32, "failed", at=T0)


def test_price_ticks_dedupe_range_and_prune(journal: Journal) -> None:
    rows = [
        PriceTickRow(T0 + timedelta(minutes=m), "0x01::aptos_coin::AptosCoin", Decimal("4.2"))
        for m in range(5)
    ]
    rows.append(PriceTickRow(T0, USDC, Decimal("0.999999999999999999"), "USDC", Decimal("0.25")))
    assert journal.add_price_ticks(rows) == (6, 0)
    assert journal.add_price_ticks([*rows[:2], rows[0]]) == (0, 3)
    ticks = journal.price_ticks(
        APT, since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=3)
    )
    assert [t.timestamp for t in ticks] == [T0 + timedelta(minutes=1), T0 + timedelta(minutes=2)]
    assert ticks[0].token == APT and ticks[0].usd_price == Decimal("4.2")
    usdc = journal.price_ticks(USDC)
    assert usdc[0].usd_price == Decimal("0.999999999999999999") and usdc[0].symbol == "USDC"
    assert journal.prune_price_ticks(T0 + timedelta(minutes=3)) == 4
    assert len(journal.price_ticks(APT)) == 2 and journal.price_ticks(USDC) == []


def test_strategy_state_round_trip(journal: Journal) -> None:
    assert journal.get_state("s", "missing", default={"d": 1}) == {"d": 1}
    value = {"budget": Decimal("0.000000000000000001"), "n": 2**128 - 1, "last": T0, "x": [1]}
    journal.set_state("s", "k", value, at=T0)
    assert journal.get_state("s", "k") == value
    assert isinstance(journal.get_state("s", "k")["budget"], Decimal)
    journal.set_state("s", "k", Decimal("3.5"), at=T0)
    journal.set_state("s", "a", None, at=T0)
    assert journal.get_state("s", "k") == Decimal("3.5")
    assert journal.state_keys("s") == ["a", "k"]
    assert journal.delete_state("s", "a") and not journal.delete_state("s", "a")
    with pytest.raises(JournalError, match="float"):
        journal.set_state("s", "k", 0.5, at=T0)
    assert journal.get_state("s", "k") == Decimal("3.5")


def test_commands_fifo_and_finish(journal: Journal) -> None:
    first = journal.enqueue_command("cancel", {"kind": "dca", "order_id": "1"}, at=T0)
    second = journal.enqueue_command("cancel", {"kind": "limit", "order_id": "2"}, at=T0)
    taken = journal.take_command(at=T0)
    assert taken is not None and taken.id == first and taken.state == "taken"
    assert taken.payload == {"kind": "dca", "order_id": "1"}
    done = journal.finish_command(first, True, "cancelled", at=T0)
    assert (done.state, done.result) == ("done", "cancelled")
    with pytest.raises(JournalError, match="not taken"):
        journal.finish_command(first, True, at=T0)
    nxt = journal.take_command(at=T0)
    assert nxt is not None and nxt.id == second
    journal.finish_command(second, False, "order not found", at=T0)
    assert journal.take_command(at=T0) is None
    assert [c.state for c in journal.commands()] == ["done", "failed"]
    assert journal.command(second) is not None


def test_take_is_atomic_across_journals(url: str) -> None:
    with Journal.open(url) as one, Journal.open(url, migrate=False) as two:
        only = one.enqueue_command("cancel", {}, at=T0)
        got = [one.take_command(at=T0), two.take_command(at=T0)]
        assert [c.id for c in got if c is not None] == [only]
        ids = [two.enqueue_command("cancel", {"n": n}, at=T0) for n in range(40)]
        taken: list[list[int]] = [[], []]

        def drain(journal: Journal, into: list[int]) -> None:
            while (command := journal.take_command(at=T0)) is not None:
                into.append(command.id)

        threads = [
            threading.Thread(target=drain, args=(j, t))
            for j, t in zip((one, two), taken, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(taken[0] + taken[1]) == ids
        assert not set(taken[0]) & set(taken[1])


def test_readonly_reads_and_queues_commands_only(url: str, tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no journal"):
        Journal.open(f"sqlite:///{tmp_path / 'absent.db'}", readonly=True)
    with Journal.open(url) as writer:
        writer.record_intent("s", WALLET, "swap", "k", {}, at=T0)
        with Journal.open(url, readonly=True) as reader:
            assert len(reader.intents()) == 1
            with pytest.raises(JournalError, match="read-only"):
                reader.record_intent("s", WALLET, "swap", "k2", {}, at=T0)
            with pytest.raises(JournalError, match="read-only"):
                reader.take_command(at=T0)
            command_id = reader.enqueue_command("cancel", {"order_id": "1"}, at=T0)
        taken = writer.take_command(at=T0)
        assert taken is not None and taken.id == command_id


def test_open_refuses_an_old_schema_without_migrating(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0001_initial")
    with pytest.raises(JournalError, match="bot journal migrate"):
        Journal.open(url, readonly=True)
    with pytest.raises(JournalError, match="0001_initial"):
        Journal.open(url, migrate=False)
    Journal.open(url).close()
    Journal.open(url, readonly=True).close()


def test_closed_journal_refuses(url: str) -> None:
    journal = Journal.open(url)
    journal.close()
    with pytest.raises(JournalError, match="closed"):
        journal.intents()
    with pytest.raises(JournalError, match="closed"):
        journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)


def _fill_journal(journal: Journal) -> None:
    journal.record_intent(
        "s", WALLET, "create_limit", "k", {"spend_amount": Decimal("0.000000000000000001")}, at=T0
    )
    journal.upsert_order(
        OrderSnapshot(
            kind="limit",
            order_id='L,1"quoted"',
            wallet=WALLET,
            from_token=APT,
            to_token=USDC,
            status="active",
            amount_total=Decimal(2**128 - 1),
            max_rate=Decimal("Infinity"),
        ),
        observed_at=T0,
        source="create",
    )
    journal.record_transaction(TX, WALLET, 2**64 - 1, "x", at=T0)


def test_export_csv_has_exact_values(journal: Journal) -> None:
    _fill_journal(journal)
    out = io.StringIO()
    counts = journal.export("csv", out)
    text = out.getvalue()
    assert counts["orders"] == 1 and counts["fills"] == 0
    assert "# table orders\n" in text and "# table commands\n" in text
    assert "340282366920938463463374607431768211455" in text
    assert "18446744073709551615" in text
    assert ",Infinity," in text
    assert '"L,1""quoted"""' in text
    assert '{""spend_amount"":{""$decimal"":""0.000000000000000001""}}' in text
    assert "2026-01-01T00:00:00.000000+00:00" in text
    sections = [s for s in text.split("# table ") if s]
    orders = next(s for s in sections if s.startswith("orders\n"))
    rows = list(csv.DictReader(io.StringIO(orders.split("\n", 1)[1])))
    assert rows[0]["amount_total"] == str(2**128 - 1) and rows[0]["order_id"] == 'L,1"quoted"'


def test_export_json_has_exact_values(journal: Journal) -> None:
    _fill_journal(journal)
    out = io.StringIO()
    journal.export("json", out, tables=["orders", "transactions"])
    data = json.loads(out.getvalue())
    assert set(data) == {"orders", "transactions"}
    assert data["orders"][0]["amount_total"] == str(2**128 - 1)
    assert data["orders"][0]["max_rate"] == "Infinity"
    assert data["orders"][0]["rate"] is None
    assert data["transactions"][0]["sequence_number"] == "18446744073709551615"
    with pytest.raises(JournalError, match="unknown tables"):
        journal.export("json", out, tables=["secrets"])
