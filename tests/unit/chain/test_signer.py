"""The signer against the paper node: exactly once, hash recorded before sending, re-signed
only what can never execute (`harness.paper_chain`)."""

from __future__ import annotations

import asyncio
from decimal import ROUND_CEILING, Decimal
from typing import Any

import httpx
import pytest

from bot.aptos.address import Address, FunctionId
from bot.aptos.transactions import decode_signed_transaction, transaction_hash, verify_signature
from bot.chain.errors import (
    AccountNotFound,
    ChainIdMismatch,
    ForeignSigner,
    InvalidTxData,
    KeyMismatch,
    PolicyRefused,
    SequenceTooOld,
    SimulationFailed,
    SubmitOutcomeUnknown,
    TransactionExpired,
    TransactionFailed,
    WalletPaused,
)
from bot.chain.outcome import OutcomeStatus
from bot.chain.policy import ROUTER_FUNCTION, Intent, IntentKind
from bot.paper.core.modules import PAPER_ORDERS_ADDRESS, order_function
from bot.paper.orders_wire import OrderRenderer
from harness.paper_chain import (
    APT_TOKEN,
    BUY,
    KEY,
    OTHER,
    SELL,
    SENDER,
    ChainRig,
    chain_rig,
    default_policy,
    router_txdata,
    swap_intent,
)

FUNDED = 1_000_000_000  # 1,000 USDt


def submitted_sequences(h: ChainRig) -> list[int]:
    return [decode_signed_transaction(b).transaction.sequence_number for b in h.wire.submissions]


async def test_swap_from_txdata_to_committed_transaction(harness: ChainRig) -> None:
    h = harness
    apt_before = h.balance(SENDER, APT_TOKEN)
    outcome = await h.signer.execute(router_txdata(), swap_intent(), intent_id=7)
    assert outcome.status is OutcomeStatus.COMMITTED and outcome.success
    assert not outcome.resigned
    assert outcome.gas_used > 0 and outcome.gas_unit_price == 100
    assert outcome.sequence_number == 0 and outcome.version is not None
    changes = {(c.account, c.asset): c.delta for c in outcome.balance_changes or ()}
    bought = changes[(SENDER, str(Address.parse(BUY.fa_address or "")))]
    assert bought >= 18_305
    assert h.balance(SENDER, SELL) == FUNDED - 1_000
    assert h.balance(SENDER, BUY) == bought
    assert h.balance(SENDER, APT_TOKEN) == apt_before - outcome.gas_fee
    assert outcome.events
    assert h.recorder.events == [
        ("before_submit", outcome.tx_hash),
        ("outcome", outcome.tx_hash, "committed"),
    ]
    assert h.recorder.intents[outcome.tx_hash] == 7  # filed under the caller's intent
    sender, number, summary = h.recorder.submitted[outcome.tx_hash]
    assert (sender, number) == (SENDER, 0)
    assert summary["function"].endswith("::panora_swap::router_entry")
    # The bytes the node got: our hash, a valid signature, the policy's chain id, gas × margin.
    (data,) = h.wire.submissions
    assert transaction_hash(data) == outcome.tx_hash
    signed = decode_signed_transaction(data)
    raw = signed.transaction
    assert verify_signature(signed)
    margin = (Decimal(outcome.gas_used) * Decimal("1.5")).to_integral_value(ROUND_CEILING)
    assert (raw.chain_id, raw.max_gas_amount, raw.gas_unit_price) == (4, int(margin), 100)
    assert summary["expiration_timestamp_secs"] == raw.expiration_timestamps_secs


async def test_gas_folded_into_balance_changes_when_the_node_does_so() -> None:
    h = chain_rig(default_policy(gas_in_balance_changes=True))
    h.set_node(gas_in_balance_changes=True)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    changes = {(c.account, c.asset): c.delta for c in outcome.balance_changes or ()}
    assert outcome.success and changes[(SENDER, APT_TOKEN.coin_type or "")] == -outcome.gas_fee
    await h.close()
    strict = chain_rig()
    strict.set_node(gas_in_balance_changes=True)
    with pytest.raises(PolicyRefused, match="beyond gas"):
        await strict.signer.execute(router_txdata(), swap_intent())
    await strict.close()


async def test_a_new_policy_judges_the_next_call(harness: ChainRig) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    h.signer.set_policy(default_policy(allowed_tokens=frozenset({SELL.fa_address or ""})))
    with pytest.raises(PolicyRefused, match="allowed_tokens"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert submitted_sequences(h) == [0]
    with pytest.raises(AttributeError):
        h.signer.policy = default_policy()  # type: ignore[misc]


async def test_a_new_chain_id_is_checked_against_the_node_again(harness: ChainRig) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    h.signer.set_policy(default_policy(chain_id=2))
    with pytest.raises(ChainIdMismatch):
        await h.signer.execute(router_txdata(), swap_intent())
    assert submitted_sequences(h) == [0]


async def test_steady_state_round_trips(harness: ChainRig) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    before = len(h.wire.requests)
    await h.signer.execute(router_txdata(), swap_intent())
    kinds = [r.rsplit("/", 1)[0] if "by_hash" in r else r for r in h.wire.requests[before:]]
    assert kinds == [
        "POST /v1/transactions/simulate",
        "POST /v1/transactions",
        "GET /v1/transactions/by_hash",
    ]


async def test_hash_is_recorded_before_the_bytes_are_sent(harness: ChainRig) -> None:
    h = harness
    seen: list[bool] = []
    h.on_submit(lambda tx_hash: seen.append(tx_hash in h.recorder.submitted))
    await h.signer.execute(router_txdata(), swap_intent())
    assert seen == [True]


async def test_recorder_failure_stops_the_send(harness: ChainRig) -> None:
    h = harness

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("journal down")

    h.recorder.before_submit = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="journal down"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert h.wire.submissions == []
    assert h.signer.allocator.stalled  # the number was never used: re-read before reuse


async def test_lost_submit_response_resolved_by_hash(harness: ChainRig) -> None:
    h = harness
    h.wire.faults.append(("POST /v1/transactions", "drop"))
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and not outcome.resigned
    assert len(h.wire.submissions) == 1
    assert h.committed() == [outcome.tx_hash]


@pytest.mark.parametrize("statuses", [(507,), (429,), (507, 429, 507)])
async def test_mempool_full_and_rate_limit_resend_the_same_bytes(
    harness: ChainRig, statuses: tuple[int, ...]
) -> None:
    h = harness
    h.set_node(refuse_first=statuses)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success
    assert len(h.wire.submissions) == len(statuses) + 1
    assert len(set(h.wire.submissions)) == 1
    assert h.committed() == [outcome.tx_hash]


async def test_connection_refused_on_submit_resends_the_same_bytes(harness: ChainRig) -> None:
    h = harness
    h.wire.faults.append(("POST /v1/transactions", "connect"))
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success
    assert len(h.wire.submissions) == 1  # the refused attempt never reached the node
    assert h.committed() == [outcome.tx_hash]


async def test_persistent_mempool_full_is_recorded_as_rejected(harness: ChainRig) -> None:
    h = harness
    h.set_node(refuse_first=(507,) * 10)
    with pytest.raises(Exception, match="507"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.wire.submissions) == h.signer.settings.max_submit_attempts
    assert [e[-1] for e in h.recorder.events if e[0] == "outcome"] == ["rejected"]
    assert h.signer.allocator.stalled


@pytest.mark.parametrize("headers", [True, False])
async def test_lost_transaction_waited_out_by_ledger_time_then_resigned_once(headers: bool) -> None:
    h = chain_rig()
    h.set_node(ledger_headers=headers, lose_first=1)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.resigned
    (lost,) = outcome.previous
    assert lost.status is OutcomeStatus.EXPIRED
    assert lost.tx_hash != outcome.tx_hash
    assert lost.sequence_number == outcome.sequence_number == 0  # re-read from the chain
    assert h.ledger_secs >= lost.expiration_secs
    assert [e[0] for e in h.recorder.events] == ["before_submit", "outcome"] * 2
    assert h.recorder.submitted[outcome.tx_hash][2]["replaces"] == [lost.tx_hash]
    assert len(h.wire.submissions) == 2 and h.committed() == [outcome.tx_hash]
    # Judged by the node's ledger time: the signer slept through the expiration window.
    assert sum(h.time.sleeps) >= h.signer.settings.expiration_seconds
    await h.close()


async def test_a_pause_seen_while_waiting_out_a_lost_transaction_stops_the_re_sign(
    harness: ChainRig,
) -> None:
    """Another call finds a foreign signer while this one waits: nothing more is signed."""
    h = harness
    h.set_node(lose_first=1)
    recorded = h.recorder.on_outcome

    async def pause_on_expiry(tx_hash: str, outcome: Any) -> None:
        await recorded(tx_hash, outcome)
        if outcome.status is OutcomeStatus.EXPIRED:
            h.signer.pause(ForeignSigner(str(SENDER), 0, "0x" + "ab" * 32))

    h.recorder.on_outcome = pause_on_expiry  # type: ignore[method-assign]
    with pytest.raises(WalletPaused):
        await h.signer.execute(router_txdata(), swap_intent(), intent_id=3)
    assert len(h.wire.submissions) == 1  # the lost one only: no second signature
    assert [e[0] for e in h.recorder.events] == ["before_submit", "outcome"]


async def test_lost_twice_is_expired(harness: ChainRig) -> None:
    h = harness
    h.set_node(lose_first=2)
    with pytest.raises(TransactionExpired) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert len(h.wire.submissions) == 2
    assert info.value.outcome.status is OutcomeStatus.EXPIRED
    assert "expired unexecuted" in str(info.value)


async def test_two_in_flight_with_the_first_lost(harness: ChainRig) -> None:
    h = harness
    h.set_node(lose_first=1)
    first, second = await asyncio.gather(
        h.signer.execute(router_txdata(), swap_intent()),
        h.signer.execute(router_txdata(amount_in=2_000), swap_intent(amount_in=2_000)),
    )
    assert first.success and second.success
    assert first.resigned and second.resigned  # n+1 was stalled behind the lost n
    assert {p.status for p in (*first.previous, *second.previous)} == {OutcomeStatus.EXPIRED}
    assert submitted_sequences(h)[:2] == [0, 1]
    assert sorted((first.sequence_number, second.sequence_number)) == [0, 1]
    assert set(h.committed()) == {first.tx_hash, second.tx_hash}
    assert h.balance(SENDER, SELL) == FUNDED - 3_000  # each swap once
    assert h.signer.allocator.resyncs == 2


async def test_sequence_consumed_elsewhere_found_by_simulation(harness: ChainRig) -> None:
    # The node does not show the transaction that used number 1 (pruned): nothing proves
    # a foreign signer, so the number is skipped.
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    h.foreign(pruned=True)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.sequence_number == 2
    assert submitted_sequences(h) == [0, 2]


async def test_sequence_used_by_a_foreign_transaction_found_by_simulation(
    harness: ChainRig,
) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    foreign = h.foreign()
    with pytest.raises(ForeignSigner) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert (info.value.sequence_number, info.value.foreign_hash) == (1, foreign)
    assert submitted_sequences(h) == [0]  # nothing more signed
    with pytest.raises(WalletPaused, match="paused"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert submitted_sequences(h) == [0]


def foreign_before_the_next_submit(h: ChainRig, *, pruned: bool) -> list[str]:
    """Between our simulation and our submission, another signer takes our number."""
    taken: list[str] = []

    def race(_: str) -> None:
        if len(h.wire.submissions) == 2 and not taken:  # the second call's first send
            taken.append(h.foreign(pruned=pruned))

    h.on_submit(race)
    return taken


@pytest.mark.parametrize("vm_error", [False, True])
async def test_sequence_too_old_at_submit_resyncs_and_resigns(vm_error: bool) -> None:
    h = chain_rig()
    h.set_node(vm_error_sequence=vm_error)
    await h.signer.execute(router_txdata(), swap_intent())
    foreign_before_the_next_submit(h, pruned=True)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success and outcome.sequence_number == 2
    (rejected,) = outcome.previous
    assert rejected.status is OutcomeStatus.REJECTED and rejected.sequence_number == 1
    assert submitted_sequences(h) == [0, 1, 2]
    await h.close()


async def test_sequence_too_old_at_submit_because_of_a_foreign_signer(harness: ChainRig) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    taken = foreign_before_the_next_submit(h, pruned=False)
    with pytest.raises(ForeignSigner) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert (info.value.sequence_number, info.value.foreign_hash) == (1, taken[0])
    rejected = info.value.outcome
    assert rejected.status is OutcomeStatus.REJECTED and rejected.sequence_number == 1
    assert submitted_sequences(h) == [0, 1]  # the refused one; nothing re-signed
    assert h.signer.foreign_signer is info.value


async def test_stale_ledger_estimate_is_refreshed_for_the_simulation(harness: ChainRig) -> None:
    h = harness
    await h.signer.execute(router_txdata(), swap_intent())
    h.time.advance(3_600)  # the ledger ran ahead of local time (an accelerated paper clock)
    simulations = len(h.wire.simulations)
    outcome = await h.signer.execute(router_txdata(), swap_intent())
    assert outcome.success
    assert len(h.wire.simulations) == simulations + 2  # TRANSACTION_EXPIRED, then refreshed
    raw = decode_signed_transaction(h.wire.submissions[-1]).transaction
    assert raw.expiration_timestamps_secs > h.ledger_secs


async def test_a_sequence_still_too_old_after_the_resync_is_raised_unsent(
    harness: ChainRig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Strategies of one wallet signing at once on a fast clock: the node refused the number
    # at both simulations (this raised AssertionError("unreachable") and left the intent
    # unknown).
    async def stale(_: bytes) -> None:
        raise SequenceTooOld(400, "too old", error_code="sequence_number_too_old")

    monkeypatch.setattr(harness.signer.submitter.node, "simulate", stale)
    with pytest.raises(SequenceTooOld):
        await harness.signer.execute(router_txdata(), swap_intent())
    assert harness.wire.submissions == []


async def test_simulation_failure_stops_with_vm_status(harness: ChainRig) -> None:
    h = harness
    much = 10**15  # more than any pool gives for 1,000 base units
    with pytest.raises(SimulationFailed) as info:
        await h.signer.execute(router_txdata(min_out=much), swap_intent(min_out=much))
    assert "E_OUTPUT_LESS_THAN_MINIMUM" in info.value.vm_status
    assert "E_OUTPUT_LESS_THAN_MINIMUM" in str(info.value)
    assert h.wire.submissions == [] and h.recorder.events == []
    assert h.signer.allocator.in_flight == frozenset()


async def test_committed_failure_raises_with_vm_status(harness: ChainRig) -> None:
    h = harness
    market = h.world.market
    sold = market.tokens.require(SELL.fa_address or "").address

    def spent_elsewhere(_: str) -> None:  # between simulation and commit
        market.ledger.transfer(
            sold, str(SENDER), str(OTHER), market.ledger.balance(str(SENDER), sold)
        )

    h.on_submit(spent_elsewhere)
    with pytest.raises(TransactionFailed) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert "EINSUFFICIENT_BALANCE" in info.value.vm_status
    assert info.value.gas_used > 0
    assert h.recorder.events[-1][-1] == "failed"
    assert h.signer.allocator.in_flight == frozenset() and not h.signer.allocator.stalled


@pytest.mark.parametrize("headers", [True, False])
async def test_chain_id_mismatch_refused_before_signing(headers: bool) -> None:
    h = chain_rig()
    h.set_node(chain_id=1, ledger_headers=headers)
    with pytest.raises(ChainIdMismatch, match="chain id 1"):
        await h.signer.execute(router_txdata(), swap_intent())
    assert h.wire.requests == ["GET /v1"]
    await h.close()


async def test_refuses_another_function_before_fetching_anything(harness: ChainRig) -> None:
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
    assert h.wire.requests == [] and h.wire.submissions == []


async def test_refuses_a_plain_transfer_even_when_allowlisted_by_its_effects() -> None:
    allowed = frozenset({ROUTER_FUNCTION, FunctionId.parse("0x1::aptos_account::transfer")})
    h = chain_rig(default_policy(allowed_functions=allowed))
    transfer = {
        "function": "0x1::aptos_account::transfer",
        "type_arguments": [],
        "arguments": [str(OTHER), "1000"],
    }
    with pytest.raises(PolicyRefused, match="beyond gas"):
        await h.signer.execute(transfer, swap_intent())
    assert h.wire.submissions == []
    await h.close()


async def test_router_call_paying_someone_else_is_refused(harness: ChainRig) -> None:
    h = harness
    h.set_node(router_pays_to=str(OTHER))
    with pytest.raises(PolicyRefused) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert str(OTHER) in str(info.value) and "not to the recipient" in str(info.value)
    assert h.wire.submissions == []


async def test_deposit_into_escrow() -> None:
    deposit = FunctionId.parse(order_function("limit", "deposit"))
    h = chain_rig(default_policy(allowed_functions=frozenset({ROUTER_FUNCTION, deposit})))
    market = h.world.market
    order = market.limit.create(
        owner=str(SENDER),
        recipient=str(SENDER),
        sell=market.tokens.require(SELL.fa_address or ""),
        buy=market.tokens.require(BUY.fa_address or ""),
        amount=500,
        rate=Decimal(1),
        slippage=Decimal(1),
        expiry=None,
        now=market.now,
        escrow_now=False,
    )
    data = OrderRenderer.deposit_tx_data("limit", order)

    def intent(escrow: Address) -> Intent:
        return Intent(
            kind=IntentKind.DEPOSIT,
            sender=SENDER,
            sell=SELL,
            sell_amount=500,
            escrow=escrow,
            order_id=order.order_id,
        )

    with pytest.raises(PolicyRefused, match="escrow"):
        await h.signer.execute(data, intent(OTHER))
    assert h.wire.submissions == []
    outcome = await h.signer.execute(data, intent(Address.parse(PAPER_ORDERS_ADDRESS)))
    assert outcome.success and h.balance(SENDER, SELL) == FUNDED - 500
    assert market.limit.get(order.order_id).status != "pending"  # funded: it trades
    await h.close()


async def test_txdata_that_does_not_fit_the_abi(harness: ChainRig) -> None:
    data = router_txdata()
    data["arguments"] = data["arguments"][:-1]
    with pytest.raises(InvalidTxData, match="expects 20 arguments"):
        await harness.signer.execute(data, swap_intent())
    with pytest.raises(InvalidTxData, match="arguments must be a list"):
        await harness.signer.execute({**router_txdata(), "arguments": "x"}, swap_intent())


async def test_key_that_is_not_the_accounts_auth_key(harness: ChainRig) -> None:
    h = harness
    h.world.chain.rotate_key(str(SENDER), "0x" + "01" * 32)  # rotated elsewhere
    with pytest.raises(KeyMismatch, match=str(SENDER)):
        await h.signer.execute(router_txdata(), swap_intent())


async def test_unfunded_account() -> None:
    h = chain_rig(fund=False)
    with pytest.raises(AccountNotFound, match="fund it first"):
        await h.signer.execute(router_txdata(), swap_intent())
    await h.close()


async def test_node_unreachable_while_waiting_is_outcome_unknown(harness: ChainRig) -> None:
    h = harness
    real = h.wire.handle_async_request

    async def down_after_submit(request: httpx.Request) -> httpx.Response:
        if h.wire.submissions and request.method == "GET":
            raise httpx.ConnectError("refused", request=request)
        return await real(request)

    h.wire.handle_async_request = down_after_submit  # type: ignore[method-assign]
    with pytest.raises(SubmitOutcomeUnknown) as info:
        await h.signer.execute(router_txdata(), swap_intent())
    assert info.value.tx_hash in h.recorder.submitted
    assert len(h.wire.submissions) == 1
    assert h.signer.allocator.stalled


async def test_intent_of_another_sender_refused(harness: ChainRig) -> None:
    intent = Intent(
        kind=IntentKind.SWAP, sender=OTHER, sell=SELL, sell_amount=1, buy=BUY, min_out=1
    )
    with pytest.raises(PolicyRefused, match="sender"):
        await harness.signer.execute(router_txdata(), intent)


def test_signer_repr_holds_no_key(harness: ChainRig) -> None:
    for text in (repr(harness.signer), repr(harness.signer.submitter)):
        assert str(SENDER) in text
        assert KEY.key.encode().hex() not in text
