"""The fate of a transaction `by_hash` does not show, read from its sequence number.

A node may answer 404 for a committed transaction (pruned, load-balanced onto a node that
lags, an indexer gap), and an account read may come from an older ledger version than the
answer before it. So "not found" settles nothing by itself. What does:

* The account's sequence number (`GET /v1/accounts/{a}`) is the next number the chain
  expects. Above our transaction's number n: n was **used**, by exactly one committed
  transaction; the account's transaction list from n on
  (`GET /v1/accounts/{a}/transactions?start=n&limit=1`) names it. Ours → committed or
  failed by its `vm_status`; another hash → ours never executes (the caller decides
  whether that hash is ours — another of the bot's transactions — or foreign).
* At or below n: n is **unused** — but only as of the ledger state that answer was read
  at. It proves "never executes" only when that state's ledger time (the answer's own
  `X-Aptos-Ledger-TimestampUsec`) is at or past the transaction's expiration: no later
  block can run it. An older read proves nothing: read again.

A used number is proven even by a stale read (the chain never un-uses a number).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from bot.aptos.address import Address
from bot.chain.node import NodeClient
from bot.chain.records import TxStatus
from bot.clock import MICROS_PER_SECOND

__all__ = ["MAX_NUMBERS_CHECKED", "SequenceCheck", "SequenceFate", "check_sequence", "foreign_use"]

MAX_NUMBERS_CHECKED: Final = 8
"""How many used sequence numbers `foreign_use` looks up at most in one call."""


class SequenceFate(StrEnum):
    """What the account's sequence number says about one transaction."""

    OURS = "ours"
    """Our transaction used the number: it committed (`status` says whether it succeeded)."""
    CONSUMED = "consumed"
    """Another transaction (`consumer`, `status`) used the number: ours never executes."""
    UNUSED = "unused"
    """Unused at a ledger time at or past the expiration: ours never executes."""
    OPEN = "open"
    """Not settled yet: unused so far, the read was older than the expiration, or the
    node did not show which transaction used the number."""


@dataclass(frozen=True)
class SequenceCheck:
    """One reading of the account for one transaction (see `check_sequence`)."""

    fate: SequenceFate
    status: TxStatus | None = None
    consumer: str | None = None
    account_sequence: int | None = None
    ledger_version: int | None = None
    ledger_timestamp_us: int | None = None
    detail: str = ""


async def check_sequence(
    node: NodeClient,
    sender: Address,
    tx_hash: str,
    sequence_number: int,
    expiration_secs: int,
) -> SequenceCheck:
    """Read the account (and, if the number is used, its transaction at that number).

    Without ledger headers on the account's answer, the ledger time of a `GET /v1` read
    just before stands in for it (a node that sends no headers is trusted that far).

    Raises:
        ChainError: the node could not be read (nothing is concluded).
    """
    before_us: int | None = None
    if not node.headers_seen:
        before_us = (await node.ledger_info()).ledger_timestamp_us
    state = await node.account_state(sender)
    chain_next = state.info.sequence_number
    ledger_us = state.ledger_timestamp_us if state.ledger_timestamp_us is not None else before_us

    def verdict(fate: SequenceFate, detail: str, used: TxStatus | None = None) -> SequenceCheck:
        consumer = used.tx_hash if fate is SequenceFate.CONSUMED and used else None
        return SequenceCheck(
            fate, used, consumer, chain_next, state.ledger_version, ledger_us, detail
        )

    n = sequence_number
    if chain_next > n:
        used = await node.account_transaction(sender, n)
        if used is None:
            return verdict(
                SequenceFate.OPEN,
                f"sequence number {n} is used, but the node does not show by which transaction",
            )
        if used.tx_hash == tx_hash.lower():
            return verdict(SequenceFate.OURS, f"sequence number {n} used by ours", used)
        return verdict(SequenceFate.CONSUMED, f"sequence number {n} used by {used.tx_hash}", used)
    if ledger_us is not None and ledger_us >= expiration_secs * MICROS_PER_SECOND:
        return verdict(
            SequenceFate.UNUSED,
            f"sequence number {n} unused at ledger time {ledger_us} µs, past the expiration "
            f"{expiration_secs} s",
        )
    when = "without a ledger time" if ledger_us is None else f"at ledger time {ledger_us} µs"
    return verdict(
        SequenceFate.OPEN,
        f"sequence number {n} unused as of a read {when}, not past the expiration "
        f"{expiration_secs} s: not conclusive",
    )


async def foreign_use(
    node: NodeClient,
    knows: Callable[[str], Awaitable[bool]],
    sender: Address,
    numbers: range,
) -> tuple[int, str] | None:
    """The first of `numbers` used by a transaction `knows` denies, as (number, hash).

    Numbers the node does not show a transaction for are skipped (nothing is proven);
    at most `MAX_NUMBERS_CHECKED` are read.

    Raises:
        ChainError: the node could not be read.
    """
    for n in list(numbers)[:MAX_NUMBERS_CHECKED]:
        used = await node.account_transaction(sender, n)
        if used is not None and not await knows(used.tx_hash):
            return n, used.tx_hash
    return None
