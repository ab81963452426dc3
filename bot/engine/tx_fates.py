"""The fate of the wallet's journaled transactions whose signer never learnt it.

Reconciliation's first step (engine/reconcile.py). A transaction the journal holds as
`signed`, `submitted` or `unknown` is looked up by hash; `by_hash` showing it committed
settles it. Anything else — a 404 (which a node may give for a committed transaction), a
pending answer — is settled by the account's sequence number (`bot.chain.fate`):

* used by this transaction → `committed` / `failed` by its `vm_status`;
* used by another transaction the journal holds → this one never executes: `expired`;
  the other is settled by what the node showed of it, if the journal had no fate for it;
* used by a transaction the journal does not hold → this one never executes (`expired`)
  and another signer uses the wallet: `ForeignSigner`, kept in `foreign_signer` and handed
  to `on_foreign_signer` (the daemon pauses trading);
* unused as of a ledger time at or past its expiration → `expired`;
* otherwise (before the expiration, a stale read, a listing that does not show the
  transaction that used the number) → left as it is: the next run reads again.

A swap intent is then settled by its transactions' journaled fates (`swap_fate`), never by
the grace period while one of them may still commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final

from bot.aptos.address import Address
from bot.chain import NodeClient, TxStatus
from bot.chain.errors import ForeignSigner
from bot.chain.fate import SequenceFate, check_sequence
from bot.chain.records import account_deltas
from bot.clock import Clock
from bot.engine.journal_roles import TransactionRecords
from bot.journal.views import TransactionView
from bot.logging import get_logger

__all__ = ["UNFINISHED_TX", "TransactionFates", "swap_fate"]

UNFINISHED_TX: Final = ("signed", "submitted", "unknown")
_NO_EXPIRATION: Final = 2**64
"""A transaction whose journaled summary has no expiration is never given up."""


class TransactionFates:
    """Settles unfinished journaled transactions of one wallet from what the node shows."""

    def __init__(
        self,
        journal: TransactionRecords,
        node: NodeClient,
        clock: Clock,
        wallet: str,
        on_foreign_signer: Callable[[ForeignSigner], None] | None = None,
    ) -> None:
        self.journal = journal
        self.node = node
        self.clock = clock
        self.wallet = wallet
        self.on_foreign_signer = on_foreign_signer
        self.foreign_signer: ForeignSigner | None = None
        """The first foreign signer seen using this wallet's sequence numbers."""
        self._log = get_logger("reconcile", wallet=wallet)

    async def settle(self, tx: TransactionView) -> bool:
        """Record `tx`'s fate when the node proves it; True when the journal moved.

        Raises:
            ChainError: the node could not be read (nothing is recorded).
        """
        lookup = await self.node.lookup_transaction(tx.hash)
        status = lookup.status
        if status is not None and status.committed:
            return self._record(tx.hash, status)
        expiration = _expiration(tx.payload_summary)
        check = await check_sequence(
            self.node, Address.parse(tx.sender), tx.hash, tx.sequence_number, expiration
        )
        if check.fate is SequenceFate.OURS and check.status is not None:
            return self._record(tx.hash, check.status)
        if check.fate is SequenceFate.UNUSED:
            return self._expire(tx.hash, check.detail)
        if check.fate is SequenceFate.CONSUMED and check.consumer is not None:
            consumer = self.journal.transaction(check.consumer)
            if consumer is None:
                self._foreign(tx, check.consumer)
            elif consumer.state in UNFINISHED_TX and check.status is not None:
                self._record(consumer.hash, check.status)
            return self._expire(tx.hash, check.detail)
        self._log.info("reconcile.transaction_open", tx_hash=tx.hash, detail=check.detail)
        return False

    def _record(self, tx_hash: str, status: TxStatus) -> bool:
        state = "committed" if status.success else "failed"
        self.journal.update_transaction(
            tx_hash,
            state,
            at=self.clock.now(),
            gas_used=status.gas_used or None,
            vm_status=status.vm_status or None,
            gas_unit_price=status.gas_unit_price or None,
            balance_changes=account_deltas(status.balance_changes, status.sender)
            if status.sender is not None
            else None,
            committed_at=status.timestamp,
        )
        self._log.info("reconcile.transaction", tx_hash=tx_hash, state=state)
        return True

    def _expire(self, tx_hash: str, detail: str) -> bool:
        self.journal.update_transaction(tx_hash, "expired", at=self.clock.now())
        self._log.info("reconcile.transaction", tx_hash=tx_hash, state="expired", detail=detail)
        return True

    def _foreign(self, tx: TransactionView, foreign_hash: str) -> None:
        cause = ForeignSigner(tx.sender, tx.sequence_number, foreign_hash, tx_hash=tx.hash)
        self._log.error(
            "reconcile.foreign_signer",
            sequence_number=tx.sequence_number,
            foreign_hash=foreign_hash,
            tx_hash=tx.hash,
        )
        if self.foreign_signer is None:
            self.foreign_signer = cause
        if self.on_foreign_signer is not None:
            self.on_foreign_signer(cause)


def swap_fate(transactions: list[TransactionView]) -> tuple[str, str] | None:
    """A swap intent's state from its transactions' journaled fates, or None: not yet.

    One committed → `confirmed`. All final and none committed → `failed` (an aborted one's
    `vm_status`, else "never executed"). One still unfinished → None: it may commit.
    """
    if not transactions:
        return "failed", "no transaction was ever signed"
    for tx in transactions:
        if tx.state == "committed":
            return "confirmed", tx.vm_status or ""
    if any(tx.state in UNFINISHED_TX for tx in transactions):
        return None
    aborted = [tx.vm_status for tx in transactions if tx.state == "failed" and tx.vm_status]
    return "failed", aborted[-1] if aborted else "no transaction of it executed"


def _expiration(payload_summary: str) -> int:
    """The journaled `expiration_timestamp_secs`, or a time never reached when absent."""
    try:
        return int(json.loads(payload_summary)["expiration_timestamp_secs"])
    except (ValueError, KeyError, TypeError):
        return _NO_EXPIRATION
