"""Transaction outcomes, and the recorder that hears of every transaction before it is sent.

`TxRecorder` is what the journal implements (issue #7): `before_submit` is awaited with the
transaction's hash — and the journal intent it carries out, which the caller of
`Signer.execute` passes in — *before* its bytes are sent, so a crash between sending and
hearing back leaves a hash to resolve, never a transaction nobody knows about;
`on_outcome` is awaited once the hash's fate is known (committed, failed, expired,
superseded or rejected).
A recorder may also answer `knows(hash)` (`TxDirectory`): whether a transaction is one the
bot signed — a sequence number used by one it does not know means another signer uses the
wallet. `InMemoryRecorder` is the stand-in for tests and the dry-run path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from bot.aptos.address import Address
from bot.chain.records import BalanceChange

__all__ = ["InMemoryRecorder", "OutcomeStatus", "TxDirectory", "TxOutcome", "TxRecorder"]


class OutcomeStatus(StrEnum):
    """The fate of one signed transaction."""

    COMMITTED = "committed"
    """On chain with `success: true`."""
    FAILED = "failed"
    """On chain with `success: false` (aborted; gas spent)."""
    EXPIRED = "expired"
    """Its sequence number unused at a ledger time past its expiration: never executed."""
    SUPERSEDED = "superseded"
    """Never executed: another transaction (`consumed_by`) used its sequence number."""
    REJECTED = "rejected"
    """Refused by the node at submission (or never sent): not executed."""


@dataclass(frozen=True)
class TxOutcome:
    """What happened to a signed transaction.

    Attributes:
        previous: earlier attempts of the same call (expired, superseded or rejected)
            that this transaction replaced, oldest first; `resigned` says whether there
            were any.
        consumed_by: for a superseded transaction, the hash of the one that used its
            sequence number.
    """

    status: OutcomeStatus
    tx_hash: str
    sender: Address
    sequence_number: int
    vm_status: str = ""
    gas_used: int = 0
    gas_unit_price: int = 0
    version: int | None = None
    events: tuple[dict[str, Any], ...] = ()
    balance_changes: tuple[BalanceChange, ...] | None = None
    timestamp: datetime | None = None
    expiration_secs: int = 0
    detail: str = ""
    previous: tuple[TxOutcome, ...] = field(default=())
    consumed_by: str | None = None

    @property
    def success(self) -> bool:
        """True only for a committed, successful transaction."""
        return self.status is OutcomeStatus.COMMITTED

    @property
    def resigned(self) -> bool:
        """True when an earlier attempt did not execute and this one replaced it."""
        return bool(self.previous)

    @property
    def gas_fee(self) -> int:
        """Octas of APT charged for gas (0 unless committed)."""
        return self.gas_used * self.gas_unit_price

    def summary(self) -> dict[str, Any]:
        """JSON-ready form for the journal and logs (amounts as text)."""
        return {
            "status": str(self.status),
            "hash": self.tx_hash,
            "sender": str(self.sender),
            "sequence_number": self.sequence_number,
            "vm_status": self.vm_status,
            "gas_used": str(self.gas_used),
            "gas_unit_price": str(self.gas_unit_price),
            "version": str(self.version) if self.version is not None else None,
            "balance_changes": (
                [c.as_json() for c in self.balance_changes] if self.balance_changes else []
            ),
            "timestamp": self.timestamp.isoformat() if self.timestamp else None,
            "expiration_secs": self.expiration_secs,
            "detail": self.detail,
            "previous": [p.tx_hash for p in self.previous],
            "consumed_by": self.consumed_by,
        }


@runtime_checkable
class TxRecorder(Protocol):
    """Hears of every transaction: its hash before it is sent, then its outcome."""

    async def before_submit(
        self,
        tx_hash: str,
        sender: Address,
        sequence_number: int,
        payload_summary: Mapping[str, Any],
        *,
        intent_id: int | None = None,
    ) -> None:
        """Record the hash (durably) before the bytes are sent; raising stops the send.

        `intent_id` is the journal intent the transaction carries out (None: none).
        """
        ...

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        """Record the transaction's fate."""
        ...


@runtime_checkable
class TxDirectory(Protocol):
    """Says whether a transaction is one the bot signed (the journal holds it)."""

    async def knows(self, tx_hash: str) -> bool:
        """True when `tx_hash` was recorded by `before_submit` (by this or an earlier run)."""
        ...


class InMemoryRecorder:
    """A `TxRecorder` keeping everything in lists (tests, benchmarks, dry runs).

    Attributes:
        events: `("before_submit", hash)` and `("outcome", hash, status)` in call order.
        submitted: hash → (sender, sequence number, payload summary).
        intents: hash → the journal intent id it was signed for (None: none).
        outcomes: hash → outcome.
    """

    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []
        self.submitted: dict[str, tuple[Address, int, dict[str, Any]]] = {}
        self.intents: dict[str, int | None] = {}
        self.outcomes: dict[str, TxOutcome] = {}

    async def before_submit(
        self,
        tx_hash: str,
        sender: Address,
        sequence_number: int,
        payload_summary: Mapping[str, Any],
        *,
        intent_id: int | None = None,
    ) -> None:
        """Remember the hash, summary and intent."""
        self.events.append(("before_submit", tx_hash))
        self.submitted[tx_hash] = (sender, sequence_number, dict(payload_summary))
        self.intents[tx_hash] = intent_id

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        """Remember the outcome."""
        self.events.append(("outcome", tx_hash, str(outcome.status)))
        self.outcomes[tx_hash] = outcome

    async def knows(self, tx_hash: str) -> bool:
        """True for a hash recorded by `before_submit`."""
        return tx_hash.lower() in self.submitted
