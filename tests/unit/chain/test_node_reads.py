"""Never re-sign what may still commit, never re-sign what did commit (issue #15, item 5).

The paper node lies the ways real ones do: `by_hash` 404 for committed transactions, account
reads from an older ledger version, listings that do not show a transaction. The signer
settles by the account's sequence number and the node's ledger time, and re-signs only
what can never execute.
"""

from __future__ import annotations

import httpx
import pytest

from bot.aptos.transactions import decode_signed_transaction
from bot.chain.errors import (
    ForeignSigner,
    MalformedNodeResponse,
    SubmitOutcomeUnknown,
    WalletPaused,
)
from bot.chain.fate import SequenceFate, check_sequence
from bot.chain.outcome import OutcomeStatus
from harness.paper_chain import (
    NODE_URL,
    OTHER,
    SELL,
    SENDER,
    ChainRig,
    chain_rig,
    router_txdata,
    swap_intent,
)

FUNDED = 1_000_000_000


def sequences(h: ChainRig) -> list[int]:
    return [decode_signed_transaction(b).transaction.sequence_number for b in h.wire.submissions]


def swapped_once(h: ChainRig, amount: int = 1_000) -> bool:
    return h.balance(SENDER, SELL) == FUNDED - amount


def lagging(h: ChainRig, reads: int) -> None:
    """The next `reads` account reads answer from a ledger state before anything we did."""
    h.set_node(stale_seconds=3_600.0)
    h.read_faults.stale_next = reads


@pytest.mark.parametrize("headers", [True, False])
async def test_by_hash_404_for_a_committed_transaction_is_found_by_its_sequence_number(
    headers: bool,
) -> None:
    h = chain_rig()
    h.set_node(ledger_headers=headers)
    h.read_faults.by_hash_404 = 1.0
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.status is OutcomeStatus.COMMITTED and not outcome.resigned
    assert outcome.version is not None and outcome.gas_used > 0
    assert len(h.wire.submissions) == 1 and swapped_once(h)
    assert h.recorder.events[-1] == ("outcome", outcome.tx_hash, "committed")
    # Found well before the expiration: the account is read after a few 404s.
    assert sum(h.time.sleeps) < h.signer.settings.expiration_seconds
    assert not h.signer.allocator.stalled
    await h.close()


async def test_a_stale_account_read_never_gives_a_committed_transaction_up(
    harness: ChainRig,
) -> None:
    # by_hash never shows it, and a lagging node answers the first account reads from a
    # ledger state before the transaction (number 0 unused, an old ledger time).
    h = harness
    h.read_faults.by_hash_404 = 1.0
    lagging(h, 30)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.status is OutcomeStatus.COMMITTED and not outcome.resigned
    assert h.read_faults.stale_next == 0  # settled only by a fresh read
    assert len(h.wire.submissions) == 1 and swapped_once(h)
    # The stale reads carried on past the expiration: the wait outlived it.
    assert h.ledger_secs > outcome.expiration_secs


async def test_stale_unused_is_not_given_up_until_a_read_past_the_expiration(
    harness: ChainRig,
) -> None:
    # The transaction is really lost; account reads lag behind the expiration for a while.
    h = harness
    h.set_node(lose_first=1)
    lagging(h, 40)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.resigned
    (lost,) = outcome.previous
    assert lost.status is OutcomeStatus.EXPIRED
    assert "unused at ledger time" in lost.detail
    assert h.read_faults.stale_next == 0  # every stale read was refused as proof
    assert sequences(h) == [0, 0] and swapped_once(h)


async def test_expired_and_unused_is_given_up_exactly_once(harness: ChainRig) -> None:
    h = harness
    h.set_node(lose_first=1)
    h.read_faults.by_hash_404 = 1.0  # and every read 404s, even for the re-signed one
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and len(outcome.previous) == 1
    statuses = [e[-1] for e in h.recorder.events if e[0] == "outcome"]
    assert statuses == ["expired", "committed"]
    assert len(h.wire.submissions) == 2 and swapped_once(h)


async def test_a_foreign_transaction_using_our_number_while_we_wait(harness: ChainRig) -> None:
    h = harness
    foreign: list[str] = []

    def taken(_: str) -> None:  # ours is in the mempool when another signer takes its number
        if not foreign:
            foreign.append(h.foreign())

    h.on_submit(taken, admitted=True)
    with pytest.raises(ForeignSigner) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    error = info.value
    assert (error.sequence_number, error.foreign_hash) == (0, foreign[0])
    assert error.outcome.status is OutcomeStatus.SUPERSEDED
    assert error.outcome.consumed_by == foreign[0]
    assert h.recorder.events[-1] == ("outcome", error.tx_hash, "superseded")
    assert len(h.wire.submissions) == 1  # nothing re-signed
    assert h.balance(SENDER, SELL) == FUNDED  # ours never ran
    assert "foreign signer detected" in str(error) and str(SENDER) in str(error)
    with pytest.raises(WalletPaused):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.wire.submissions) == 1


async def test_our_number_used_by_another_of_our_transactions_is_resigned(
    harness: ChainRig,
) -> None:
    # The journal knows the transaction that used the number (a transaction an earlier
    # run signed): ours never executes, nothing foreign, re-signed with a fresh number.
    h = harness
    landed: list[str] = []

    def earlier_run_lands(_: str) -> None:
        if not landed:
            landed.append(h.foreign())
            h.recorder.submitted[landed[0]] = (SENDER, 0, {})

    h.on_submit(earlier_run_lands, admitted=True)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.sequence_number == 1
    (superseded,) = outcome.previous
    assert superseded.status is OutcomeStatus.SUPERSEDED and superseded.sequence_number == 0
    assert h.signer.foreign_signer is None
    assert sequences(h) == [0, 1] and swapped_once(h)


async def test_used_number_the_node_never_shows_is_outcome_unknown(harness: ChainRig) -> None:
    h = harness
    h.read_faults.by_hash_404 = 1.0
    h.read_faults.listing_empty = True
    with pytest.raises(SubmitOutcomeUnknown, match="inconclusive"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.wire.submissions) == 1 and swapped_once(h)  # committed, never re-signed
    assert h.signer.allocator.stalled


async def test_a_node_without_account_listings_never_leads_to_a_resign(harness: ChainRig) -> None:
    # Some nodes run without the index behind the account listing (an error answer): the
    # wait stays bounded, the outcome unknown, nothing re-signed.
    h = harness
    h.read_faults.by_hash_404 = 1.0
    h.read_faults.listing_error = True
    with pytest.raises(SubmitOutcomeUnknown, match="could not be read"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.wire.submissions) == 1 and swapped_once(h)


# --- the node client's reads ----------------------------------------------------------------


async def test_account_state_carries_the_ledger_headers(harness: ChainRig) -> None:
    h = harness
    now_us = h.world.chain.ledger_timestamp_us
    state = await h.node.account_state(SENDER)
    assert state.info.sequence_number == 0
    assert (state.ledger_version, state.ledger_timestamp_us) == (h.world.chain.version, now_us)
    await h.signer.execute(router_txdata(), swap_intent())
    h.time.advance(10)
    h.set_node(stale_seconds=5.0)
    h.read_faults.stale_next = 1
    stale = await h.node.account_state(SENDER)
    assert stale.ledger_timestamp_us == h.world.chain.ledger_timestamp_us - 5_000_000
    assert stale.info.sequence_number == 1 and stale.ledger_version == h.world.chain.version
    h.read_faults.stale_next = 1
    h.set_node(stale_seconds=3_600.0)  # before our swap: version 0, number 0 unused
    older = await h.node.account_state(SENDER)
    assert (older.ledger_version, older.info.sequence_number) == (0, 0)


async def test_account_transaction_by_sequence_number(harness: ChainRig) -> None:
    h = harness
    first = await h.signer.execute(router_txdata(), swap_intent())
    foreign = h.foreign()
    found = await h.node.account_transaction(SENDER, 0)
    assert found is not None and found.tx_hash == first.tx_hash and found.success
    assert (found.sender, found.sequence_number) == (SENDER, 0)
    other = await h.node.account_transaction(SENDER, 1)
    assert other is not None and other.tx_hash == foreign
    assert await h.node.account_transaction(SENDER, 2) is None  # not used yet
    check = await check_sequence(h.node, SENDER, first.tx_hash, 1, 0)
    assert check.fate is SequenceFate.CONSUMED and check.consumer == foreign


def _listing_node(status: int, body: object) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body, headers={"x-aptos-chain-id": "4"})

    return httpx.MockTransport(answer)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (410, {"message": "pruned", "error_code": "version_pruned"}),
        (404, {"message": "no account", "error_code": "account_not_found"}),
        (200, []),
        (
            200,
            [
                {
                    "type": "user_transaction",
                    "hash": "0x" + "ab" * 32,
                    "sender": str(SENDER),
                    "sequence_number": "8",
                    "success": True,
                    "vm_status": "Executed successfully",
                    "gas_used": "1",
                    "version": "9",
                }
            ],
        ),
    ],
)
async def test_account_transaction_not_shown(status: int, body: object) -> None:
    from bot.chain.node import NodeClient

    async with NodeClient(NODE_URL, transport=_listing_node(status, body)) as node:
        assert await node.account_transaction(SENDER, 7) is None


@pytest.mark.parametrize(
    "entry",
    [
        {"sender": str(OTHER), "hash": "0x" + "ab" * 32},
        {"sender": str(SENDER), "hash": "0xnothex"},
        {"sender": str(SENDER), "hash": "0x" + "ab" * 32, "type": "pending_transaction"},
    ],
)
async def test_account_transaction_of_the_wrong_shape_is_malformed(entry: dict[str, str]) -> None:
    from bot.chain.node import NodeClient

    body = [
        {
            "type": "user_transaction",
            "sequence_number": "7",
            "success": True,
            "vm_status": "Executed successfully",
            "gas_used": "1",
            "version": "9",
            **entry,
        }
    ]
    async with NodeClient(NODE_URL, transport=_listing_node(200, body)) as node:
        with pytest.raises(MalformedNodeResponse):
            await node.account_transaction(SENDER, 7)
