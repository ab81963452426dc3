"""The `Submitter`: simulate, sign, send and wait for one account's transactions.

The signer (`bot.chain.signer`) decides *what* may be signed (its policy) and whether a
call is re-signed; the submitter it owns does the rest, for one key and one recorder:

* `simulate` at the account's current sequence number with a zeroed signature; a stale
  number is re-read (and the jump checked for another signer), a stale ledger time
  refreshed, once each;
* `sign` allocates a sequence number, signs, and hands the hash to the recorder — with the
  journal intent the transaction carries out, passed in by the caller — *before* any
  byte is sent;
* `submit_and_wait` sends and waits for the fate:

  - 507 (mempool full), 429 and "connection refused" mean the bytes were not applied:
    back off and send the *same* bytes again (same hash), a bounded number of times; if
    that never works the transaction is definitively not in the mempool (rejected).
  - A lost answer (timeout, dropped connection, 5xx) means "outcome unknown": the same
    hash is polled; nothing is resubmitted.
  - Waiting ends when `by_hash` shows the transaction committed. A 404 is not "lost": a
    node may 404 a committed transaction. Once an answer's ledger time (the node's
    `X-Aptos-Ledger-TimestampUsec` on that very answer, else a `GET /v1` read just
    before) is at or past the expiration — and every few 404s before that — the
    account's sequence number settles it (`bot.chain.fate`): used by ours →
    committed/failed; used by another transaction → superseded (never executes); unused
    as of a ledger time at or past the expiration → expired (never executes). An account
    read older than the expiration, or a used number whose transaction the node does not
    show, settles nothing: read again, until `wait_timeout_seconds` without a conclusive
    read make the outcome unknown.

The private key lives here, privately, and is never formatted into anything.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from aptos_sdk import ed25519
from aptos_sdk.transactions import EntryFunction

from bot.aptos.address import Address
from bot.aptos.transactions import (
    build_raw_transaction,
    sign_transaction,
    signed_bytes,
    simulation_transaction,
    transaction_hash,
)
from bot.chain.errors import (
    ChainError,
    ChainIdMismatch,
    ForeignSigner,
    KeyMismatch,
    MempoolFull,
    NodeError,
    NodeRateLimited,
    NotSent,
    SequenceTooOld,
    SubmitOutcomeUnknown,
)
from bot.chain.fate import SequenceCheck, SequenceFate, check_sequence, foreign_use
from bot.chain.keys import account_address, authentication_key
from bot.chain.node import NodeClient
from bot.chain.outcome import OutcomeStatus, TxDirectory, TxOutcome, TxRecorder
from bot.chain.records import SimulationResult, TxStatus
from bot.chain.sequence import SequenceAllocator
from bot.chain.settings import SignerSettings
from bot.chain.wire import node_backoff
from bot.logging import get_logger

__all__ = ["Submission", "Submitter"]

_RESEND_BACKOFF: Final = node_backoff(cap=10.0)
_CHECK_EVERY_MISSES: Final = 3
"""Before the expiration, the account is read after every this many 404s in a row."""
_STALE_SEQUENCE: Final = ("SEQUENCE_NUMBER_TOO_OLD", "SEQUENCE_NUMBER_TOO_NEW")
_EXPIRED: Final = "TRANSACTION_EXPIRED"


@dataclass(frozen=True)
class Submission:
    """One signed transaction on its way: its bytes, hash and expiration."""

    tx_hash: str
    sender: Address
    sequence_number: int
    data: bytes
    expiration_secs: int
    gas_unit_price: int
    previous: tuple[TxOutcome, ...] = ()


class Submitter:
    """Simulates, signs, sends and waits for one account (see the module docstring).

    Args:
        on_foreign: called with the `ForeignSigner` found (before it is raised), so the
            owner can pause; the submitter itself keeps no pause state.
    """

    def __init__(
        self,
        node: NodeClient,
        key: ed25519.PrivateKey,
        recorder: TxRecorder,
        settings: SignerSettings,
        *,
        sender: Address | None = None,
        on_foreign: Callable[[ForeignSigner], None] = lambda cause: None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.node = node
        self.recorder = recorder
        self.settings = settings
        self._key = key
        self._public = key.public_key()
        self._auth_key = authentication_key(self._public)
        self.sender = sender or account_address(self._public)
        self.allocator = SequenceAllocator(self.sender, self.read_sequence)
        self.on_foreign = on_foreign
        self.sleep = sleep
        self.monotonic = monotonic
        self.log = get_logger("chain", sender=str(self.sender))

    def __repr__(self) -> str:
        return f"Submitter(sender={self.sender})"

    async def read_sequence(self) -> int:
        """The account's sequence number on chain, after checking the key is the account's.

        Raises:
            KeyMismatch: the loaded key is not the account's authentication key.
        """
        info = await self.node.account(self.sender)
        if info.authentication_key != self._auth_key:
            raise KeyMismatch(
                f"the loaded key is not the authentication key of account {self.sender}; "
                "check [wallet].address and the key file"
            )
        return info.sequence_number

    # --- other signers of the wallet --------------------------------------------------

    async def knows(self, tx_hash: str) -> bool:
        """True when the recorder (the journal) holds `tx_hash`: a transaction the bot signed.

        A recorder that cannot say (no `knows`) knows nothing: every other transaction
        using this wallet's numbers then counts as foreign.
        """
        recorder = self.recorder
        return isinstance(recorder, TxDirectory) and await recorder.knows(tx_hash)

    async def check_foreign(
        self, numbers: range, *, tx_hash: str = "", outcome: Any = None
    ) -> None:
        """Raise `ForeignSigner` (after `on_foreign`) if one of `numbers` was used by a stranger.

        Best effort: a node that cannot be read, or does not show the transactions,
        proves nothing and raises nothing.
        """
        try:
            found = await foreign_use(self.node, self.knows, self.sender, numbers)
        except ChainError as exc:
            self.log.info("chain.foreign_check_skipped", error=str(exc))
            return
        if found is not None:
            self.foreign(
                ForeignSigner(
                    str(self.sender), found[0], found[1], tx_hash=tx_hash, outcome=outcome
                )
            )

    def foreign(self, cause: ForeignSigner) -> NoReturn:
        """Report `cause` to `on_foreign`, then raise it."""
        self.on_foreign(cause)
        raise cause

    # --- simulation -------------------------------------------------------------------

    async def simulate(
        self, payload: EntryFunction, *, max_gas: int, chain_id: int
    ) -> tuple[SimulationResult, int]:
        """Simulate at the account's current sequence number; returns (result, gas price).

        The result may be unsuccessful. A stale sequence number is re-read, and a stale
        ledger time (an expiration already past) refreshed, once.

        Raises:
            SequenceTooOld: the node still refuses the number after the re-read (nothing
                was signed for sending).
            NodeError: the node's other refusals.
        """
        price = await self.node.estimate_gas_price()
        sequence = await self.allocator.ensure_initialised()
        ledger_us = self.node.ledger_estimate_us()
        if ledger_us is None:
            ledger_us = (await self.node.ledger_info()).ledger_timestamp_us
        for attempt in (1, 2):
            expiration = ledger_us // 1_000_000 + self.settings.expiration_seconds
            raw = build_raw_transaction(
                self.sender, sequence, payload, max_gas, price, expiration, chain_id
            )
            data = signed_bytes(simulation_transaction(raw, self._public))
            try:
                result = await self.node.simulate(data)
            except SequenceTooOld:
                if attempt == 2:  # still stale after a re-read: another signer is racing us
                    raise
                stale, expired = True, False
            except NodeError as exc:
                if _EXPIRED not in exc.node_message or attempt == 2:
                    raise
                stale, expired = False, True
            else:
                failed = "" if result.success else result.vm_status
                stale = any(s in failed for s in _STALE_SEQUENCE)
                expired = _EXPIRED in failed
                if not (stale or expired) or attempt == 2:
                    return result, price
            if stale:
                known = self.allocator.chain_estimate()
                sequence = await self.read_sequence()
                if known is not None and sequence > known:
                    await self.check_foreign(range(known, sequence))
                await self.allocator.observe_chain(sequence)
            if expired:
                ledger_us = (await self.node.ledger_info()).ledger_timestamp_us
        raise AssertionError("unreachable")  # pragma: no cover

    # --- signing ----------------------------------------------------------------------

    async def sign(
        self,
        payload: EntryFunction,
        *,
        max_gas: int,
        gas_unit_price: int,
        chain_id: int,
        summary: Mapping[str, Any],
        intent_id: int | None,
        previous: tuple[TxOutcome, ...] = (),
    ) -> Submission:
        """Number and sign the call; the recorder holds its hash before this returns.

        `summary` (plus the signed numbers) is what the recorder keeps; `intent_id` is
        the journal intent the transaction carries out (None outside the executor). A
        number handed out but never sent (the recorder or the node failed) is marked
        lost, so the allocator re-reads the chain before reusing it.
        """
        number = await self.allocator.allocate()
        try:
            ledger_us = await self.node.ledger_timestamp_us()
            expiration = ledger_us // 1_000_000 + self.settings.expiration_seconds
            raw = build_raw_transaction(
                self.sender, number, payload, max_gas, gas_unit_price, expiration, chain_id
            )
            data = signed_bytes(sign_transaction(raw, self._key))
            tx_hash = transaction_hash(data)
            recorded = {
                **summary,
                "max_gas_amount": max_gas,
                "gas_unit_price": gas_unit_price,
                "expiration_timestamp_secs": expiration,
                "chain_id": chain_id,
                "replaces": [p.tx_hash for p in previous],
            }
            await self.recorder.before_submit(
                tx_hash, self.sender, number, recorded, intent_id=intent_id
            )
        except BaseException:
            await self.allocator.mark_lost(number)  # never sent: a gap
            raise
        return Submission(tx_hash, self.sender, number, data, expiration, gas_unit_price, previous)

    # --- sending and waiting ----------------------------------------------------------

    async def submit_and_wait(self, sub: Submission) -> TxOutcome:
        """Submit `sub` and wait for its fate; the recorder hears of it, the allocator too.

        Returns:
            A committed or failed outcome; an expired one (its number unused past the
            expiration: definitively not executed); a superseded one (another
            transaction, `consumed_by`, used its number: never executes); or a rejected
            one when the node said the sequence number is too old.

        Raises:
            NodeError / NotSent: the node refused the bytes for another reason, or never
                took them (recorded as rejected first).
            SubmitOutcomeUnknown: the node stayed unreachable (or its reads inconclusive)
                while waiting; resolve by hash.
        """
        try:
            await self._send(sub)
        except SequenceTooOld as exc:
            return await self._settle(sub, OutcomeStatus.REJECTED, detail=exc.node_message)
        except (NodeError, NotSent) as exc:
            await self._settle(sub, OutcomeStatus.REJECTED, detail=str(exc))
            raise
        except BaseException:  # cancelled mid-send: the fate is unknown, stall the allocator
            await self.allocator.mark_lost(sub.sequence_number)
            raise
        try:
            fate = await self._wait(sub)
        except BaseException:
            # Unknown fate: stall the allocator, so nothing is numbered until the chain is
            # re-read.
            await self.allocator.mark_lost(sub.sequence_number)
            raise
        if isinstance(fate, TxStatus):
            return await self._settle(sub, OutcomeStatus.COMMITTED, status=fate)
        if fate.fate is SequenceFate.CONSUMED:
            return await self._settle(
                sub, OutcomeStatus.SUPERSEDED, detail=fate.detail, consumed_by=fate.consumer
            )
        return await self._settle(sub, OutcomeStatus.EXPIRED, detail=fate.detail)

    async def _send(self, sub: Submission) -> None:
        attempts = max(1, self.settings.max_submit_attempts)
        for attempt in range(1, attempts + 1):
            try:
                reported = await self.node.submit(sub.data, sub.tx_hash)
            except SubmitOutcomeUnknown as exc:
                self.log.warning(
                    "chain.submit_outcome_unknown", tx_hash=sub.tx_hash, detail=exc.detail
                )
                return
            except (MempoolFull, NodeRateLimited, NotSent) as exc:
                if attempt == attempts:
                    raise
                retry_after = exc.retry_after if isinstance(exc, NodeRateLimited) else None
                delay = _RESEND_BACKOFF.delay(attempt, retry_after)
                self.log.info(
                    "chain.resend_same_bytes",
                    tx_hash=sub.tx_hash,
                    reason=type(exc).__name__,
                    delay=delay,
                )
                await self.sleep(delay)
                continue
            if reported.lower() != sub.tx_hash:
                self.log.error("chain.hash_mismatch", tx_hash=sub.tx_hash, node_hash=reported)
            return

    async def _wait(self, sub: Submission) -> TxStatus | SequenceCheck:
        """Poll until committed (its status) or settled by the sequence number (the check)."""
        node, settings = self.node, self.settings
        deadline_us = sub.expiration_secs * 1_000_000
        await self.sleep(settings.first_poll_delay_seconds)
        last_contact = self.monotonic()
        undecided_since: float | None = None
        polls = misses = 0
        while True:
            if polls:
                await self.sleep(settings.poll_interval_seconds)
            polls += 1
            before_us: int | None = None
            try:
                if polls > 1 and not node.headers_seen:
                    before_us = (await node.ledger_info()).ledger_timestamp_us
                lookup = await node.lookup_transaction(sub.tx_hash)
            except ChainIdMismatch:
                raise
            except ChainError as exc:
                if self.monotonic() - last_contact > settings.wait_timeout_seconds:
                    raise SubmitOutcomeUnknown(
                        sub.tx_hash, f"node unreachable while waiting: {exc}"
                    ) from None
                continue
            last_contact = self.monotonic()
            status = lookup.status
            if status is not None and status.committed:
                return status
            misses = misses + 1 if status is None else 0
            ledger_us = lookup.ledger_timestamp_us
            ledger_us = ledger_us if ledger_us is not None else before_us
            past = ledger_us is not None and ledger_us >= deadline_us
            if not past and not (misses and misses % _CHECK_EVERY_MISSES == 0):
                continue
            check = await self._check(sub)
            if check.fate is SequenceFate.OURS and check.status is not None:
                self.log.info("chain.found_by_sequence", tx_hash=sub.tx_hash)
                return check.status
            if check.fate in (SequenceFate.CONSUMED, SequenceFate.UNUSED):
                return check
            if past:
                undecided_since = self._inconclusive(sub, check, undecided_since)

    async def _check(self, sub: Submission) -> SequenceCheck:
        """`check_sequence`; a read that fails settles nothing (an open check)."""
        try:
            return await check_sequence(
                self.node, sub.sender, sub.tx_hash, sub.sequence_number, sub.expiration_secs
            )
        except ChainIdMismatch:
            raise
        except ChainError as exc:
            return SequenceCheck(SequenceFate.OPEN, detail=f"the account could not be read: {exc}")

    def _inconclusive(self, sub: Submission, check: SequenceCheck, since: float | None) -> float:
        """Past the expiration, a read settled nothing: read again, for a bounded time."""
        now = self.monotonic()
        if since is None:
            since = now
            self.log.warning(
                "chain.sequence_inconclusive",
                tx_hash=sub.tx_hash,
                detail=check.detail,
                ledger_version=check.ledger_version,
            )
        if now - since > self.settings.wait_timeout_seconds:
            raise SubmitOutcomeUnknown(
                sub.tx_hash,
                f"the node's reads stayed inconclusive past the expiration: {check.detail}",
            )
        return since

    async def _settle(
        self,
        sub: Submission,
        kind: OutcomeStatus,
        *,
        status: TxStatus | None = None,
        detail: str = "",
        consumed_by: str | None = None,
    ) -> TxOutcome:
        if status is not None:
            kind = OutcomeStatus.COMMITTED if status.success else OutcomeStatus.FAILED
            await self.allocator.committed(sub.sequence_number)
        else:
            await self.allocator.mark_lost(sub.sequence_number)
        outcome = TxOutcome(
            status=kind,
            tx_hash=sub.tx_hash,
            sender=sub.sender,
            sequence_number=sub.sequence_number,
            vm_status=status.vm_status if status else "",
            gas_used=status.gas_used if status else 0,
            gas_unit_price=(status.gas_unit_price or sub.gas_unit_price) if status else 0,
            version=status.version if status else None,
            events=status.events if status else (),
            balance_changes=status.balance_changes if status else None,
            timestamp=status.timestamp if status else None,
            expiration_secs=sub.expiration_secs,
            detail=detail,
            previous=sub.previous,
            consumed_by=consumed_by,
        )
        self.log.info(
            "chain.outcome",
            tx_hash=sub.tx_hash,
            status=str(kind),
            sequence_number=sub.sequence_number,
            vm_status=outcome.vm_status,
            gas_used=outcome.gas_used,
        )
        await self.recorder.on_outcome(sub.tx_hash, outcome)
        return outcome
