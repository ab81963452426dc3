"""The journal's roles for the engine's services: one small Protocol per role.

The engine core sees the journal only through its ports (`bot.engine.ports`, adapted by
`bot.engine.live_ports`). The services around it — the executor, the signer's recorder,
the reconciler and the order tracker — each see only the part of the journal their work
needs, named by the role the journal plays for them:

* `IntentLedger` (the executor): record an intent before anything is sent, move it along
  its states, note the order it created and store that order, read back what was signed
  for it, record what a swap sold and received;
* `TransactionRecords` (the transaction fates): look up a transaction, write its fate;
* `TransactionLog` (the signer's `JournalRecorder`): `TransactionRecords` plus recording a
  signed transaction before its bytes leave;
* `SettlementLedger` (the reconciler): the intents left unsettled, the wallet's orders and
  an intent's transactions, to settle them; `TransactionRecords` for its fates;
* `OrderBook` (the order tracker): the wallet's stored orders, kept in step with the
  provider's.

`bot.journal.Journal` satisfies every one of them as it is (structurally: mypy checks it
wherever a journal is passed); tests may pass anything that does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Protocol

from bot.journal.views import (
    IntentView,
    OrderChange,
    OrderObservation,
    OrderSnapshot,
    OrderView,
    SwapFillRecord,
    TransactionView,
)

__all__ = [
    "IntentLedger",
    "IntentSettlement",
    "OrderBook",
    "SettlementLedger",
    "TransactionLog",
    "TransactionRecords",
]


class TransactionRecords(Protocol):
    """Journaled transactions: one looked up by hash, what became of it written."""

    def transaction(self, hash: str) -> TransactionView | None:
        """One transaction by hash (None: the journal does not hold it)."""
        ...

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
        """Record what became of a transaction (its gas, unit price, balance changes)."""
        ...


class TransactionLog(TransactionRecords, Protocol):
    """The signer's log: every signed transaction, on disk before its bytes are sent."""

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
        """Record a signed transaction (call it BEFORE the bytes are sent)."""
        ...


class IntentSettlement(Protocol):
    """What settles an intent: its state, the order it made, the transactions it signed."""

    def set_intent_state(
        self,
        intent_id: int,
        state: str,
        *,
        at: datetime,
        detail: str | None = None,
        order_id: str | None = None,
        tx_hash: str | None = None,
        error: str | None = None,
    ) -> IntentView:
        """Move an intent along its state machine (planned → sent → confirmed | …)."""
        ...

    def upsert_order(
        self,
        snapshot: OrderSnapshot,
        *,
        observed_at: datetime,
        source: str,
        raw_hash: str | None = None,
    ) -> OrderChange:
        """Store one observation of an order (one an intent created, or the provider lists)."""
        ...

    def transactions(
        self, intent_id: int | None = None, states: Iterable[str] | None = None
    ) -> list[TransactionView]:
        """Recorded transactions (oldest first), of one intent / in `states`."""
        ...

    def record_swap_fill(self, fill: SwapFillRecord, *, at: datetime) -> bool:
        """Record what a confirmed swap sold and received, once per intent."""
        ...


class IntentLedger(IntentSettlement, Protocol):
    """The executor's ledger: an action becomes an effect exactly once, through it."""

    def record_intent(
        self,
        strategy: str,
        wallet: str,
        kind: str,
        idempotency_key: str,
        action: Mapping[str, Any],
        *,
        at: datetime,
    ) -> IntentView:
        """Record an intent as `planned`; an already recorded key returns it (`existing`)."""
        ...

    def note_intent_order(self, intent_id: int, order_id: str) -> None:
        """Note the order a `sent` intent created (evidence for reconciliation)."""
        ...


class SettlementLedger(TransactionRecords, IntentSettlement, Protocol):
    """The reconciler's view: what is left unsettled, and the evidence to settle it."""

    def intents(
        self, states: Iterable[str] | None = None, strategy: str | None = None
    ) -> list[IntentView]:
        """Intents (oldest first), optionally only in `states` / of one strategy."""
        ...

    def orders(
        self,
        *,
        status: Iterable[str] | None = None,
        exclude_status: Iterable[str] | None = None,
        strategy: str | None = None,
        kind: str | None = None,
        wallet: str | None = None,
    ) -> list[OrderView]:
        """Stored orders (oldest first), filtered by status, strategy, kind and wallet."""
        ...


class OrderBook(Protocol):
    """The order tracker's book: the wallet's stored orders, in step with the provider's."""

    def order_index(self, kind: str, wallet: str) -> dict[str, tuple[str, str | None]]:
        """Every stored order of one kind and wallet: order id → (status, last raw hash)."""
        ...

    def order(self, kind: str, order_id: str) -> OrderView | None:
        """One stored order (None: not stored)."""
        ...

    def upsert_order(
        self,
        snapshot: OrderSnapshot,
        *,
        observed_at: datetime,
        source: str,
        raw_hash: str | None = None,
    ) -> OrderChange:
        """Store one observation of an order; a transition when its status changed."""
        ...

    def observe_orders(
        self, observations: Iterable[OrderObservation], *, observed_at: datetime, source: str
    ) -> list[OrderChange]:
        """Store many observations with their fills in one transaction (one poll)."""
        ...
