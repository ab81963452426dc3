"""The signer's recorder backed by the journal: a hash is durable before its bytes leave.

One `JournalRecorder` serves a signer for its whole life; which intent a transaction
belongs to comes from a context variable the executor sets around each signing, so
concurrent executions (each its own asyncio task, each its own context) never mix up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from bot.aptos.address import Address
from bot.chain import TxOutcome
from bot.clock import Clock
from bot.engine import failpoints
from bot.journal import Journal
from bot.journal.codec import encode_json

__all__ = ["JournalRecorder", "signing_for"]

_INTENT: ContextVar[int | None] = ContextVar("signing_intent", default=None)
_STATE: Final = {
    "committed": "committed",
    "failed": "failed",
    "expired": "expired",
    "superseded": "expired",  # never executed: another transaction used its number
    "rejected": "failed",
}


@contextmanager
def signing_for(intent_id: int) -> Iterator[None]:
    """Attribute the transactions signed inside the block to `intent_id`."""
    token = _INTENT.set(intent_id)
    try:
        yield
    finally:
        _INTENT.reset(token)


class JournalRecorder:
    """`TxRecorder` writing every transaction to the journal's `transactions` table."""

    def __init__(self, journal: Journal, clock: Clock) -> None:
        self.journal = journal
        self.clock = clock
        self.last_hash: dict[int, str] = {}

    async def before_submit(
        self,
        tx_hash: str,
        sender: Address,
        sequence_number: int,
        payload_summary: Mapping[str, Any],
    ) -> None:
        """Record the signed transaction (committed to disk) before it is sent."""
        intent_id = _INTENT.get()
        self.journal.record_transaction(
            tx_hash,
            str(sender),
            sequence_number,
            encode_json(dict(payload_summary)),
            at=self.clock.now(),
            intent_id=intent_id,
            state="signed",
        )
        if intent_id is not None:
            self.last_hash[intent_id] = tx_hash
        failpoints.hit("before_submit")

    async def knows(self, tx_hash: str) -> bool:
        """True when the journal holds `tx_hash`: a transaction this bot signed (`TxDirectory`)."""
        return self.journal.transaction(tx_hash) is not None

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        """Record how the transaction ended."""
        self.journal.update_transaction(
            tx_hash,
            _STATE.get(str(outcome.status), "failed"),
            at=self.clock.now(),
            gas_used=outcome.gas_used or None,
            vm_status=outcome.vm_status or None,
        )
