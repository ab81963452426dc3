"""The signer's recorder backed by the journal: a hash is durable before its bytes leave.

One `JournalRecorder` is given to the signer when it is built and serves it for its whole
life. Which intent a transaction belongs to is passed explicitly: the executor calls
`Signer.execute(…, intent_id=…)` and the signer hands that id to `before_submit`, so
concurrent executions never mix up. What was signed for an intent is read back from the
journal (`Journal.transactions(intent_id=…)`), where it was written before anything was
sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from bot.aptos.address import Address
from bot.chain import OutcomeStatus, TxOutcome
from bot.chain.records import account_deltas
from bot.clock import Clock
from bot.engine import failpoints
from bot.engine.journal_roles import TransactionLog
from bot.journal.codec import encode_json

__all__ = ["JournalRecorder"]

_STATE: Final = {
    "committed": "committed",
    "failed": "failed",
    "expired": "expired",
    "superseded": "expired",  # never executed: another transaction used its number
    "rejected": "failed",
}


class JournalRecorder:
    """`TxRecorder` writing every transaction to the journal's `transactions` table."""

    def __init__(self, journal: TransactionLog, clock: Clock) -> None:
        self.journal = journal
        self.clock = clock

    async def before_submit(
        self,
        tx_hash: str,
        sender: Address,
        sequence_number: int,
        payload_summary: Mapping[str, Any],
        *,
        intent_id: int | None = None,
    ) -> None:
        """Record the signed transaction (on disk) under `intent_id`, before it is sent."""
        self.journal.record_transaction(
            tx_hash,
            str(sender),
            sequence_number,
            encode_json(dict(payload_summary)),
            at=self.clock.now(),
            intent_id=intent_id,
            state="signed",
        )
        failpoints.hit("before_submit")

    async def knows(self, tx_hash: str) -> bool:
        """True when the journal holds `tx_hash`: a transaction this bot signed (`TxDirectory`)."""
        return self.journal.transaction(tx_hash) is not None

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        """Record how it ended: its gas, the gas unit price, the sender's balance changes."""
        executed = outcome.status in (OutcomeStatus.COMMITTED, OutcomeStatus.FAILED)
        self.journal.update_transaction(
            tx_hash,
            _STATE.get(str(outcome.status), "failed"),
            at=self.clock.now(),
            gas_used=outcome.gas_used or None,
            vm_status=outcome.vm_status or None,
            gas_unit_price=(outcome.gas_unit_price or None) if executed else None,
            balance_changes=account_deltas(outcome.balance_changes, outcome.sender)
            if executed
            else None,
            committed_at=outcome.timestamp if executed else None,
        )
