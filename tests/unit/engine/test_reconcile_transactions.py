"""Reconciliation records the fate of transactions whose signer died before learning it.

Found by the chaos harness (bench/chaos_kill.py): after a SIGKILL between submit and
commit, the transaction committed on chain but its journal row stayed `signed` forever;
`Reconciler.run()` now looks such rows up by hash.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from bot.chain import Signer, TxOutcome
from bot.clock import SteppedClock
from bot.engine.actions import Swap
from bot.engine.executor import Executor
from bot.engine.reconcile import Reconciler
from bot.engine.recorder import JournalRecorder
from bot.journal.codec import encode_json
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_rig import PaperRig, no_wait, paper_rig

KEY = fixed_key("reconcile-transactions")
WALLET = address_of(KEY)


class DiesBeforeTheOutcome(JournalRecorder):
    """Records the signed transaction, then "dies": the outcome is never written."""

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        return None


class KilledAfterSubmit(JournalRecorder):
    """The process dies once the bytes are out: the outcome is never journaled."""

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        raise RuntimeError("killed after submitting")


def executor_recording_with(rig: PaperRig, recorder: type[JournalRecorder]) -> Executor:
    """The rig's executor, its signer reporting to `recorder` (one that dies, here)."""
    return Executor(
        journal=rig.journal,
        client=rig.client,
        clock=rig.clock,
        wallet=WALLET,
        tokens=rig.world.market.tokens.book,
        signer=Signer(
            rig.node,
            KEY,
            rig.signer.policy,
            recorder(rig.journal, rig.clock),
            sleep=no_wait,
            settings=rig.signer.settings,
        ),
    )


def reconciler(rig: PaperRig) -> Reconciler:
    return Reconciler(
        journal=rig.journal,
        client=rig.client,
        clock=rig.clock,
        wallet=WALLET,
        tokens=rig.world.market.tokens.book,
        node=rig.node,
    )


async def test_a_committed_transaction_left_signed_is_recorded_committed(tmp_path: Path) -> None:
    async with paper_rig(tmp_path, KEY) as rig:
        executor = executor_recording_with(rig, DiesBeforeTheOutcome)
        swap = Swap(key="s", sell="APT", buy="USDC", sell_amount=Decimal(1), slippage=Decimal(1))
        result = await executor.execute("s1", swap)
        [row] = rig.journal.transactions(intent_id=result.intent_id)
        assert row.state == "signed"
        on_chain = rig.world.chain.transaction(row.hash)
        assert on_chain is not None and on_chain.effects is not None

        await reconciler(rig).run()

        stored = rig.journal.transaction(row.hash)
        assert stored is not None and stored.state == "committed"
        assert stored.gas_used == on_chain.effects.gas_used


async def test_a_transaction_that_never_landed_is_expired_only_past_its_expiration(
    tmp_path: Path,
) -> None:
    async with paper_rig(tmp_path, KEY) as rig:
        clock = rig.clock
        assert isinstance(clock, SteppedClock)
        expiration = int(clock.now().timestamp()) + 60
        tx_hash = "0x" + "ab" * 32
        rig.journal.record_transaction(
            tx_hash,
            WALLET,
            0,
            encode_json({"expiration_timestamp_secs": expiration}),
            at=clock.now(),
        )
        await reconciler(rig).run()
        early = rig.journal.transaction(tx_hash)
        assert early is not None and early.state == "signed"  # it could still land

        clock.advance(timedelta(seconds=61))
        await reconciler(rig).run()
        late = rig.journal.transaction(tx_hash)
        assert late is not None and late.state == "expired"


async def test_start_up_waits_for_a_transaction_left_in_flight_until_it_expires(
    tmp_path: Path,
) -> None:
    async with paper_rig(tmp_path, KEY) as rig:
        clock = rig.clock
        assert isinstance(clock, SteppedClock)
        expiration = int(clock.now().timestamp()) + 60
        tx_hash = "0x" + "cd" * 32
        rig.journal.record_transaction(
            tx_hash,
            WALLET,
            0,
            encode_json({"expiration_timestamp_secs": expiration}),
            at=clock.now(),
        )
        waits: list[float] = []

        async def time_passes(seconds: float) -> None:  # the wait, on the world's clock
            waits.append(seconds)
            clock.advance(timedelta(seconds=seconds))

        left = await reconciler(rig).drain_transactions(
            timeout_seconds=30, poll_seconds=10, sleep=time_passes
        )
        assert left == 1 and waits == [10, 10, 10]  # gave up: it could still land
        left = await reconciler(rig).drain_transactions(
            timeout_seconds=120, poll_seconds=10, sleep=time_passes
        )
        assert left == 0 and len(waits) == 6  # expired once the ledger reached its 60 s
        row = rig.journal.transaction(tx_hash)
        assert row is not None and row.state == "expired"


async def test_a_swap_whose_fill_cannot_be_journaled_waits_and_the_others_settle(
    tmp_path: Path,
) -> None:
    from bot.journal import JournalError

    async with paper_rig(tmp_path, KEY) as rig:
        executor = executor_recording_with(rig, KilledAfterSubmit)
        ids = []
        for key in ("a", "b"):
            swap = Swap(
                key=key, sell="APT", buy="USDC", sell_amount=Decimal(1), slippage=Decimal(1)
            )
            ids.append((await executor.execute("s1", swap)).intent_id)
        assert rig.journal.swap_fills() == []
        real = rig.journal.record_swap_fill
        failed: list[int] = []

        def fails_once(fill, *, at):  # type: ignore[no-untyped-def]
            if not failed:
                failed.append(fill.intent_id)
                raise JournalError("disk full")
            return real(fill, at=at)

        rig.journal.record_swap_fill = fails_once  # type: ignore[method-assign]
        first = {r.intent_id: r for r in await reconciler(rig).run(in_flight=False)}
        assert first[ids[0]].state == "unknown" and "disk full" in first[ids[0]].detail
        assert first[ids[1]].state == "confirmed"  # the next intent was not held up
        second = {r.intent_id: r for r in await reconciler(rig).run(in_flight=False)}
        assert second[ids[0]].state == "confirmed"
        assert sorted(f.intent_id for f in rig.journal.swap_fills()) == sorted(ids)
