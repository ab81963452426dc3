"""A signing that fails before any transaction was signed is `failed`, not `unknown` (issue 22).

The recorder holds a transaction's hash before its bytes leave: no hash for the intent
means nothing was signed, so nothing can ever execute and the key is free to run again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.aptos.address import Address
from bot.chain import AccountNotFound, ChainError, NodeUnavailable, SubmitOutcomeUnknown
from bot.engine.actions import CreateDca
from bot.engine.reconcile import Reconciler
from harness.paper_signing import fixed_key
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("executor-not-sent")
HASH = "0x" + "ab" * 32


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PaperRig]:
    async with paper_rig(tmp_path, KEY, client_attempts=1) as opened:
        yield opened


def dca(key: str = "dca-1") -> CreateDca:
    return CreateDca(
        key=key,
        sell="USDC",
        buy="APT",
        amount=Decimal(30),
        orders=3,
        interval_value=1,
        interval_period="hour",
    )


def unfunded(wallet: str) -> AccountNotFound:
    return AccountNotFound(
        404,
        f"account {wallet} does not exist on chain; fund it first",
        error_code="account_not_found",
        endpoint="GET /v1/accounts/{a}",
    )


def failing(
    rig: PaperRig, error: ChainError, *, signed: str | None = None
) -> Callable[..., Awaitable[Any]]:
    """A signer's `execute` raising `error`, after recording `signed` as sent when given."""

    async def execute(tx_data: Any, intent: Any, *, intent_id: int | None = None) -> Any:
        if signed is not None:
            await rig.signer.recorder.before_submit(
                signed, Address.parse(rig.wallet), 0, {}, intent_id=intent_id
            )
        raise error

    return execute


@pytest.mark.parametrize(
    "error",
    [
        lambda wallet: unfunded(wallet),
        lambda _: NodeUnavailable("connection reset", endpoint="POST /v1/transactions/simulate"),
    ],
)
async def test_an_error_before_signing_fails_the_intent_as_not_sent(
    rig: PaperRig, monkeypatch: pytest.MonkeyPatch, error: Callable[[str], ChainError]
) -> None:
    monkeypatch.setattr(rig.signer, "execute", failing(rig, error(rig.wallet)))
    result = await rig.executor.execute("s1", dca())
    assert (result.state, result.tx_hash) == ("failed", None)
    assert result.detail.startswith("not sent: ")
    intent = rig.journal.intent(result.intent_id)
    assert intent is not None and intent.state == "failed"
    assert (intent.error or "").startswith("not sent: ")
    assert [h.state for h in rig.journal.intent_history(intent.id)] == [
        "planned",
        "sent",
        "failed",
    ]
    # Nothing for the reconciler to settle: the intent is over.
    reconciler = Reconciler(
        journal=rig.journal,
        client=rig.client,
        clock=rig.clock,
        wallet=rig.wallet,
        tokens=rig.world.market.tokens.book,
        node=rig.node,
    )
    assert await reconciler.run() == []


async def test_the_unfunded_key_runs_again_once_funded(
    rig: PaperRig, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(rig.signer, "execute", failing(rig, unfunded(rig.wallet)))
        first = await rig.executor.execute("s1", dca())
    assert first.state == "failed"
    again = await rig.executor.execute("s1", dca())  # the real signer: the wallet is funded
    assert not again.duplicate and again.intent_id != first.intent_id
    assert again.state == "confirmed" and again.order_id and again.tx_hash
    assert [o.order_id for o in rig.world.market.dca.orders_of(rig.wallet)] == [again.order_id]
    retired = rig.journal.intent(first.intent_id)
    assert retired is not None and retired.idempotency_key == f"dca-1~failed-{first.intent_id}"
    # A third tick returning the key finds the confirmed intent: never a second order.
    third = await rig.executor.execute("s1", dca())
    assert third.duplicate and third.intent_id == again.intent_id


@pytest.mark.parametrize(
    "error",
    [
        SubmitOutcomeUnknown(HASH, "connection dropped after sending"),
        NodeUnavailable("timed out", endpoint="GET /v1/transactions/by_hash/{h}"),
    ],
)
async def test_an_error_after_signing_stays_unknown_with_its_hash(
    rig: PaperRig, monkeypatch: pytest.MonkeyPatch, error: ChainError
) -> None:
    monkeypatch.setattr(rig.signer, "execute", failing(rig, error, signed=HASH))
    result = await rig.executor.execute("s1", dca())
    assert (result.state, result.tx_hash) == ("unknown", HASH)
    again = await rig.executor.execute("s1", dca())
    assert again.duplicate and again.state == "unknown"  # never resent blindly
    [tx] = rig.journal.transactions(intent_id=result.intent_id)
    assert tx.hash == HASH


async def test_a_lost_submit_answer_is_unknown_even_unrecorded(
    rig: PaperRig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SubmitOutcomeUnknown names a transaction that left: unknown whatever the recorder says.
    error = SubmitOutcomeUnknown(HASH, "connection dropped after sending")
    monkeypatch.setattr(rig.signer, "execute", failing(rig, error))
    result = await rig.executor.execute("s1", dca())
    assert (result.state, result.tx_hash) == ("unknown", HASH)
