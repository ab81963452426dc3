from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.journal import Journal, JournalError

from .conftest import APT, T0, USDC, WALLET

ACTION = {"spend_token": APT, "spend_amount": Decimal("1.25"), "to": USDC}


def test_record_intent_is_durable_and_idempotent(url: str) -> None:
    with Journal.open(url) as journal:
        first = journal.record_intent("dca1", WALLET, "create_dca", "k-1", ACTION, at=T0)
        assert first.state == "planned" and not first.existing
        again = journal.record_intent(
            "dca1", WALLET.upper().replace("0X", "0x"), "create_dca", "k-1", {"x": 1}, at=T0
        )
        assert again.existing and again.id == first.id
        assert again.action == ACTION  # the stored action, untouched
        other = journal.record_intent("dca2", WALLET, "create_dca", "k-1", ACTION, at=T0)
        assert other.id != first.id
    # A new Journal on the same file (a restart) finds it, exact.
    with Journal.open(url) as reopened:
        found = reopened.intent(first.id)
        assert found is not None
        assert found.action["spend_amount"] == Decimal("1.25")
        assert reopened.intent_by_key("dca1", "k-1") == found
        assert [i.id for i in reopened.intents(states=["planned"])] == [first.id, other.id]


def test_state_machine_and_history(journal: Journal) -> None:
    intent = journal.record_intent("s", WALLET, "swap", "k", ACTION, at=T0)
    tx = "0x" + "0F" * 32
    journal.set_intent_state(intent.id, "sent", at=T0 + timedelta(seconds=1), tx_hash=tx)
    journal.set_intent_state(intent.id, "unknown", at=T0 + timedelta(seconds=2), detail="timeout")
    done = journal.set_intent_state(
        intent.id, "confirmed", at=T0 + timedelta(seconds=3), order_id="o-9"
    )
    assert done.state == "confirmed" and done.order_id == "o-9"
    assert done.tx_hash == tx.lower()
    history = journal.intent_history(intent.id)
    assert [(h.from_state, h.state) for h in history] == [
        (None, "planned"),
        ("planned", "sent"),
        ("sent", "unknown"),
        ("unknown", "confirmed"),
    ]
    assert history[2].detail == "timeout"
    assert [h.at for h in history] == sorted(h.at for h in history)
    with pytest.raises(JournalError, match=r"confirmed → sent \(final state\)"):
        journal.set_intent_state(intent.id, "sent", at=T0)
    assert journal.intent_history(intent.id) == history


@pytest.mark.parametrize(
    ("path", "bad"),
    [
        ([], "confirmed"),
        ([], "unknown"),
        (["sent"], "planned"),
        (["sent"], "reconciled"),
        (["sent", "failed"], "confirmed"),
        (["sent", "unknown", "reconciled"], "failed"),
        ([], "bogus"),
    ],
)
def test_illegal_moves_are_refused_naming_both_states(
    journal: Journal, path: list[str], bad: str
) -> None:
    intent = journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)
    for state in path:
        journal.set_intent_state(intent.id, state, at=T0)
    current = path[-1] if path else "planned"
    with pytest.raises(JournalError, match=f"{current} → {bad}"):
        journal.set_intent_state(intent.id, bad, at=T0)
    stored = journal.intent(intent.id)
    assert stored is not None and stored.state == current


def test_planned_may_fail_without_being_sent(journal: Journal) -> None:
    intent = journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)
    failed = journal.set_intent_state(intent.id, "failed", at=T0, error="rule: amount")
    assert failed.error == "rule: amount"


def test_bad_inputs_are_refused(journal: Journal) -> None:
    with pytest.raises(JournalError, match="intent kind"):
        journal.record_intent("s", WALLET, "withdraw_all", "k", {}, at=T0)
    with pytest.raises(JournalError, match="wallet"):
        journal.record_intent("s", "alice", "swap", "k", {}, at=T0)
    with pytest.raises(JournalError, match="float"):
        journal.record_intent("s", WALLET, "swap", "k", {"amount": 1.5}, at=T0)
    with pytest.raises(JournalError, match="naive"):
        journal.record_intent("s", WALLET, "swap", "k", {}, at=T0.replace(tzinfo=None))
    with pytest.raises(JournalError, match="no intent"):
        journal.set_intent_state(12345, "sent", at=T0)
    assert journal.intents() == []


def test_spent_today_sums_confirmed_spend_of_the_utc_day(journal: Journal) -> None:
    def confirmed(key: str, amount: object, token: str = APT, hours: int = 1) -> None:
        at = T0 + timedelta(hours=hours)
        action = {"spend_token": token, "spend_amount": amount}
        intent = journal.record_intent("dca", WALLET, "swap", key, action, at=at)
        journal.set_intent_state(intent.id, "sent", at=at)
        journal.set_intent_state(intent.id, "confirmed", at=at)

    confirmed("a", Decimal("0.000000000000000001"))
    confirmed("b", Decimal("2.5"), token="0x01::aptos_coin::AptosCoin")  # same token
    confirmed("c", "3")  # a decimal string counts too
    confirmed("d", Decimal("100"), token=USDC)  # another token
    confirmed("e", Decimal("100"), hours=24)  # the next UTC day
    journal.record_intent(
        "dca", WALLET, "swap", "f", {"spend_token": APT, "spend_amount": Decimal(7)}, at=T0
    )  # still planned
    journal.record_intent("other", WALLET, "swap", "g", {"spend_token": APT}, at=T0)
    day = T0.date()
    assert journal.spent_today("dca", WALLET, APT, day) == Decimal("5.500000000000000001")
    assert journal.spent_today(None, WALLET, APT, day) == Decimal("5.500000000000000001")
    assert journal.spent_today("dca", WALLET, APT, day, states=["planned", "confirmed"]) == (
        Decimal("12.500000000000000001")
    )
    assert journal.spent_today("other", WALLET, APT, day) == 0
    assert journal.spent_today("dca", WALLET, APT, day + timedelta(days=1)) == 100


def test_intent_survives_a_killed_process(url: str) -> None:
    import subprocess
    import sys

    script = (
        "import os, sys\n"
        "from datetime import datetime, UTC\n"
        "from bot.journal import Journal\n"
        "j = Journal.open(sys.argv[1])\n"
        "i = j.record_intent('s', sys.argv[2], 'swap', 'crash', {}, at=datetime.now(UTC))\n"
        "print(i.id, flush=True)\n"
        "os._exit(9)  # no close, no commit hooks, no atexit\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, url, WALLET],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 9, done.stderr
    with Journal.open(url) as journal:
        found = journal.intent_by_key("s", "crash")
        assert found is not None and found.id == int(done.stdout.strip())


def test_spent_today_never_rounds(journal: Journal) -> None:
    amounts = [Decimal(2**128 - 1), Decimal("0.000000000000000001"), Decimal("1E+40")]
    for n, amount in enumerate(amounts):
        intent = journal.record_intent(
            "s", WALLET, "swap", f"k{n}", {"spend_token": APT, "spend_amount": amount}, at=T0
        )
        journal.set_intent_state(intent.id, "sent", at=T0)
        journal.set_intent_state(intent.id, "confirmed", at=T0)
    expected = Decimal(f"{2**128 - 1 + 10**40}.000000000000000001")
    assert journal.spent_today("s", WALLET, APT, T0.date()) == expected
