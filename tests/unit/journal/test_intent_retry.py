"""A key whose intent failed runs again; every other state keeps the key taken (issue 22)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from bot.engine.risk import COUNTED_STATES
from bot.journal import Journal

from .conftest import APT, T0, WALLET

ACTION = {"spend_token": APT, "spend_amount": Decimal("2")}


def _failed(journal: Journal, key: str = "k") -> int:
    intent = journal.record_intent("s", WALLET, "create_dca", key, ACTION, at=T0)
    journal.set_intent_state(intent.id, "sent", at=T0)
    journal.set_intent_state(intent.id, "failed", at=T0, error="not sent: unfunded")
    return intent.id


def test_a_failed_key_is_retired_and_recorded_afresh(journal: Journal) -> None:
    old = _failed(journal)
    later = T0 + timedelta(minutes=5)
    fresh = journal.record_intent("s", WALLET, "create_dca", "k", {"new": True}, at=later)
    assert not fresh.existing and fresh.id != old
    assert (fresh.state, fresh.idempotency_key, fresh.action) == ("planned", "k", {"new": True})
    assert journal.intent_by_key("s", "k") == fresh
    retired = journal.intent(old)
    assert retired is not None
    # Kept as history: same state, error and action, under a key naming its id.
    assert (retired.state, retired.error, retired.action) == (
        "failed",
        "not sent: unfunded",
        ACTION,
    )
    assert retired.idempotency_key == f"k~failed-{old}"
    last = journal.intent_history(old)[-1]
    assert (last.from_state, last.state, last.at) == ("failed", "failed", later)
    assert last.detail == f"retired for a retry: kept as k~failed-{old}"
    assert journal.intent_states("s") == {f"k~failed-{old}": "failed", "k": "planned"}


def test_a_key_may_fail_and_run_again_several_times(journal: Journal) -> None:
    first = _failed(journal)
    second = _failed(journal)
    third = journal.record_intent("s", WALLET, "create_dca", "k", ACTION, at=T0)
    assert len({first, second, third.id}) == 3
    keys = [i.idempotency_key for i in journal.intents(strategy="s")]
    assert keys == [f"k~failed-{first}", f"k~failed-{second}", "k"]


@pytest.mark.parametrize(
    "path",
    [[], ["sent"], ["sent", "unknown"], ["sent", "confirmed"], ["sent", "unknown", "reconciled"]],
)
def test_every_other_state_keeps_the_key_taken(journal: Journal, path: list[str]) -> None:
    intent = journal.record_intent("s", WALLET, "create_dca", "k", ACTION, at=T0)
    for state in path:
        journal.set_intent_state(intent.id, state, at=T0)
    again = journal.record_intent("s", WALLET, "create_dca", "k", {"other": 1}, at=T0)
    assert again.existing and again.id == intent.id and again.action == ACTION
    assert len(journal.intents()) == 1


def test_a_retried_key_is_counted_once_in_the_day_spend(journal: Journal) -> None:
    _failed(journal)
    fresh = journal.record_intent("s", WALLET, "create_dca", "k", ACTION, at=T0)
    journal.set_intent_state(fresh.id, "sent", at=T0)
    # The failed attempt spent nothing: only the retry counts, in flight or done.
    assert journal.spent_today("s", WALLET, APT, T0.date(), states=COUNTED_STATES) == 2
    journal.set_intent_state(fresh.id, "confirmed", at=T0)
    assert journal.spent_today("s", WALLET, APT, T0.date(), states=COUNTED_STATES) == 2
    assert "failed" not in COUNTED_STATES


def test_another_strategy_with_the_same_key_is_untouched(journal: Journal) -> None:
    other = journal.record_intent("t", WALLET, "create_dca", "k", ACTION, at=T0)
    journal.set_intent_state(other.id, "failed", at=T0)
    fresh = journal.record_intent("s", WALLET, "create_dca", "k", ACTION, at=T0)
    assert not fresh.existing
    stored = journal.intent(other.id)
    assert stored is not None and stored.idempotency_key == "k"  # "t"'s key, not retired
