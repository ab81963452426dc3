"""Never re-sign what may still commit, never re-sign what did commit (issue #15, item 5).

The fake node lies the ways real ones do: `by_hash` 404 for committed transactions, account
reads from an older ledger version, listings that do not show a transaction. The signer
settles by the account's sequence number and the node's ledger time, and re-signs only
what can never execute.
"""

from __future__ import annotations

import httpx
import pytest

from bot.aptos.address import Address
from bot.aptos.transactions import decode_signed_transaction
from bot.chain.errors import (
    ForeignSigner,
    MalformedNodeResponse,
    SubmitOutcomeUnknown,
    WalletPaused,
)
from bot.chain.fate import SequenceFate, check_sequence
from bot.chain.outcome import OutcomeStatus
from tests.unit.chain.fake_node import START_US, FakeNode
from tests.unit.chain.support import (
    BUY,
    NODE_URL,
    OTHER,
    SELL,
    SENDER,
    Harness,
    make_harness,
    router_txdata,
    swap_intent,
)

S, B = str(Address.parse(SELL.fa_address or "")), str(Address.parse(BUY.fa_address or ""))


def sequences(h: Harness) -> list[int]:
    return [decode_signed_transaction(b).transaction.sequence_number for b in h.fake.submissions]


def swapped_once(h: Harness, amount: int = 1_000) -> bool:
    return h.fake.balance(SENDER, S) == 1_000_000_000 - amount


@pytest.mark.parametrize("headers", [True, False])
async def test_by_hash_404_for_a_committed_transaction_is_found_by_its_sequence_number(
    headers: bool,
) -> None:
    h = make_harness(FakeNode(ledger_headers=headers))
    h.fake.hide_all_by_hash = True
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.status is OutcomeStatus.COMMITTED and not outcome.resigned
    assert outcome.version is not None and outcome.gas_used == 1_000
    assert len(h.fake.submissions) == 1 and swapped_once(h)
    assert h.recorder.events[-1] == ("outcome", outcome.tx_hash, "committed")
    # Found well before the expiration: the account is read after a few 404s.
    assert sum(h.time.sleeps) < h.signer.settings.expiration_seconds
    assert not h.signer.allocator.stalled
    await h.close()


async def test_a_stale_account_read_never_gives_a_committed_transaction_up(
    harness: Harness,
) -> None:
    # by_hash never shows it, and a lagging node answers the first account reads from a
    # ledger state before the transaction (number 0 unused, ledger time at the start).
    h = harness
    h.fake.hide_all_by_hash = True
    stale = 30
    h.fake.stale_accounts.extend([(0, START_US)] * stale)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.status is OutcomeStatus.COMMITTED and not outcome.resigned
    assert not h.fake.stale_accounts  # settled only by a fresh read
    assert len(h.fake.submissions) == 1 and swapped_once(h)
    # The stale reads carried on past the expiration: the wait outlived it.
    assert h.fake.ledger_secs > outcome.expiration_secs


async def test_stale_unused_is_not_given_up_until_a_read_past_the_expiration(
    harness: Harness,
) -> None:
    # The transaction is really lost; account reads lag behind the expiration for a while.
    h = harness
    h.fake.lose_next = 1
    h.fake.stale_accounts.extend([(0, START_US)] * 40)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.resigned
    (lost,) = outcome.previous
    assert lost.status is OutcomeStatus.EXPIRED
    assert "unused at ledger time" in lost.detail
    assert not h.fake.stale_accounts  # every stale read was refused as proof
    assert sequences(h) == [0, 0] and swapped_once(h)


async def test_expired_and_unused_is_given_up_exactly_once(harness: Harness) -> None:
    h = harness
    h.fake.lose_next = 1
    h.fake.hide_all_by_hash = True  # and every read 404s, even for the re-signed one
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and len(outcome.previous) == 1
    statuses = [e[-1] for e in h.recorder.events if e[0] == "outcome"]
    assert statuses == ["expired", "committed"]
    assert len(h.fake.submissions) == 2 and swapped_once(h)


async def test_a_foreign_transaction_using_our_number_while_we_wait(harness: Harness) -> None:
    h = harness
    foreign: list[str] = []
    # Ours is in the mempool when another signer's transaction takes its number.
    h.fake.after_admit = lambda _: foreign.append(h.fake.consume_sequence(SENDER))
    with pytest.raises(ForeignSigner) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    error = info.value
    assert (error.sequence_number, error.foreign_hash) == (0, foreign[0])
    assert error.outcome.status is OutcomeStatus.SUPERSEDED
    assert error.outcome.consumed_by == foreign[0]
    assert h.recorder.events[-1] == ("outcome", error.tx_hash, "superseded")
    assert len(h.fake.submissions) == 1  # nothing re-signed
    assert h.fake.balance(SENDER, S) == 1_000_000_000  # ours never ran
    assert "foreign signer detected" in str(error) and str(SENDER) in str(error)
    with pytest.raises(WalletPaused):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.fake.submissions) == 1


async def test_our_number_used_by_another_of_our_transactions_is_resigned(
    harness: Harness,
) -> None:
    # The journal knows the transaction that used the number (a transaction an earlier
    # run signed): ours never executes, nothing foreign, re-signed with a fresh number.
    h = harness

    def earlier_run_lands(_: str) -> None:
        known = h.fake.consume_sequence(SENDER)
        h.recorder.submitted[known] = (SENDER, 0, {})
        h.fake.after_admit = None

    h.fake.after_admit = earlier_run_lands
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.sequence_number == 1
    (superseded,) = outcome.previous
    assert superseded.status is OutcomeStatus.SUPERSEDED and superseded.sequence_number == 0
    assert h.signer.foreign_signer is None
    assert sequences(h) == [0, 1] and swapped_once(h)


async def test_used_number_the_node_never_shows_is_outcome_unknown(harness: Harness) -> None:
    h = harness
    h.fake.hide_all_by_hash = True
    h.fake.hide_account_transactions = True
    with pytest.raises(SubmitOutcomeUnknown, match="inconclusive"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.fake.submissions) == 1 and swapped_once(h)  # committed, never re-signed
    assert h.signer.allocator.stalled


async def test_a_node_without_account_listings_never_leads_to_a_resign(harness: Harness) -> None:
    # Some nodes run without the index behind the account listing (an error answer): the
    # wait stays bounded, the outcome unknown, nothing re-signed.
    h = harness
    h.fake.hide_all_by_hash = True
    real = h.transport.handle_async_request

    async def no_listing(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/transactions") and request.method == "GET":
            return httpx.Response(500, json={"message": "indexer disabled"})
        return await real(request)

    h.transport.handle_async_request = no_listing  # type: ignore[method-assign]
    with pytest.raises(SubmitOutcomeUnknown, match="could not be read"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.fake.submissions) == 1 and swapped_once(h)


# --- the node client's reads ----------------------------------------------------------------


async def test_account_state_carries_the_ledger_headers(harness: Harness) -> None:
    state = await harness.node.account_state(SENDER)
    assert state.info.sequence_number == 0
    assert (state.ledger_version, state.ledger_timestamp_us) == (1000, START_US)
    harness.fake.stale_accounts.append((0, START_US - 5))
    stale = await harness.node.account_state(SENDER)
    assert (stale.ledger_version, stale.ledger_timestamp_us) == (1, START_US - 5)


async def test_account_transaction_by_sequence_number(harness: Harness) -> None:
    h = harness
    first = await h.signer.execute(router_txdata(), swap_intent())
    foreign = h.fake.consume_sequence(SENDER)
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
