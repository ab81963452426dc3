from __future__ import annotations

import asyncio
from collections import deque
from decimal import Decimal

import httpx
import pytest

from bot.aptos.address import Address
from bot.aptos.transactions import decode_signed_transaction, transaction_hash, verify_signature
from bot.chain.errors import (
    AccountNotFound,
    ChainIdMismatch,
    ForeignSigner,
    InvalidTxData,
    KeyMismatch,
    PolicyRefused,
    SimulationFailed,
    SubmitOutcomeUnknown,
    TransactionExpired,
    TransactionFailed,
    WalletPaused,
)
from bot.chain.outcome import OutcomeStatus
from tests.unit.chain.fake_node import APT, ESCROW, ORDERS_ADDRESS, FakeNode
from tests.unit.chain.support import (
    BUY,
    KEY,
    OTHER,
    SELL,
    SENDER,
    Harness,
    default_policy,
    make_harness,
    router_txdata,
    swap_intent,
)

S, B = str(Address.parse(SELL.fa_address or "")), str(Address.parse(BUY.fa_address or ""))


def submitted_sequences(h: Harness) -> list[int]:
    return [decode_signed_transaction(b).transaction.sequence_number for b in h.fake.submissions]


async def test_swap_from_txdata_to_committed_transaction(harness: Harness) -> None:
    h = harness
    apt_before = h.fake.balance(SENDER, APT)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.status is OutcomeStatus.COMMITTED and outcome.success
    assert not outcome.resigned
    assert outcome.gas_used == 1_000 and outcome.gas_unit_price == 100
    assert outcome.sequence_number == 0 and outcome.version is not None
    assert h.fake.balance(SENDER, S) == 1_000_000_000 - 1_000
    assert h.fake.balance(SENDER, B) == 18_488
    assert h.fake.balance(SENDER, APT) == apt_before - 100_000
    changes = {(c.account, c.asset): c.delta for c in outcome.balance_changes or ()}
    assert changes[(SENDER, B)] == 18_488
    assert outcome.events
    assert h.recorder.events == [
        ("before_submit", outcome.tx_hash),
        ("outcome", outcome.tx_hash, "committed"),
    ]
    sender, number, summary = h.recorder.submitted[outcome.tx_hash]
    assert (sender, number) == (SENDER, 0)
    assert summary["function"].endswith("::panora_swap::router_entry")
    # The bytes the node got: our hash, a valid signature, the policy's chain id, gas × margin.
    (data,) = h.fake.submissions
    assert transaction_hash(data) == outcome.tx_hash
    signed = decode_signed_transaction(data)
    raw = signed.transaction
    assert verify_signature(signed)
    assert (raw.chain_id, raw.max_gas_amount, raw.gas_unit_price) == (4, 1_500, 100)
    assert summary["expiration_timestamp_secs"] == raw.expiration_timestamps_secs


async def test_gas_folded_into_balance_changes_when_the_node_does_so() -> None:
    h = make_harness(
        FakeNode(gas_in_balance_changes=True), default_policy(gas_in_balance_changes=True)
    )
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    changes = {(c.account, c.asset): c.delta for c in outcome.balance_changes or ()}
    assert outcome.success and changes[(SENDER, APT)] == -100_000
    await h.close()
    strict = make_harness(FakeNode(gas_in_balance_changes=True))
    with pytest.raises(PolicyRefused, match="beyond gas"):
        await strict.signer.execute(router_txdata(), swap_intent())
    await strict.close()


async def test_steady_state_round_trips(harness: Harness) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    before = len(h.fake.requests)
    await h.signer.execute(router_txdata(), swap_intent())
    kinds = [r.rsplit("/", 1)[0] if "by_hash" in r else r for r in h.fake.requests[before:]]
    assert kinds == [
        "POST /v1/transactions/simulate",
        "POST /v1/transactions",
        "GET /v1/transactions/by_hash",
    ]


async def test_hash_is_recorded_before_the_bytes_are_sent(harness: Harness) -> None:
    h = harness
    seen: list[bool] = []
    h.fake.on_submit = lambda tx_hash: seen.append(tx_hash in h.recorder.submitted)
    await h.signer.execute(router_txdata(), swap_intent())
    assert seen == [True]


async def test_recorder_failure_stops_the_send(harness: Harness) -> None:
    h = harness

    async def broken(*args: object) -> None:
        raise RuntimeError("journal down")

    h.recorder.before_submit = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="journal down"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert h.fake.submissions == []
    assert h.signer.allocator.stalled  # the number was never used: re-read before reuse


async def test_lost_submit_response_resolved_by_hash(harness: Harness) -> None:
    h = harness
    h.transport.faults.append(("POST /v1/transactions", "drop"))
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and not outcome.resigned
    assert len(h.fake.submissions) == 1
    assert list(h.fake.committed) == [outcome.tx_hash]


@pytest.mark.parametrize("statuses", [[507], [429], [507, 429, 507]])
async def test_mempool_full_and_rate_limit_resend_the_same_bytes(
    harness: Harness, statuses: list[int]
) -> None:
    h = harness
    h.fake.submit_statuses = deque(statuses)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success
    assert len(h.fake.submissions) == len(statuses) + 1
    assert len(set(h.fake.submissions)) == 1
    assert len(h.fake.committed) == 1


async def test_connection_refused_on_submit_resends_the_same_bytes(harness: Harness) -> None:
    h = harness
    h.transport.faults.append(("POST /v1/transactions", "connect"))
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success
    assert len(h.fake.submissions) == 1  # the refused attempt never reached the node
    assert len(h.fake.committed) == 1


async def test_persistent_mempool_full_is_recorded_as_rejected(harness: Harness) -> None:
    h = harness
    h.fake.submit_statuses = deque([507] * 10)
    with pytest.raises(Exception, match="507"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.fake.submissions) == h.signer.settings.max_submit_attempts
    assert [e[-1] for e in h.recorder.events if e[0] == "outcome"] == ["rejected"]
    assert h.signer.allocator.stalled


@pytest.mark.parametrize("headers", [True, False])
async def test_lost_transaction_waited_out_by_ledger_time_then_resigned_once(headers: bool) -> None:
    h = make_harness(FakeNode(ledger_headers=headers))
    h.fake.lose_next = 1
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.resigned
    (lost,) = outcome.previous
    assert lost.status is OutcomeStatus.EXPIRED
    assert lost.tx_hash != outcome.tx_hash
    assert lost.sequence_number == outcome.sequence_number == 0  # re-read from the chain
    assert h.fake.ledger_secs >= lost.expiration_secs
    assert [e[0] for e in h.recorder.events] == ["before_submit", "outcome"] * 2
    assert h.recorder.submitted[outcome.tx_hash][2]["replaces"] == [lost.tx_hash]
    assert len(h.fake.submissions) == 2 and len(h.fake.committed) == 1
    # Judged by the node's ledger time: the signer slept through the expiration window.
    assert sum(h.time.sleeps) >= h.signer.settings.expiration_seconds
    await h.close()


async def test_lost_twice_is_expired(harness: Harness) -> None:
    h = harness
    h.fake.lose_next = 2
    with pytest.raises(TransactionExpired) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.fake.submissions) == 2
    assert info.value.outcome.status is OutcomeStatus.EXPIRED
    assert "expired unexecuted" in str(info.value)


@pytest.mark.parametrize("strict", [True, False])
async def test_two_in_flight_with_the_first_lost(strict: bool) -> None:
    h = make_harness(FakeNode(strict_simulation_sequence=strict))
    h.fake.lose_next = 1
    first, second = await asyncio.gather(
        h.signer.execute(router_txdata(), swap_intent()),
        h.signer.execute(router_txdata(amount_in=2_000), swap_intent(amount_in=2_000)),
    )
    assert first.success and second.success
    assert first.resigned and second.resigned  # n+1 was stalled behind the lost n
    assert {p.status for p in (*first.previous, *second.previous)} == {OutcomeStatus.EXPIRED}
    assert submitted_sequences(h)[:2] == [0, 1]
    assert sorted((first.sequence_number, second.sequence_number)) == [0, 1]
    assert set(h.fake.committed) == {first.tx_hash, second.tx_hash}
    assert h.fake.balance(SENDER, S) == 1_000_000_000 - 3_000  # each swap once
    assert h.signer.allocator.resyncs == 2
    await h.close()


async def test_sequence_consumed_elsewhere_found_by_simulation(harness: Harness) -> None:
    # The node does not show the transaction that used number 1 (pruned): nothing proves
    # a foreign signer, so the number is skipped.
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    h.fake.consume_sequence(SENDER, shown=False)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.sequence_number == 2
    assert submitted_sequences(h) == [0, 2]


async def test_sequence_used_by_a_foreign_transaction_found_by_simulation(
    harness: Harness,
) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    foreign = h.fake.consume_sequence(SENDER)
    with pytest.raises(ForeignSigner) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert (info.value.sequence_number, info.value.foreign_hash) == (1, foreign)
    assert submitted_sequences(h) == [0]  # nothing more signed
    with pytest.raises(WalletPaused, match="paused"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert submitted_sequences(h) == [0]


@pytest.mark.parametrize("vm_error", [False, True])
async def test_sequence_too_old_at_submit_resyncs_and_resigns(vm_error: bool) -> None:
    h = make_harness(FakeNode(strict_simulation_sequence=False, vm_error_sequence=vm_error))
    await h.signer.execute(router_txdata(), swap_intent())
    h.fake.consume_sequence(SENDER, shown=False)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.sequence_number == 2
    (rejected,) = outcome.previous
    assert rejected.status is OutcomeStatus.REJECTED and rejected.sequence_number == 1
    assert submitted_sequences(h) == [0, 1, 2]
    await h.close()


async def test_sequence_too_old_at_submit_because_of_a_foreign_signer() -> None:
    h = make_harness(FakeNode(strict_simulation_sequence=False))
    await h.signer.execute(router_txdata(), swap_intent())
    foreign = h.fake.consume_sequence(SENDER)
    with pytest.raises(ForeignSigner) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert (info.value.sequence_number, info.value.foreign_hash) == (1, foreign)
    rejected = info.value.outcome
    assert rejected.status is OutcomeStatus.REJECTED and rejected.sequence_number == 1
    assert submitted_sequences(h) == [0, 1]  # the refused one; nothing re-signed
    assert h.signer.foreign_signer is info.value
    await h.close()


async def test_stale_ledger_estimate_is_refreshed_for_the_simulation(harness: Harness) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    h.fake.advance(3_600)  # the ledger ran ahead of local time (an accelerated paper clock)
    simulations = len(h.fake.simulations)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success
    assert len(h.fake.simulations) == simulations + 2  # TRANSACTION_EXPIRED, then refreshed
    raw = decode_signed_transaction(h.fake.submissions[-1]).transaction
    assert raw.expiration_timestamps_secs > h.fake.ledger_secs


async def test_simulation_failure_stops_with_vm_status(harness: Harness) -> None:
    h = harness
    h.fake.simulation_failure = "Move abort in 0x1c32::panora_swap: E_SLIPPAGE(0x7)"
    with pytest.raises(SimulationFailed) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert info.value.vm_status == h.fake.simulation_failure
    assert "E_SLIPPAGE" in str(info.value)
    assert h.fake.submissions == [] and h.recorder.events == []
    assert h.signer.allocator.in_flight == frozenset()


async def test_committed_failure_raises_with_vm_status(harness: Harness) -> None:
    h = harness

    def worse_fill(tx_hash: str) -> None:
        h.fake.fill_ratio = Decimal("0.5")

    h.fake.on_submit = worse_fill
    with pytest.raises(TransactionFailed) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert "E_OUTPUT_LESS_THAN_MINIMUM" in info.value.vm_status
    assert info.value.gas_used == 1_000
    assert h.recorder.events[-1][-1] == "failed"
    assert h.signer.allocator.in_flight == frozenset() and not h.signer.allocator.stalled


async def test_chain_id_mismatch_refused_before_signing() -> None:
    for headers in (True, False):
        h = make_harness(FakeNode(chain_id=1, ledger_headers=headers))
        with pytest.raises(ChainIdMismatch, match="chain id 1"):
            await h.signer.execute(router_txdata(), swap_intent())
        assert h.fake.requests == ["GET /v1"]
        await h.close()


async def test_refuses_another_function_before_fetching_anything(harness: Harness) -> None:
    h = harness
    transfer = {
        "function": "0x1::aptos_account::transfer",
        "type_arguments": [],
        "arguments": [str(OTHER), "1000"],
    }
    with pytest.raises(PolicyRefused) as info:
        await h.signer.execute(transfer, swap_intent())
    assert "0x1::aptos_account::transfer" in str(info.value)
    assert "[chain].allowed_functions" in str(info.value)
    assert h.fake.requests == [] and h.fake.submissions == []


async def test_refuses_a_plain_transfer_even_when_allowlisted_by_its_effects() -> None:
    from bot.aptos.address import FunctionId
    from bot.chain.policy import ROUTER_FUNCTION

    allowed = frozenset({ROUTER_FUNCTION, FunctionId.parse("0x1::aptos_account::transfer")})
    h = make_harness(policy=default_policy(allowed_functions=allowed))
    transfer = {
        "function": "0x1::aptos_account::transfer",
        "type_arguments": [],
        "arguments": [str(OTHER), "1000"],
    }
    with pytest.raises(PolicyRefused, match="beyond gas"):
        await h.signer.execute(transfer, swap_intent())
    assert h.fake.submissions == []
    await h.close()


async def test_router_call_paying_someone_else_is_refused(harness: Harness) -> None:
    h = harness
    h.fake.pay_to = OTHER
    with pytest.raises(PolicyRefused) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert str(OTHER) in str(info.value) and "not to the recipient" in str(info.value)
    assert h.fake.submissions == []


async def test_deposit_into_escrow() -> None:
    from bot.aptos.address import FunctionId
    from bot.chain.policy import ROUTER_FUNCTION, Intent, IntentKind

    deposit = FunctionId(ORDERS_ADDRESS, "paper_orders", "deposit")
    h = make_harness(policy=default_policy(allowed_functions=frozenset({ROUTER_FUNCTION, deposit})))
    data = {"function": str(deposit), "type_arguments": [], "arguments": [S, "500"]}
    intent = Intent(
        kind=IntentKind.DEPOSIT, sender=SENDER, sell=SELL, sell_amount=500, escrow=ESCROW
    )
    outcome = await h.signer.execute(data, intent)
    assert outcome.success and h.fake.balance(ESCROW, S) == 500
    with pytest.raises(PolicyRefused, match="escrow"):
        await h.signer.execute(
            data,
            Intent(
                kind=IntentKind.DEPOSIT, sender=SENDER, sell=SELL, sell_amount=500, escrow=OTHER
            ),
        )
    await h.close()


async def test_txdata_that_does_not_fit_the_abi(harness: Harness) -> None:
    data = router_txdata()
    data["arguments"] = data["arguments"][:-1]
    with pytest.raises(InvalidTxData, match="expects 20 arguments"):
        await harness.signer.execute(data, swap_intent())
    with pytest.raises(InvalidTxData, match="arguments must be a list"):
        await harness.signer.execute({**router_txdata(), "arguments": "x"}, swap_intent())


async def test_key_that_is_not_the_accounts_auth_key() -> None:
    h = make_harness(fund=False)
    h.fake.fund(SENDER, APT, 10**10, auth_key=b"\x01" * 32)  # rotated elsewhere
    with pytest.raises(KeyMismatch, match=str(SENDER)):
        await h.signer.execute(router_txdata(), swap_intent())
    await h.close()


async def test_unfunded_account() -> None:
    h = make_harness(fund=False)
    with pytest.raises(AccountNotFound, match="fund it first"):
        await h.signer.execute(router_txdata(), swap_intent())
    await h.close()


async def test_node_unreachable_while_waiting_is_outcome_unknown(harness: Harness) -> None:
    h = harness
    real = h.transport.handle_async_request

    async def down_after_submit(request: httpx.Request) -> httpx.Response:
        if h.fake.submissions and request.method == "GET":
            raise httpx.ConnectError("refused", request=request)
        return await real(request)

    h.transport.handle_async_request = down_after_submit  # type: ignore[method-assign]
    with pytest.raises(SubmitOutcomeUnknown) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert info.value.tx_hash in h.recorder.submitted
    assert len(h.fake.submissions) == 1
    assert h.signer.allocator.stalled


async def test_intent_of_another_sender_refused(harness: Harness) -> None:
    from bot.chain.policy import Intent, IntentKind

    intent = Intent(
        kind=IntentKind.SWAP, sender=OTHER, sell=SELL, sell_amount=1, buy=BUY, min_out=1
    )
    with pytest.raises(PolicyRefused, match="sender"):
        await harness.signer.execute(router_txdata(), intent)


def test_signer_repr_holds_no_key(harness: Harness) -> None:
    text = repr(harness.signer)
    assert str(SENDER) in text
    assert KEY.key.encode().hex() not in text
