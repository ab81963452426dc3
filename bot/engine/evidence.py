"""Which order is an intent's own: only what the bot itself produced says so.

Reconciliation (engine/reconcile.py) links a create intent to a provider order on evidence
the bot produced, never on parameters that merely look alike (another wallet's order, or a
provider's invention, can look exactly like ours):

1. the order journaled with the intent: the createOrder answer's id, written by the
   executor (or by an earlier reconciliation) before the intent is marked confirmed;
2. a deposit transaction the bot signed for the intent that committed: the order its
   journaled summary names (`intent.order_id`, which the signer's policy checked the call
   names), or failing that one of the call's own arguments equal to a listed order's id,
   or a listed order whose tx details carry the deposit's hash.

This module reads that evidence from the journal's transactions of one intent; it neither
calls the network nor writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.api.models import DcaOrder, LimitOrder
from bot.chain.policy import names_order
from bot.engine.tx_fates import UNFINISHED_TX
from bot.journal import TransactionView

__all__ = ["Deposits", "deposits_of", "hash_key", "id_key", "order_tx_hashes"]


@dataclass(frozen=True)
class Deposits:
    """What the transactions an intent signed say (a create's deposit, in practice)."""

    committed: tuple[str, ...] = ()
    """Hashes of its transactions that committed successfully (`hash_key` form)."""
    named: tuple[str, ...] = ()
    """Order ids the committed ones name explicitly (their summary's `order_id`)."""
    arguments: frozenset[str] = frozenset()
    """Every text argument of the committed calls (an order id may be one of them)."""
    open: bool = False
    """A transaction may still commit (signed, submitted or unknown)."""
    signed: bool = False
    """The intent signed anything at all."""

    @property
    def dead(self) -> bool:
        """It signed, and every transaction ended without success (failed or expired)."""
        return self.signed and not self.committed and not self.open

    def in_arguments(self, order_id: str) -> bool:
        """True when one of the committed calls' text arguments names `order_id`."""
        return names_order(sorted(self.arguments), order_id)


def id_key(order_id: str) -> str:
    """An order id as compared here (hex ids may come in either case)."""
    return order_id.strip().lower()


def _summary(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def deposits_of(transactions: Sequence[TransactionView]) -> Deposits:
    """The evidence in one intent's journaled transactions."""
    committed: list[str] = []
    named: list[str] = []
    arguments: set[str] = set()
    for tx in transactions:
        if tx.state != "committed":
            continue
        committed.append(hash_key(tx.hash))
        summary = _summary(tx.payload_summary)
        intent = summary.get("intent")
        order_id = intent.get("order_id") if isinstance(intent, dict) else None
        if isinstance(order_id, str) and order_id.strip():
            named.append(order_id)
        args = summary.get("arguments")
        arguments.update(_texts(args if isinstance(args, list) else []))
    return Deposits(
        committed=tuple(committed),
        named=tuple(dict.fromkeys(named)),
        arguments=frozenset(arguments),
        open=any(tx.state in UNFINISHED_TX for tx in transactions),
        signed=bool(transactions),
    )


def _texts(values: Iterable[Any]) -> set[str]:
    """Every text inside a call's arguments (nested lists included)."""
    found: set[str] = set()
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def hash_key(tx_hash: str) -> str:
    """A transaction hash as compared here: lowercase hex without `0x`."""
    return tx_hash.strip().lower().removeprefix("0x")


def order_tx_hashes(order: DcaOrder | LimitOrder) -> set[str]:
    """The transaction ids an order record's tx details carry (`hash_key` form)."""
    return {hash_key(d.tx_id) for d in order.tx_details or () if d.tx_id}
