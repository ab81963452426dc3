"""A node that lags, prunes or load-balances cannot make the bot trade twice (#15, item 5).

The paper world over loopback, its node lying the ways real ones do (seeded read faults):
`by_hash` 404 for transactions it holds, account reads from an older ledger state (headers
included), another signer of the wallet taking a sequence number. The bot's real executor,
signer and journal trade through it; the paper ledger is the truth: each swap moves the
wallet's money once, or not at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from bot.chain import Signer, TxOutcome
from bot.engine.actions import Swap
from bot.engine.executor import Executor
from bot.engine.reconcile import Reconciler
from bot.engine.recorder import JournalRecorder
from bot.paper.faults import NodeReadFault, NodeReadFaults
from tests.support.tampering import KEY, WALLET, HostileRig, hostile_rig

SECONDS_PER_POLL = 5


@asynccontextmanager
async def lying_node(
    tmp_path: Path,
    *,
    by_hash_404: float = 0.0,
    stale_account: float = 0.0,
    stale_seconds: float = 30.0,
    lose_first: int = 0,
    foreign_first: int = 0,
    recorder: type[JournalRecorder] = JournalRecorder,
) -> AsyncIterator[HostileRig]:
    """The hostile rig, its node given read faults; each poll of the signer moves the
    paper clock on `SECONDS_PER_POLL` seconds (so expirations pass). The signer records
    through `recorder`."""
    async with hostile_rig(tmp_path) as r:
        chain = r.world.chain
        chain.settings = replace(
            chain.settings,
            lose_first=lose_first,
            foreign_first=foreign_first,
            stale_seconds=stale_seconds,
        )
        r.world.node_api.read_faults = NodeReadFaults(
            by_hash_404=by_hash_404, stale_account=stale_account, seed=5
        )
        old = r.executor
        assert old.signer is not None
        clock = r.world.market.clock

        async def ledger_moves(seconds: float) -> None:
            if seconds > 0:
                clock.advance(timedelta(seconds=SECONDS_PER_POLL))
            await asyncio.sleep(0)

        signer = Signer(
            r.node,
            KEY,
            old.signer.policy,
            recorder(r.journal, clock),
            sleep=ledger_moves,
            settings=replace(
                old.signer.settings, poll_interval_seconds=1.0, first_poll_delay_seconds=0.5
            ),
        )
        executor = Executor(
            journal=r.journal,
            client=r.client,
            clock=clock,
            wallet=WALLET,
            tokens=r.world.market.tokens.book,
            signer=signer,
            reference=old.reference,
            limits=old.limits,
        )
        r = replace(r, executor=executor)
        r.snapshot(WALLET)
        yield r


def swap(key: str = "sw-1") -> Swap:
    return Swap(key=key, sell="APT", buy="USDC", sell_amount=Decimal(1))


def assert_swapped_once(r: HostileRig) -> None:
    """The wallet sold exactly 1 APT (plus gas for the transactions that ran) and was paid."""
    apt, usdc = (r.world.market.tokens.find(s).address for s in ("APT", "USDC"))
    before, after = r.start_balances[WALLET], r.balances(WALLET)
    ran = [t for t in r.world.chain.transactions() if t.effects is not None]
    assert len(ran) == 1, [t.hash for t in ran]  # one swap's effect, not two
    gas = before[apt] - after[apt] - r.units("APT")
    assert 0 < gas <= 200_000 * 100
    assert after[usdc] > before.get(usdc, 0)


def assert_nothing_moved(r: HostileRig) -> None:
    assert r.balances(WALLET) == r.start_balances[WALLET]
    assert not [t for t in r.world.chain.transactions() if t.effects is not None]


def tx_states(r: HostileRig, intent_id: int) -> list[str]:
    return [t.state for t in r.journal.transactions(intent_id=intent_id)]


async def test_by_hash_404_for_a_committed_swap_is_confirmed_never_resigned(
    tmp_path: Path,
) -> None:
    async with lying_node(tmp_path, by_hash_404=1.0) as r:
        result = await r.executor.execute("s1", swap())
        assert result.state == "confirmed", result.detail
        assert tx_states(r, result.intent_id) == ["committed"]
        assert r.world.chain.submitted == 1  # never re-signed
        assert r.world.node_api.read_faults.counts[NodeReadFault.BY_HASH_404] >= 3
        assert_swapped_once(r)


async def test_stale_account_reads_give_nothing_up_until_a_fresh_read(tmp_path: Path) -> None:
    # by_hash never shows the swap, and every account read lags ten minutes: until the
    # ledger is ten minutes past the commit, reads say "number unused" — but from a ledger
    # time before the expiration, which proves nothing. A fresh enough read finds it.
    async with lying_node(tmp_path, by_hash_404=1.0, stale_account=1.0, stale_seconds=600) as r:
        start = r.world.market.clock.now()
        result = await r.executor.execute("s1", swap())
        assert result.state == "confirmed", result.detail
        assert r.world.market.clock.now() - start >= timedelta(seconds=600)  # waited it out
        assert tx_states(r, result.intent_id) == ["committed"]
        assert r.world.chain.submitted == 1
        assert_swapped_once(r)


async def test_a_lost_swap_is_given_up_once_past_its_expiration_and_resigned_once(
    tmp_path: Path,
) -> None:
    async with lying_node(
        tmp_path, by_hash_404=0.5, stale_account=0.5, stale_seconds=120, lose_first=1
    ) as r:
        result = await r.executor.execute("s1", swap())
        assert result.state == "confirmed", result.detail
        assert tx_states(r, result.intent_id) == ["expired", "committed"]
        assert r.world.chain.submitted == 2
        assert_swapped_once(r)


async def test_a_foreign_signer_taking_our_number_pauses_the_wallet(tmp_path: Path) -> None:
    async with lying_node(tmp_path, foreign_first=1) as r:
        result = await r.executor.execute("s1", swap())
        [foreign] = r.world.chain.foreign.values()
        assert result.state in ("failed", "unknown"), result
        assert "foreign signer detected" in (result.detail or "")
        assert foreign.hash in (result.detail or "")
        assert tx_states(r, result.intent_id) == ["expired"]  # ours never executed
        assert r.world.chain.submitted == 1  # nothing re-signed
        signer = r.executor.signer
        assert signer is not None and signer.foreign_signer is not None
        assert signer.foreign_signer.foreign_hash == foreign.hash
        paused = await r.executor.execute("s1", swap("sw-2"))
        assert paused.state == "failed" and "trading paused" in (paused.detail or "")
        assert r.world.chain.submitted == 1
        reconciler = Reconciler(
            journal=r.journal,
            client=r.client,
            clock=r.world.market.clock,
            wallet=WALLET,
            tokens=r.world.market.tokens.book,
            node=r.node,
        )
        await reconciler.run()
        intent = r.journal.intent(result.intent_id)
        assert intent is not None and intent.state == "failed"
        assert_nothing_moved(r)


async def test_reconciliation_finds_a_foreign_signer_from_the_journal(tmp_path: Path) -> None:
    # A transaction an earlier run signed and never heard of again; another signer's
    # transaction used its number: the reconciler says so, and settles ours as expired.
    async with lying_node(tmp_path, by_hash_404=1.0) as r:
        chain, clock = r.world.chain, r.world.market.clock
        foreign = chain.commit_foreign(WALLET)
        tx_hash = "0x" + "ab" * 32
        r.journal.record_transaction(
            tx_hash,
            WALLET,
            foreign.sequence_number,
            f'{{"expiration_timestamp_secs": {int(clock.now().timestamp()) + 60}}}',
            at=clock.now(),
        )
        seen = []
        reconciler = Reconciler(
            journal=r.journal,
            client=r.client,
            clock=clock,
            wallet=WALLET,
            tokens=r.world.market.tokens.book,
            node=r.node,
            on_foreign_signer=seen.append,
        )
        await reconciler.run()
        row = r.journal.transaction(tx_hash)
        assert row is not None and row.state == "expired"
        assert reconciler.foreign_signer is not None and seen == [reconciler.foreign_signer]
        assert reconciler.foreign_signer.foreign_hash == foreign.hash
        assert_nothing_moved(r)


class DiesBeforeTheOutcome(JournalRecorder):
    """Records the signed transaction, then "dies" before writing its outcome."""

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        raise RuntimeError("the process died here")


async def test_reconciling_a_swap_whose_hash_the_node_404s_confirms_it(tmp_path: Path) -> None:
    # The signer died before writing the outcome; every by_hash answer is a 404. With the
    # grace period over, the old rule ("not found, past the expiration") failed the intent
    # and the strategy could swap again; the account's sequence number says it committed.
    async with lying_node(tmp_path, by_hash_404=1.0, recorder=DiesBeforeTheOutcome) as r:
        result = await r.executor.execute("s1", swap())
        assert result.state == "unknown" and tx_states(r, result.intent_id) == ["signed"]
        r.world.market.clock.advance(timedelta(hours=1))  # past the expiration and the grace
        reconciler = Reconciler(
            journal=r.journal,
            client=r.client,
            clock=r.world.market.clock,
            wallet=WALLET,
            tokens=r.world.market.tokens.book,
            node=r.node,
            grace=timedelta(0),
        )
        await reconciler.run()
        assert tx_states(r, result.intent_id) == ["committed"]
        intent = r.journal.intent(result.intent_id)
        assert intent is not None and intent.state == "confirmed"
        assert r.world.chain.submitted == 1
        assert_swapped_once(r)
