"""Sending one signed transaction and waiting for its fate, by hash, account and ledger time.

* 507 (mempool full), 429 and "connection refused" mean the bytes were not applied: back
  off and send the *same* bytes again (same hash), a bounded number of times; if that
  never works the transaction is definitively not in the mempool (rejected).
* A lost answer (timeout, dropped connection, 5xx) means "outcome unknown": the same hash
  is polled; nothing is resubmitted.
* Waiting ends when `by_hash` shows the transaction committed. A 404 is not "lost": a
  node may 404 a committed transaction. Once an answer's ledger time (the node's
  `X-Aptos-Ledger-TimestampUsec` on that very answer, else a `GET /v1` read just before)
  is at or past the expiration — and every few 404s before that — the account's sequence
  number settles it (`bot.chain.fate`): used by ours → committed/failed; used by another
  transaction → superseded (never executes); unused as of a ledger time at or past the
  expiration → expired (never executes). An account read older than the expiration, or
  a used number whose transaction the node does not show, settles nothing: read again,
  until `wait_timeout_seconds` without a conclusive read make the outcome unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.aptos.address import Address
from bot.chain.errors import (
    ChainError,
    ChainIdMismatch,
    MempoolFull,
    NodeError,
    NodeRateLimited,
    NotSent,
    SequenceTooOld,
    SubmitOutcomeUnknown,
)
from bot.chain.fate import SequenceCheck, SequenceFate, check_sequence
from bot.chain.outcome import OutcomeStatus, TxOutcome
from bot.chain.records import TxStatus
from bot.chain.wire import backoff_delay

if TYPE_CHECKING:
    from bot.chain.signer import Signer

__all__ = ["Submission", "submit_and_wait"]

_RESEND_CAP_SECONDS = 10.0
_CHECK_EVERY_MISSES = 3
"""Before the expiration, the account is read after every this many 404s in a row."""


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


async def submit_and_wait(signer: Signer, sub: Submission) -> TxOutcome:
    """Submit `sub` and wait for its fate; the recorder hears of it, the allocator too.

    Returns:
        A committed or failed outcome; an expired one (its number unused past the
        expiration: definitively not executed); a superseded one (another transaction,
        `consumed_by`, used its number: never executes); or a rejected one when the node
        said the sequence number is too old.

    Raises:
        NodeError / NotSent: the node refused the bytes for another reason, or never took
            them (recorded as rejected first).
        SubmitOutcomeUnknown: the node stayed unreachable (or its reads inconclusive)
            while waiting; resolve by hash.
    """
    try:
        await _send(signer, sub)
    except SequenceTooOld as exc:
        return await _settle(signer, sub, OutcomeStatus.REJECTED, detail=exc.node_message)
    except (NodeError, NotSent) as exc:
        await _settle(signer, sub, OutcomeStatus.REJECTED, detail=str(exc))
        raise
    except BaseException:  # cancelled mid-send: the fate is unknown, stall the allocator
        await signer.allocator.mark_lost(sub.sequence_number)
        raise
    try:
        fate = await _wait(signer, sub)
    except BaseException:
        # Unknown fate: stall the allocator, so nothing is numbered until the chain is re-read.
        await signer.allocator.mark_lost(sub.sequence_number)
        raise
    if isinstance(fate, TxStatus):
        return await _settle(signer, sub, OutcomeStatus.COMMITTED, status=fate)
    if fate.fate is SequenceFate.CONSUMED:
        return await _settle(
            signer, sub, OutcomeStatus.SUPERSEDED, detail=fate.detail, consumed_by=fate.consumer
        )
    return await _settle(signer, sub, OutcomeStatus.EXPIRED, detail=fate.detail)


async def _send(signer: Signer, sub: Submission) -> None:
    attempts = max(1, signer.settings.max_submit_attempts)
    for attempt in range(1, attempts + 1):
        try:
            reported = await signer.node.submit(sub.data, sub.tx_hash)
        except SubmitOutcomeUnknown as exc:
            signer.log.warning(
                "chain.submit_outcome_unknown", tx_hash=sub.tx_hash, detail=exc.detail
            )
            return
        except (MempoolFull, NodeRateLimited, NotSent) as exc:
            if attempt == attempts:
                raise
            retry_after = exc.retry_after if isinstance(exc, NodeRateLimited) else None
            delay = backoff_delay(attempt, retry_after, _RESEND_CAP_SECONDS)
            signer.log.info(
                "chain.resend_same_bytes",
                tx_hash=sub.tx_hash,
                reason=type(exc).__name__,
                delay=delay,
            )
            await signer.sleep(delay)
            continue
        if reported.lower() != sub.tx_hash:
            signer.log.error("chain.hash_mismatch", tx_hash=sub.tx_hash, node_hash=reported)
        return


async def _wait(signer: Signer, sub: Submission) -> TxStatus | SequenceCheck:
    """Poll until committed (its status) or settled by the sequence number (the check)."""
    node, settings = signer.node, signer.settings
    deadline_us = sub.expiration_secs * 1_000_000
    await signer.sleep(settings.first_poll_delay_seconds)
    last_contact = signer.monotonic()
    undecided_since: float | None = None
    polls = misses = 0
    while True:
        if polls:
            await signer.sleep(settings.poll_interval_seconds)
        polls += 1
        before_us: int | None = None
        try:
            if polls > 1 and not node.headers_seen:
                before_us = (await node.ledger_info()).ledger_timestamp_us
            lookup = await node.lookup_transaction(sub.tx_hash)
        except ChainIdMismatch:
            raise
        except ChainError as exc:
            if signer.monotonic() - last_contact > settings.wait_timeout_seconds:
                raise SubmitOutcomeUnknown(
                    sub.tx_hash, f"node unreachable while waiting: {exc}"
                ) from None
            continue
        last_contact = signer.monotonic()
        status = lookup.status
        if status is not None and status.committed:
            return status
        misses = misses + 1 if status is None else 0
        ledger_us = lookup.ledger_timestamp_us
        ledger_us = ledger_us if ledger_us is not None else before_us
        past = ledger_us is not None and ledger_us >= deadline_us
        if not past and not (misses and misses % _CHECK_EVERY_MISSES == 0):
            continue
        check = await _check(signer, sub)
        if check.fate is SequenceFate.OURS and check.status is not None:
            signer.log.info("chain.found_by_sequence", tx_hash=sub.tx_hash)
            return check.status
        if check.fate in (SequenceFate.CONSUMED, SequenceFate.UNUSED):
            return check
        if past:
            undecided_since = _inconclusive(signer, sub, check, undecided_since)


async def _check(signer: Signer, sub: Submission) -> SequenceCheck:
    """`check_sequence`; a read that fails settles nothing (an open check)."""
    try:
        return await check_sequence(
            signer.node, sub.sender, sub.tx_hash, sub.sequence_number, sub.expiration_secs
        )
    except ChainIdMismatch:
        raise
    except ChainError as exc:
        return SequenceCheck(SequenceFate.OPEN, detail=f"the account could not be read: {exc}")


def _inconclusive(
    signer: Signer, sub: Submission, check: SequenceCheck, since: float | None
) -> float:
    """Past the expiration, a read settled nothing: read again, for a bounded time."""
    now = signer.monotonic()
    if since is None:
        since = now
        signer.log.warning(
            "chain.sequence_inconclusive",
            tx_hash=sub.tx_hash,
            detail=check.detail,
            ledger_version=check.ledger_version,
        )
    if now - since > signer.settings.wait_timeout_seconds:
        raise SubmitOutcomeUnknown(
            sub.tx_hash, f"the node's reads stayed inconclusive past the expiration: {check.detail}"
        )
    return since


async def _settle(
    signer: Signer,
    sub: Submission,
    kind: OutcomeStatus,
    *,
    status: TxStatus | None = None,
    detail: str = "",
    consumed_by: str | None = None,
) -> TxOutcome:
    if status is not None:
        kind = OutcomeStatus.COMMITTED if status.success else OutcomeStatus.FAILED
        await signer.allocator.committed(sub.sequence_number)
    else:
        await signer.allocator.mark_lost(sub.sequence_number)
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
    signer.log.info(
        "chain.outcome",
        tx_hash=sub.tx_hash,
        status=str(kind),
        sequence_number=sub.sequence_number,
        vm_status=outcome.vm_status,
        gas_used=outcome.gas_used,
    )
    await signer.recorder.on_outcome(sub.tx_hash, outcome)
    return outcome
