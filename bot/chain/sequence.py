"""Sequence numbers of one account: read from the chain once, then handed out locally.

Several transactions may be in flight. A number that is lost (expired unexecuted, or refused
by the node) leaves a gap, so every later number in flight can never commit either (unless
someone else fills the gap): the allocator is then *stalled*. A stalled allocator hands out
nothing until every number in flight is resolved — committed, or waited out to its
expiration by the node's ledger time — and then re-reads the account's sequence number from
the chain. Re-reading earlier could hand out a number whose old transaction is still parked
in the mempool, and both would execute.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bot.aptos.address import Address

__all__ = ["SequenceAllocator"]


class SequenceAllocator:
    """Hands out sequence numbers for one account; guarded by one asyncio condition.

    Args:
        address: the account.
        read_chain: reads the account's next sequence number from the chain.
    """

    def __init__(self, address: Address, read_chain: Callable[[], Awaitable[int]]) -> None:
        self.address = address
        self._read_chain = read_chain
        self._next: int | None = None
        self._in_flight: set[int] = set()
        self._lost_from: int | None = None
        self._condition = asyncio.Condition()
        self.resyncs = 0

    @property
    def in_flight(self) -> frozenset[int]:
        """Numbers handed out whose transactions are not resolved yet."""
        return frozenset(self._in_flight)

    @property
    def stalled(self) -> bool:
        """True after a loss, until the next resync."""
        return self._lost_from is not None

    def is_lost(self, number: int) -> bool:
        """True when `number` is at or after a lost number (and not yet resynced)."""
        return self._lost_from is not None and number >= self._lost_from

    def chain_estimate(self) -> int | None:
        """The account's on-chain sequence number as far as we know (None before the first read).

        The lowest number still unresolved (in flight or lost), else the next to hand out.
        This is the number a simulation must carry: the node simulates against the
        account's current state.
        """
        if self._next is None:
            return None
        candidates = [self._next, *self._in_flight]
        if self._lost_from is not None:
            candidates.append(self._lost_from)
        return min(candidates)

    async def ensure_initialised(self) -> int:
        """Read the chain on first use; returns `chain_estimate()`."""
        async with self._condition:
            if self._next is None:
                return await self._resync_locked()
        estimate = self.chain_estimate()
        return estimate if estimate is not None else await self.resync()

    async def allocate(self) -> int:
        """The next number, marked in flight.

        Initialises from the chain on first use; when stalled, waits until nothing is in
        flight, then re-reads the chain.
        """
        async with self._condition:
            while self._lost_from is not None and self._in_flight:
                await self._condition.wait()
            number = self._next
            if number is None or self._lost_from is not None:
                number = await self._resync_locked()
            self._next = number + 1
            self._in_flight.add(number)
            return number

    async def resync(self) -> int:
        """Re-read the account's sequence number now (only safe with nothing in flight).

        Raises:
            RuntimeError: when numbers are still in flight.
        """
        async with self._condition:
            if self._in_flight:
                raise RuntimeError(f"cannot resync with {sorted(self._in_flight)} in flight")
            return await self._resync_locked()

    async def _resync_locked(self) -> int:
        chain = await self._read_chain()
        self._next = chain
        self._lost_from = None
        self.resyncs += 1
        return chain

    async def observe_chain(self, chain_sequence: int) -> None:
        """Adopt a freshly read on-chain number, when nothing is in flight.

        Used after a simulation said the local number was stale; ignored otherwise.
        """
        async with self._condition:
            if not self._in_flight and self._lost_from is None:
                self._next = chain_sequence

    async def committed(self, number: int) -> None:
        """`number` is used on chain (the transaction committed, successfully or not)."""
        async with self._condition:
            self._in_flight.discard(number)
            self._condition.notify_all()

    async def mark_lost(self, number: int) -> None:
        """`number` will never be used by its transaction: it and every later number stall."""
        async with self._condition:
            self._in_flight.discard(number)
            if self._lost_from is None or number < self._lost_from:
                self._lost_from = number
            self._condition.notify_all()
