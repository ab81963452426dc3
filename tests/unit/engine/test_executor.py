"""The executor and reconciliation against an in-process paper world and a real journal."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.api import PanoraClient
from bot.chain import InMemoryRecorder, NodeClient, Signer
from bot.clock import SteppedClock
from bot.config import PaperFaultSettings
from bot.engine.actions import CancelLimit, CreateDca, CreateLimit, Swap
from bot.engine.executor import Executor
from bot.engine.reconcile import Reconciler
from bot.journal import Journal
from bot.paper.world import PaperWorld
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_rig import paper_rig

KEY = fixed_key("executor-tests")
WALLET = address_of(KEY)
USDC, APT = "USDC", "APT"


@dataclass
class Rig:
    world: PaperWorld
    journal: Journal
    client: PanoraClient
    executor: Executor
    node: NodeClient

    def provider_orders(self, kind: str) -> list[Any]:
        engine = self.world.market.dca if kind == "dca" else self.world.market.limit
        return engine.orders_of(WALLET)


def make_rig(tmp_path: Path, **paper: Any) -> Callable[[], Any]:
    async def factory() -> AsyncIterator[Rig]:
        async with paper_rig(tmp_path, KEY, client_attempts=1, **paper) as r:
            yield Rig(r.world, r.journal, r.client, r.executor, r.node)

    return factory


@pytest.fixture
async def onchain(tmp_path: Path) -> AsyncIterator[Rig]:
    async for rig in make_rig(tmp_path)():
        yield rig


@pytest.fixture
async def escrow(tmp_path: Path) -> AsyncIterator[Rig]:
    async for rig in make_rig(tmp_path, order_style="escrow")():
        yield rig


def dca(key: str = "dca-1") -> CreateDca:
    return CreateDca(
        key=key,
        sell=USDC,
        buy=APT,
        amount=Decimal(30),
        orders=3,
        interval_value=1,
        interval_period="hour",
    )


async def test_escrow_style_create_is_confirmed_once_per_key(escrow: Rig) -> None:
    first = await escrow.executor.execute("s1", dca())
    again = await escrow.executor.execute("s1", dca())
    assert first.state == "confirmed" and first.order_id
    assert again.duplicate and again.order_id == first.order_id
    assert len(escrow.provider_orders("dca")) == 1  # a repeated tick never doubles an order
    stored = escrow.journal.order("dca", first.order_id)
    assert stored is not None and (stored.strategy, stored.intent_id) == ("s1", first.intent_id)
    history = [i.state for i in escrow.journal.intent_history(first.intent_id)]
    assert history == ["planned", "sent", "confirmed"]


async def test_onchain_create_signs_the_deposit_and_records_the_transaction(onchain: Rig) -> None:
    result = await onchain.executor.execute("s1", dca())
    assert result.state == "confirmed" and result.tx_hash
    [order] = onchain.provider_orders("dca")
    assert order.order_id == result.order_id and order.status == "active"
    [tx] = onchain.journal.transactions(intent_id=result.intent_id)
    assert (tx.hash, tx.state) == (result.tx_hash, "committed")


async def test_onchain_cancel_signs_the_withdraw(onchain: Rig) -> None:
    created = await onchain.executor.execute(
        "s1", CreateLimit(key="l-1", sell=APT, buy=USDC, amount=Decimal(1), rate=Decimal(1000))
    )
    assert created.order_id is not None
    cancelled = await onchain.executor.execute(
        "s1", CancelLimit(key="c-1", order_id=created.order_id)
    )
    assert cancelled.state == "confirmed" and cancelled.tx_hash
    assert onchain.world.market.limit.get(created.order_id).status == "cancelled"
    # Each transaction is filed under the intent it was signed for.
    for result in (created, cancelled):
        [tx] = onchain.journal.transactions(intent_id=result.intent_id)
        assert tx.hash == result.tx_hash


async def test_a_signer_recording_elsewhere_is_refused(onchain: Rig) -> None:
    # The executor reads back from its journal what was signed for an intent: a signer
    # recording anywhere else would turn "sent" into "not sent" on an error.
    signer = onchain.executor.signer
    assert signer is not None
    elsewhere = Signer(onchain.node, KEY, signer.policy, InMemoryRecorder())
    with pytest.raises(ValueError, match="JournalRecorder"):
        Executor(
            journal=onchain.journal,
            client=onchain.client,
            clock=onchain.executor.clock,
            wallet=WALLET,
            tokens=onchain.executor.tokens,
            signer=elsewhere,
        )


async def test_a_swap_is_signed_and_committed(onchain: Rig) -> None:
    before = onchain.world.market.balance(WALLET, onchain.world.market.tokens.find("USDC"))
    result = await onchain.executor.execute(
        "s1", Swap(key="sw-1", sell=APT, buy=USDC, sell_amount=Decimal(1))
    )
    assert result.state == "confirmed"
    after = onchain.world.market.balance(WALLET, onchain.world.market.tokens.find("USDC"))
    assert after > before


async def test_a_refused_request_fails_the_intent(escrow: Rig) -> None:
    result = await escrow.executor.execute(
        "s1", CreateLimit(key="big", sell=APT, buy=USDC, amount=Decimal(1_000_000), rate=Decimal(1))
    )
    assert result.state == "failed" and "insufficient balance" in result.detail
    assert escrow.provider_orders("limit") == []


async def test_a_hostile_route_is_refused_and_the_refusal_journaled(tmp_path: Path) -> None:
    async for rig in make_rig(tmp_path, test_pay_to="0x" + "66" * 32)():
        result = await rig.executor.execute(
            "s1", Swap(key="sw", sell=APT, buy=USDC, sell_amount=Decimal(1))
        )
        assert result.state == "failed"
        intent = rig.journal.intent(result.intent_id)
        assert intent is not None and "refused before signing" in (intent.error or "")
        assert rig.journal.transactions(intent_id=result.intent_id) == []
        assert rig.world.chain.submitted == 0


async def test_an_unreadable_answer_is_held_never_linked_on_looks_nor_failed(
    tmp_path: Path,
) -> None:
    faults = PaperFaultSettings(malformed_body=Decimal(1), endpoints=["/dca/v1/createOrder"])
    async for rig in make_rig(tmp_path, order_style="escrow", faults=faults)():
        result = await rig.executor.execute("s1", dca())
        assert result.state == "unknown"
        [order] = rig.provider_orders("dca")  # the provider did create it; its answer was lost
        clock = rig.world.market.clock
        assert isinstance(clock, SteppedClock)
        reconciler = Reconciler(
            journal=rig.journal,
            client=rig.client,
            clock=clock,
            wallet=WALLET,
            tokens=rig.world.market.tokens.book,
            node=rig.node,
            grace=timedelta(minutes=10),
        )
        [early] = await reconciler.run()
        assert (early.state, early.order_id) == ("unknown", None)
        clock.advance(timedelta(minutes=11))
        [late] = await reconciler.run()
        # Nothing the bot produced links them (no answer, no deposit): the look-alike is not
        # linked (it could be anyone's), nor is the intent failed (a second order).
        assert (late.state, late.order_id) == ("unknown", None)
        assert late.detail.startswith("held: ") and order.order_id in late.detail
        intent = rig.journal.intent(result.intent_id)
        assert intent is not None and (intent.state, intent.order_id) == ("unknown", None)
        assert rig.journal.order("dca", order.order_id) is None

        # A person settles it: failing it is refused while an order looks like its own
        # (the strategy would place a second one); `--link` takes only an order that can be.
        with pytest.raises(ValueError, match=f"looks like intent {result.intent_id}'s"):
            await reconciler.settle_by_hand(result.intent_id, order_id=None, reason="r")
        with pytest.raises(ValueError, match="lists no dca order 0xnope"):
            await reconciler.settle_by_hand(result.intent_id, order_id="0xnope", reason="r")
        with pytest.raises(ValueError, match="no intent 999"):
            await reconciler.settle_by_hand(999, order_id=None, reason="r")
        linked = await reconciler.settle_by_hand(
            result.intent_id, order_id=order.order_id, reason="I placed it"
        )
        assert (linked.state, linked.order_id) == ("confirmed", order.order_id)
        intent = rig.journal.intent(result.intent_id)
        assert intent is not None and (intent.state, intent.order_id) == (
            "confirmed",
            order.order_id,
        )
        journaled = rig.journal.order("dca", order.order_id)
        assert journaled is not None and journaled.intent_id == result.intent_id
        with pytest.raises(ValueError, match="is confirmed, not unknown"):
            await reconciler.settle_by_hand(result.intent_id, order_id=None, reason="again")


async def test_a_held_intent_failed_by_hand_frees_its_key(tmp_path: Path) -> None:
    faults = PaperFaultSettings(server_error=Decimal(1), endpoints=["/dca/v1/createOrder"])
    async for rig in make_rig(tmp_path, order_style="escrow", faults=faults)():
        held = await rig.executor.execute("s1", dca())
        assert held.state == "unknown"
        again = await rig.executor.execute("s1", dca())
        assert again.duplicate  # the key is blocked while its outcome is unknown
        reconciler = Reconciler(
            journal=rig.journal,
            client=rig.client,
            clock=rig.world.market.clock,
            wallet=WALLET,
            tokens=rig.world.market.tokens.book,
        )
        failed = await reconciler.settle_by_hand(held.intent_id, order_id=None, reason="checked")
        assert failed.state == "failed" and failed.detail == "failed by hand: checked"
        retried = await rig.executor.execute("s1", dca())
        assert not retried.duplicate and retried.intent_id != held.intent_id


async def test_an_intent_with_nothing_to_match_fails_after_the_grace_period(escrow: Rig) -> None:
    now = escrow.world.market.clock.now()
    intent = escrow.journal.record_intent(
        "s1",
        WALLET,
        "create_dca",
        "lost",
        {
            "type": "create_dca",
            "sell": "USDC",
            "buy": "APT",
            "spend_token": "USDC",
            "spend_amount": Decimal(5),
            "orders": 1,
            "interval_value": 1,
            "interval_period": "hour",
        },
        at=now,
    )
    escrow.journal.set_intent_state(intent.id, "sent", at=now)
    reconciler = Reconciler(
        journal=escrow.journal,
        client=escrow.client,
        clock=escrow.world.market.clock,
        wallet=WALLET,
        tokens=escrow.world.market.tokens.book,
        grace=timedelta(minutes=10),
    )
    [early] = await reconciler.run()
    assert early.state == "unknown"
    clock = escrow.world.market.clock
    assert isinstance(clock, SteppedClock)
    clock.advance(timedelta(minutes=11))
    [late] = await reconciler.run()
    assert late.state == "failed"


@pytest.mark.parametrize("error", [RecursionError, AssertionError, KeyError])
async def test_an_unexpected_error_mid_action_ends_unknown_never_stuck_sent(
    onchain: Rig, error: type[Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*_: object, **__: object) -> None:
        raise error("a bug deep inside")

    monkeypatch.setattr(onchain.client, "create_dca_order", broken)
    result = await onchain.executor.execute("s1", dca(f"bug-{error.__name__}"))
    assert result.state == "unknown"
    assert f"unexpected {error.__name__}" in result.detail
    intent = onchain.journal.intent(result.intent_id)
    assert intent is not None and intent.state == "unknown"  # the reconciler settles it
