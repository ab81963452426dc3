"""Signed transactions: recorded before their bytes are sent, then updated to their fate."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Final

from sqlmodel import col
from sqlmodel import select as sm_select

from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.codec import decode_json
from bot.journal.errors import JournalError
from bot.journal.models import TransactionRecord
from bot.journal.views import TransactionView

__all__ = ["TX_FINAL_STATES", "TX_STATES", "TransactionsMixin"]

TX_STATES: Final = ("signed", "submitted", "unknown", "committed", "failed", "expired")
TX_FINAL_STATES: Final = frozenset({"committed", "failed", "expired"})


class TransactionsMixin(JournalBase):
    """Recording signed transactions and what became of them."""

    def record_transaction(
        self,
        hash: str,
        sender: str,
        sequence_number: int,
        payload_summary: str,
        *,
        at: datetime,
        intent_id: int | None = None,
        state: str = "signed",
    ) -> TransactionView:
        """Record a signed transaction. Call this BEFORE its bytes are sent.

        Recording the same hash again with the same sender and sequence number returns the
        stored record unchanged.

        Raises:
            JournalError: malformed hash/sender (or another sender than the wallet this
                journal is opened for), unknown state, or the hash already recorded for
                another sender/sequence number.
        """
        canonical = canon.tx_hash(hash)
        canonical_sender = self._require_own(sender, "a transaction")
        if state not in TX_STATES:
            raise JournalError(f"transaction state {state!r} is not one of {TX_STATES}")
        if isinstance(sequence_number, bool) or not isinstance(sequence_number, int):
            raise JournalError("sequence number must be an int")
        moment = canon.aware(at)
        with self._writing() as session:
            found = session.exec(
                sm_select(TransactionRecord).where(TransactionRecord.hash == canonical)
            ).first()
            if found is not None:
                if (found.sender, found.sequence_number) != (canonical_sender, sequence_number):
                    raise JournalError(
                        f"transaction {canonical} already recorded for "
                        f"{found.sender} #{found.sequence_number}"
                    )
                return _tx_view(found)
            row = TransactionRecord(
                hash=canonical,
                intent_id=intent_id,
                sender=canonical_sender,
                sequence_number=sequence_number,
                payload_summary=payload_summary,
                state=state,
                created_at=moment,
                updated_at=moment,
            )
            session.add(row)
            session.flush()
            return _tx_view(row)

    def update_transaction(
        self,
        hash: str,
        state: str,
        *,
        at: datetime,
        gas_used: int | None = None,
        vm_status: str | None = None,
        gas_unit_price: int | None = None,
        balance_changes: Mapping[str, int] | None = None,
        committed_at: datetime | None = None,
    ) -> TransactionView:
        """Record what became of a transaction.

        committed, failed and expired are final: a final record may be repeated (to add
        gas, its unit price, vm_status, the sender's balance changes — asset → delta in
        base units, as the node reported them — or the ledger's commit time) but not moved
        to another state. `None` never erases a stored value.

        Raises:
            JournalError: unknown hash or state, a move out of a final state, or a gas
                figure or balance change that is not an integer.
        """
        canonical = canon.tx_hash(hash)
        if state not in TX_STATES:
            raise JournalError(f"transaction state {state!r} is not one of {TX_STATES}")
        for name, value in (("gas_used", gas_used), ("gas_unit_price", gas_unit_price)):
            if value is not None and (_not_int(value) or value < 0):
                raise JournalError(f"{name} must be a non-negative int, got {value!r}")
        changes = None if balance_changes is None else _changes_text(balance_changes)
        committed = None if committed_at is None else canon.aware(committed_at, "committed_at")
        moment = canon.aware(at)
        with self._writing() as session:
            row = session.exec(
                sm_select(TransactionRecord).where(
                    TransactionRecord.hash == canonical, *self._scoped(TransactionRecord.sender)
                )
            ).first()
            if row is None:
                raise JournalError(f"no transaction {canonical} in the journal")
            if row.state in TX_FINAL_STATES and state != row.state:
                raise JournalError(
                    f"transaction {canonical}: illegal move {row.state} → {state} (final state)"
                )
            row.state = state
            row.updated_at = moment
            if gas_used is not None:
                row.gas_used = gas_used
            if vm_status is not None:
                row.vm_status = vm_status
            if gas_unit_price is not None:
                row.gas_unit_price = gas_unit_price
            if changes is not None:
                row.balance_changes = changes
            if committed is not None:
                row.committed_at = committed
            session.add(row)
            session.flush()
            return _tx_view(row)

    def transaction(self, hash: str) -> TransactionView | None:
        """One transaction by hash."""
        canonical = canon.tx_hash(hash)
        with self._reading() as session:
            row = session.exec(
                sm_select(TransactionRecord).where(
                    TransactionRecord.hash == canonical, *self._scoped(TransactionRecord.sender)
                )
            ).first()
            return None if row is None else _tx_view(row)

    def transactions(
        self, intent_id: int | None = None, states: Iterable[str] | None = None
    ) -> list[TransactionView]:
        """Recorded transactions (oldest first), optionally of one intent / in `states`."""
        query = sm_select(TransactionRecord).where(*self._scoped(TransactionRecord.sender))
        if intent_id is not None:
            query = query.where(TransactionRecord.intent_id == intent_id)
        if states is not None:
            query = query.where(col(TransactionRecord.state).in_(list(states)))
        with self._reading() as session:
            return [_tx_view(r) for r in session.exec(query.order_by(col(TransactionRecord.id)))]


def _tx_view(row: TransactionRecord) -> TransactionView:
    return TransactionView(
        hash=row.hash,
        sender=row.sender,
        sequence_number=row.sequence_number,
        payload_summary=row.payload_summary,
        state=row.state,
        intent_id=row.intent_id,
        gas_used=row.gas_used,
        vm_status=row.vm_status,
        created_at=row.created_at,
        updated_at=row.updated_at,
        gas_unit_price=row.gas_unit_price,
        balance_changes=None if row.balance_changes is None else _changes(row.balance_changes),
        committed_at=row.committed_at,
    )


def _not_int(value: object) -> bool:
    return isinstance(value, bool) or not isinstance(value, int)


def _changes_text(changes: Mapping[str, int]) -> str:
    """Canonical JSON of balance changes: asset (canonical token) → delta as decimal text."""
    values: dict[str, str] = {}
    for asset, delta in changes.items():
        if _not_int(delta):
            raise JournalError(f"balance change of {asset}: not an int: {delta!r}")
        values[canon.token(asset, "balance change asset")] = str(delta)
    return canon.json_text(values, "balance_changes")


def _changes(text: str) -> dict[str, int]:
    return {asset: int(delta) for asset, delta in decode_json(text).items()}
