"""The signer: from a txData to a committed Aptos transaction, exactly once.

`execute(tx_data, intent, intent_id=…)` — the steps from 3 on are its `Submitter`'s
(`bot.chain.submission`), which holds the key and the recorder:
1. the node's chain id must be `policy.chain_id` (checked once); the call must pass
   `policy.check_call` (allowlist first: no ABI is fetched for a refused function);
2. the arguments are encoded by the function's on-chain ABI (cached per module);
3. simulation with a zeroed signature at the account's current sequence number →
   `SimulationFailed` unless it succeeds; `policy.check_effects` judges its balance changes;
4. a sequence number is allocated, the transaction signed with `max_gas_amount` = gas used ×
   margin (capped by the policy) and its hash handed to the recorder — with `intent_id`,
   the journal intent the call carries out — *before* sending;
5. submit: 507/429/connection refused → back off and resend the same bytes; a lost answer →
   wait by hash, never resubmit; sequence number too old → resync and re-sign;
6. poll `by_hash` until committed; a 404 is not "lost": the account's sequence number
   settles it (`bot.chain.fate`). Used by ours → committed; used by another of the bot's
   transactions → re-signed (bounded, as for "too old"); used by a transaction the journal
   does not know → `ForeignSigner`, and the signer pauses (`WalletPaused` from then on);
   unused as of a ledger time past the expiration → definitively not executed, its number
   and every later one in flight are lost, and the call is re-signed once (simulation and
   policy re-run) with a fresh number read from the chain after the wait.

`dry_run(tx_data)` decodes and simulates, and signs nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, Decimal
from typing import Any

from aptos_sdk import ed25519
from aptos_sdk.transactions import EntryFunction

from bot.aptos.abi import AbiError, FunctionAbi, ModuleAbi
from bot.aptos.address import Address, FunctionId
from bot.aptos.codec import CodecError, decode_entry_function, encode_entry_function
from bot.chain.dryrun import DryRunReport, build_report
from bot.chain.errors import (
    ChainError,
    ChainIdMismatch,
    ForeignSigner,
    InvalidTxData,
    NodeError,
    PolicyRefused,
    SequenceTooOld,
    SimulationFailed,
    SubmitOutcomeUnknown,
    TransactionExpired,
    TransactionFailed,
    WalletPaused,
)
from bot.chain.node import NodeClient
from bot.chain.outcome import OutcomeStatus, TxOutcome, TxRecorder
from bot.chain.policy import Intent, SignerPolicy, function_of
from bot.chain.records import SimulationResult
from bot.chain.sequence import SequenceAllocator
from bot.chain.settings import SignerSettings
from bot.chain.submission import Submitter
from bot.logging import get_logger

__all__ = ["PreparedCall", "Signer"]


@dataclass(frozen=True)
class PreparedCall:
    """A txData checked against the allowlist and encoded by its ABI."""

    function: FunctionId
    abi: FunctionAbi
    payload: EntryFunction
    tx_data: Mapping[str, Any]


def _tx_data_shape(tx_data: object) -> Mapping[str, Any]:
    if not isinstance(tx_data, Mapping):
        raise InvalidTxData(f"txData must be an object, got {type(tx_data).__name__}")
    type_args, args = tx_data.get("type_arguments", []), tx_data.get("arguments", [])
    if not isinstance(type_args, list) or not all(isinstance(t, str) for t in type_args):
        raise InvalidTxData("txData.type_arguments must be a list of type strings")
    if not isinstance(args, list):
        raise InvalidTxData("txData.arguments must be a list")
    return tx_data


class Signer:
    """Judges and executes allowed calls for one account (see the module docstring).

    Several `execute` calls may run concurrently; sequence numbers come from the one
    `SequenceAllocator` of its `Submitter`, which holds the key privately and never
    formats it into anything.
    """

    def __init__(
        self,
        node: NodeClient,
        key: ed25519.PrivateKey,
        policy: SignerPolicy,
        recorder: TxRecorder,
        *,
        sender: Address | None = None,
        settings: SignerSettings | None = None,
        gas_margin: Decimal | None = None,
        expiration_seconds: int | None = None,
        poll_interval: float | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        overrides: dict[str, Any] = {
            "gas_margin": gas_margin,
            "expiration_seconds": expiration_seconds,
            "poll_interval_seconds": poll_interval,
        }
        settings = replace(
            settings or SignerSettings(), **{k: v for k, v in overrides.items() if v is not None}
        )
        self.node = node
        self._policy = policy
        self.submitter = Submitter(
            node,
            key,
            recorder,
            settings,
            sender=sender,
            on_foreign=self.pause,
            sleep=sleep,
            monotonic=monotonic,
        )
        self.sender = self.submitter.sender
        self._chain_checked = False
        self.foreign_signer: ForeignSigner | None = None
        """Set when another signer was seen using this wallet: nothing more is signed."""
        self.pause_listeners: list[Callable[[ForeignSigner], None]] = []
        """Called once, when the signer pauses (the daemon alerts and stops trading)."""
        self.log = get_logger("chain", sender=str(self.sender))

    def __repr__(self) -> str:
        return f"Signer(sender={self.sender})"

    @property
    def policy(self) -> SignerPolicy:
        """What may be signed; replaced only through `set_policy`."""
        return self._policy

    def set_policy(self, policy: SignerPolicy) -> None:
        """Judge every later call by `policy` (a reload of `[risk]`).

        A call in progress meets it at its next check (a re-signed attempt's simulation is
        judged again). A new chain id is checked against the node again before the next
        call.
        """
        if policy.chain_id != self._policy.chain_id:
            self._chain_checked = False
        self._policy = policy

    @property
    def settings(self) -> SignerSettings:
        """Gas margin, expiration, polling and retry bounds (the submitter's)."""
        return self.submitter.settings

    @property
    def recorder(self) -> TxRecorder:
        """Where every signed transaction is recorded (fixed for the signer's life)."""
        return self.submitter.recorder

    @property
    def allocator(self) -> SequenceAllocator:
        """The account's sequence numbers (the submitter's)."""
        return self.submitter.allocator

    # --- preparation ------------------------------------------------------------------

    async def check_chain(self) -> None:
        """Refuse to go on unless the node's chain id is `policy.chain_id` (checked once)."""
        if self._chain_checked:
            return
        info = await self.node.ledger_info()
        if info.chain_id != self.policy.chain_id:
            raise ChainIdMismatch(self.policy.chain_id, info.chain_id)
        self._chain_checked = True

    async def _encode(
        self, function: FunctionId, tx_data: Mapping[str, Any], module: ModuleAbi | None = None
    ) -> PreparedCall:
        try:
            module = module or await self.node.module_abi(function.address, function.module)
        except NodeError as exc:
            if exc.status == 404:
                raise InvalidTxData(
                    f"module {function.module_id} does not exist on chain"
                ) from None
            raise
        try:
            abi = module.function(function.function)
            payload = encode_entry_function(
                abi, function, tx_data.get("type_arguments", []), tx_data.get("arguments", [])
            )
        except (AbiError, CodecError) as exc:
            raise InvalidTxData(f"txData for {function} does not fit its ABI: {exc}") from None
        return PreparedCall(function, abi, payload, tx_data)

    async def prepare(self, tx_data: Mapping[str, Any], intent: Intent) -> PreparedCall:
        """Check shape, sender, policy (before signing) and chain id; encode by the ABI.

        The encoded payload is decoded back by the same ABI and its arguments judged
        (`SignerPolicy.check_arguments`): the policy sees exactly the bytes to be signed.
        """
        tx_data = _tx_data_shape(tx_data)
        if intent.sender != self.sender:
            raise PolicyRefused(
                f"the intent's sender {intent.sender} is not this signer's {self.sender}"
            )
        function = self.policy.check_call(tx_data, intent)
        await self.check_chain()
        call = await self._encode(function, tx_data)
        try:
            arguments = decode_entry_function(call.payload, call.abi)["arguments"]
        except (AbiError, CodecError) as exc:
            raise InvalidTxData(f"txData for {function} does not decode: {exc}") from None
        self.policy.check_arguments(function, list(arguments), intent)
        return call

    async def simulate(self, call: PreparedCall) -> tuple[SimulationResult, int]:
        """Simulate under the policy's gas budget; returns (result, gas price).

        The result may be unsuccessful (`Submitter.simulate`).
        """
        return await self.submitter.simulate(
            call.payload, max_gas=self.policy.max_gas_amount, chain_id=self.policy.chain_id
        )

    def max_gas_for(self, gas_used: int) -> int:
        """`ceil(gas_used × margin)`, capped by the policy's budget."""
        wanted = (Decimal(gas_used) * self.settings.gas_margin).to_integral_value(ROUND_CEILING)
        return max(1, min(int(wanted), self.policy.max_gas_amount))

    # --- execution --------------------------------------------------------------------

    async def execute(
        self, tx_data: Mapping[str, Any], intent: Intent, *, intent_id: int | None = None
    ) -> TxOutcome:
        """Sign, submit and wait for one call (see the module docstring).

        Args:
            tx_data: the provider's txData (untrusted: judged by the policy).
            intent: what the call is for, as the bot computed it (never from the quote).
            intent_id: the journal intent this call carries out; the recorder files every
                transaction signed for it under that id (None: no journal intent).

        Returns:
            The committed, successful outcome (`resigned` tells whether it replaced an
            expired or rejected attempt).

        Raises:
            Refused subclasses (nothing signed; `WalletPaused` once a foreign signer was
            seen), TransactionFailed (committed, aborted), TransactionExpired (expired
            twice), ForeignSigner (another signer used our number: nothing re-signed),
            SubmitOutcomeUnknown, NodeError…
        """
        if self.foreign_signer is not None:
            raise WalletPaused(self.foreign_signer)
        call = await self.prepare(tx_data, intent)
        previous: list[TxOutcome] = []
        expired = sequence_retries = 0
        while True:
            # Checked before every signature: a foreign signer seen by another call while
            # this one waited stops its re-signing too (what it signed before is final).
            if self.foreign_signer is not None:
                raise WalletPaused(self.foreign_signer)
            outcome = await self._attempt(call, intent, intent_id, tuple(previous))
            if outcome.status is OutcomeStatus.COMMITTED:
                return outcome
            if outcome.status is OutcomeStatus.FAILED:
                raise TransactionFailed(
                    outcome.tx_hash, outcome.vm_status, outcome.gas_used, outcome=outcome
                )
            await self._judge_lost_number(outcome, previous)
            previous.append(outcome)
            if outcome.status is OutcomeStatus.EXPIRED:
                expired += 1
                if expired > 1:
                    raise TransactionExpired(
                        outcome.tx_hash, outcome.expiration_secs, outcome=outcome
                    )
                self.log.warning("chain.resign_after_expiry", tx_hash=outcome.tx_hash)
            else:  # rejected (sequence number too old) or superseded by one of ours
                sequence_retries += 1
                if sequence_retries > self.settings.max_sequence_retries:
                    raise SequenceTooOld(400, outcome.detail, error_code="sequence_number_too_old")
                self.log.warning("chain.resign_after_stale_sequence", tx_hash=outcome.tx_hash)

    async def _attempt(
        self,
        call: PreparedCall,
        intent: Intent,
        intent_id: int | None,
        previous: tuple[TxOutcome, ...],
    ) -> TxOutcome:
        simulation, price = await self.simulate(call)
        if not simulation.success:
            raise SimulationFailed(
                simulation.vm_status, gas_used=simulation.gas_used, function=str(call.function)
            )
        self.policy.check_effects(simulation, intent, function=str(call.function))
        summary = {
            "function": str(call.function),
            "type_arguments": list(call.tx_data.get("type_arguments", [])),
            "arguments": list(call.tx_data.get("arguments", [])),
            "intent": intent.summary(),
        }
        submission = await self.submitter.sign(
            call.payload,
            max_gas=self.max_gas_for(simulation.gas_used),
            gas_unit_price=price,
            chain_id=self.policy.chain_id,
            summary=summary,
            intent_id=intent_id,
            previous=previous,
        )
        self.log.info(
            "chain.submitting",
            tx_hash=submission.tx_hash,
            sequence_number=submission.sequence_number,
            function=str(call.function),
        )
        return await self.submitter.submit_and_wait(submission)

    # --- sequence numbers used by others ----------------------------------------------

    async def knows(self, tx_hash: str) -> bool:
        """True when the recorder (the journal) holds `tx_hash`: a transaction the bot signed."""
        return await self.submitter.knows(tx_hash)

    def pause(self, cause: ForeignSigner) -> None:
        """Sign nothing more for this wallet (`execute` raises `WalletPaused`); once only."""
        if self.foreign_signer is not None:
            return
        self.foreign_signer = cause
        self.log.error(
            "chain.foreign_signer",
            sequence_number=cause.sequence_number,
            foreign_hash=cause.foreign_hash,
            tx_hash=cause.tx_hash,
        )
        for listener in self.pause_listeners:
            try:
                listener(cause)
            except Exception as exc:  # a listener (alerts, status) never stops the pause
                self.log.error("chain.pause_listener_failed", error=type(exc).__name__)

    async def check_foreign(
        self, numbers: range, *, tx_hash: str = "", outcome: Any = None
    ) -> None:
        """Raise `ForeignSigner` (and pause) if one of `numbers` was used by a stranger.

        Best effort: a node that cannot be read, or does not show the transactions,
        proves nothing and raises nothing.
        """
        await self.submitter.check_foreign(numbers, tx_hash=tx_hash, outcome=outcome)

    async def _judge_lost_number(self, outcome: TxOutcome, previous: list[TxOutcome]) -> None:
        """Before re-signing, find who used the number of a rejected or superseded attempt.

        Superseded by a transaction the journal does not know → `ForeignSigner` (paused);
        by an earlier attempt of this very call (cannot happen: those never execute) →
        outcome unknown, never re-signed. Rejected as too old → the same foreign check on
        the transaction that used the number.
        """
        number = outcome.sequence_number
        if outcome.status is OutcomeStatus.SUPERSEDED and outcome.consumed_by is not None:
            consumer = outcome.consumed_by
            if consumer in {p.tx_hash for p in previous}:
                raise SubmitOutcomeUnknown(consumer, "an earlier attempt of this call committed")
            if not await self.knows(consumer):
                self.submitter.foreign(
                    ForeignSigner(
                        str(self.sender),
                        number,
                        consumer,
                        tx_hash=outcome.tx_hash,
                        outcome=outcome,
                    )
                )
        elif outcome.status is OutcomeStatus.REJECTED:
            await self.check_foreign(
                range(number, number + 1), tx_hash=outcome.tx_hash, outcome=outcome
            )

    # --- dry run ----------------------------------------------------------------------

    async def dry_run(
        self,
        tx_data: Mapping[str, Any],
        intent: Intent | None = None,
        *,
        abi: ModuleAbi | None = None,
    ) -> DryRunReport:
        """Decode and show the call, simulate it when the node is reachable; sign nothing.

        Refusals (allowlist, chain id, effects) and an unreachable node are reported, not
        raised. The module ABI comes from the node unless given (`abi`, e.g. from a file).

        Raises:
            InvalidTxData: the txData cannot be decoded.
            ChainError: the ABI had to be fetched and the node could not give it.
        """
        tx_data = _tx_data_shape(tx_data)
        notes: list[str] = []
        try:
            function = function_of(tx_data)
        except PolicyRefused as exc:
            raise InvalidTxData(str(exc)) from None
        try:
            self.policy.check_function(tx_data)
        except PolicyRefused as exc:
            notes.append(str(exc))
        if intent is not None and not notes:
            try:
                self.policy.check_call(tx_data, intent)
            except PolicyRefused as exc:
                notes.append(str(exc))
        chain_ok = True
        try:
            await self.check_chain()
        except ChainError as exc:
            chain_ok = False
            notes.append(str(exc) if isinstance(exc, ChainIdMismatch) else f"not simulated: {exc}")
        call = await self._encode(function, tx_data, abi)
        simulation: SimulationResult | None = None
        if chain_ok:
            try:
                simulation, _ = await self.simulate(call)
            except ChainError as exc:
                notes.append(f"not simulated: {exc}")
        if simulation is not None and not simulation.success:
            notes.append(f"simulation failed: {simulation.vm_status}")
        elif simulation is not None and intent is not None:
            try:
                self.policy.check_effects(simulation, intent, function=str(function))
            except PolicyRefused as exc:
                notes.append(str(exc))
        return build_report(call.abi, call.payload, simulation, notes)
