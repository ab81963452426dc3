"""Reconciliation links a create to an order only on evidence the bot produced itself.

A stepped paper world (on-chain order style: createOrder hands back a deposit to sign),
a real journal file, the real executor. A process death between two writes is played by
an exception no `except Exception` catches, raised from the journal write it interrupts:
what is on disk afterwards is exactly what a SIGKILL there leaves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.engine.actions import CreateLimit
from bot.engine.reconcile import Reconciler, Resolution
from bot.journal import Journal
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("reconcile-evidence")
WALLET = address_of(KEY)


class Killed(BaseException):
    """The process "dies" here: nothing after this write happens."""


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PaperRig]:
    async with paper_rig(tmp_path, KEY) as r:
        yield r


def limit(key: str = "l-1", amount: str = "1") -> CreateLimit:
    return CreateLimit(key=key, sell="APT", buy="USDC", amount=Decimal(amount), rate=Decimal(1000))


@contextmanager
def dies_before(journal: Journal, method: str, when: Callable[..., bool]) -> Iterator[None]:
    """Raise `Killed` instead of the `journal.<method>` write for which `when(...)` holds."""
    original = getattr(journal, method)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if when(*args, **kwargs):
            raise Killed
        return original(*args, **kwargs)

    setattr(journal, method, wrapped)
    try:
        yield
    finally:
        setattr(journal, method, original)


def reconciler(rig: PaperRig, grace: timedelta = timedelta(minutes=15)) -> Reconciler:
    return Reconciler(
        journal=rig.journal,
        client=rig.client,
        clock=rig.clock,
        wallet=WALLET,
        tokens=rig.world.market.tokens.book,
        node=rig.node,
        grace=grace,
    )


async def test_killed_between_order_journaled_and_intent_confirmed_ends_confirmed(
    rig: PaperRig,
) -> None:
    with (
        dies_before(rig.journal, "set_intent_state", lambda _i, state, **_: state == "confirmed"),
        pytest.raises(Killed),
    ):
        await rig.executor.execute("s1", limit())
    [intent] = rig.journal.intents()
    [stored] = rig.journal.orders(wallet=WALLET)
    assert (intent.state, stored.intent_id) == ("sent", intent.id)  # the window's state
    # A look-alike of our wallet (same terms, unlinked) must not confuse it either.
    other = await rig.executor.execute("s2", limit())
    assert other.state == "confirmed"

    [resolution] = await reconciler(rig).run()

    assert resolution == Resolution(
        intent.id, "confirmed", stored.order_id, "the order journaled with it"
    )
    settled = rig.journal.intent(intent.id)
    assert settled is not None and (settled.state, settled.order_id) == (
        "confirmed",
        stored.order_id,
    )


@pytest.mark.parametrize(
    ("noted", "why"),
    [(True, "named by its answer"), (False, "named by its committed deposit")],
)
async def test_killed_before_its_order_was_journaled_it_is_linked_by_its_own_evidence(
    rig: PaperRig, noted: bool, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not noted:  # a journal written before answers were noted: the deposit decides
        monkeypatch.setattr(rig.journal, "note_intent_order", lambda *_: None)
    with (
        dies_before(rig.journal, "upsert_order", lambda *_, source, **__: source == "create"),
        pytest.raises(Killed),
    ):
        await rig.executor.execute("s1", limit())
    [intent] = rig.journal.intents()
    [deposit] = rig.journal.transactions(intent_id=intent.id)
    [listed] = rig.world.market.limit.orders_of(WALLET)
    assert (intent.state, deposit.state) == ("sent", "committed")
    assert rig.journal.orders() == []  # the money is in the order; the journal has no order

    [resolution] = await reconciler(rig).run()

    assert (resolution.state, resolution.order_id) == ("confirmed", listed.order_id)
    assert resolution.detail == why
    stored = rig.journal.order("limit", listed.order_id)
    assert stored is not None and (stored.intent_id, stored.strategy) == (intent.id, "s1")


def _sent_create(journal: Journal, rig: PaperRig, key: str) -> int:
    now = rig.clock.now()
    action = {
        "type": "create_limit",
        "sell": "APT",
        "buy": "USDC",
        "spend_token": rig.world.market.tokens.find("APT").address,
        "spend_amount": Decimal(1),
        "rate": Decimal(1000),
    }
    intent = journal.record_intent("s1", WALLET, "create_limit", key, action, at=now)
    journal.set_intent_state(intent.id, "sent", at=now)
    return intent.id


def _deposit(journal: Journal, rig: PaperRig, intent_id: int, state: str, n: int) -> None:
    tx_hash = "0x" + f"{n:02x}" * 32
    summary = '{"intent": {"kind": "deposit", "order_id": "0xnever"}}'
    journal.record_transaction(tx_hash, WALLET, n, summary, at=rig.clock.now(), intent_id=intent_id)
    if state != "signed":
        journal.update_transaction(tx_hash, state, at=rig.clock.now())


@pytest.mark.parametrize("state", ["failed", "expired"])
async def test_a_deposit_that_failed_or_expired_fails_the_create_at_once(
    rig: PaperRig, state: str
) -> None:
    intent_id = _sent_create(rig.journal, rig, "dead")
    _deposit(rig.journal, rig, intent_id, state, 1)
    [resolution] = await reconciler(rig).run()  # well within the grace period
    assert (resolution.state, resolution.order_id) == ("failed", None)
    assert "unfunded" in resolution.detail


async def test_a_deposit_that_may_still_commit_keeps_the_create_unknown_past_the_grace(
    rig: PaperRig,
) -> None:
    intent_id = _sent_create(rig.journal, rig, "open")
    _deposit(rig.journal, rig, intent_id, "submitted", 2)
    settle = reconciler(rig, grace=timedelta(0))
    settle.node = None  # the node is out of reach: its fate stays unknown
    rig.clock.advance(timedelta(hours=1))
    [resolution] = await settle.run()
    assert resolution.state == "unknown" and "may still commit" in resolution.detail


@pytest.mark.parametrize(
    ("state", "said"), [("committed", "committed"), ("submitted", "may still")]
)
async def test_an_intent_whose_money_moved_is_never_failed_by_hand(
    rig: PaperRig, state: str, said: str
) -> None:
    intent_id = _sent_create(rig.journal, rig, "moved")
    rig.journal.set_intent_state(intent_id, "unknown", at=rig.clock.now())
    _deposit(rig.journal, rig, intent_id, state, 3)
    with pytest.raises(ValueError, match=f"signed a transaction that {said}"):
        await reconciler(rig).settle_by_hand(intent_id, order_id=None, reason="I think not")
    intent = rig.journal.intent(intent_id)
    assert intent is not None and intent.state == "unknown"
