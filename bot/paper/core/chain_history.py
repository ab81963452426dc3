"""The paper chain's past: committed transactions per account, and reads from an older state.

A real node lists an account's committed transactions by sequence number
(`GET /v1/accounts/{a}/transactions?start=&limit=`), and a lagging or load-balanced node
answers from an older ledger version. Both are derived here from the transactions the
paper chain committed — the bot's own (`TxRecord`) and those of another signer of the
same account (`ForeignTx`, which the paper world cannot run: it has no effects and costs
no gas, it only uses its sequence number).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

from bot.clock import to_micros

if TYPE_CHECKING:
    from bot.paper.core.chain import PaperChain, TxRecord

__all__ = [
    "FOREIGN_FUNCTION",
    "ForeignTx",
    "LedgerView",
    "committed_of",
    "sequence_as_of",
    "view_as_of",
]

FOREIGN_FUNCTION: Final = "0x1::aptos_account::transfer"
"""What a foreign transaction's payload claims to call (it is not run)."""


@dataclass(frozen=True)
class ForeignTx:
    """A transaction another signer of the account committed with one of its numbers."""

    hash: str
    sender: str
    sequence_number: int
    version: int
    committed_at: datetime
    expiration: int
    pruned: bool = False
    """The node shows it nowhere (pruned): only the account's sequence number moved."""


@dataclass(frozen=True)
class LedgerView:
    """A ledger state: its version and timestamp (what a node's headers report)."""

    version: int
    timestamp_us: int


def _committed(chain: PaperChain, *, pruned: bool = True) -> list[TxRecord | ForeignTx]:
    """Every committed transaction; without the pruned foreign ones unless `pruned`."""
    mine: list[TxRecord | ForeignTx] = [
        r for r in chain.transactions() if r.version is not None and r.committed_at is not None
    ]
    return [*mine, *(f for f in chain.foreign.values() if pruned or not f.pruned)]


def _at(record: TxRecord | ForeignTx) -> int:
    moment = record.committed_at
    return to_micros(moment) if moment is not None else 0


def committed_of(
    chain: PaperChain, address: str, *, as_of: LedgerView | None = None, pruned: bool = False
) -> list[TxRecord | ForeignTx]:
    """`address`'s committed transactions in sequence-number order (up to `as_of`).

    Pruned ones (which a node no longer shows) only with `pruned`.
    """
    found = [
        r
        for r in _committed(chain, pruned=pruned)
        if r.sender == address and (as_of is None or (r.version or 0) <= as_of.version)
    ]
    return sorted(found, key=lambda r: r.sequence_number)


def view_as_of(chain: PaperChain, lag_us: int) -> LedgerView:
    """The ledger state `lag_us` of ledger time ago: the last version committed by then."""
    timestamp = max(0, chain.ledger_timestamp_us - lag_us)
    versions = [r.version or 0 for r in _committed(chain) if _at(r) <= timestamp]
    return LedgerView(max(versions, default=0), timestamp)


def sequence_as_of(chain: PaperChain, address: str, view: LedgerView) -> int:
    """`address`'s next sequence number in the ledger state `view`."""
    numbers = [r.sequence_number for r in committed_of(chain, address, as_of=view, pruned=True)]
    return max(numbers, default=-1) + 1
