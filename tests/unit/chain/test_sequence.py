from __future__ import annotations

import asyncio

import pytest

from bot.aptos.address import Address
from bot.chain.sequence import SequenceAllocator

ACCOUNT = Address.parse("0xabc")


class Chain:
    def __init__(self, sequence: int) -> None:
        self.sequence = sequence
        self.reads = 0

    async def read(self) -> int:
        self.reads += 1
        return self.sequence


async def test_initialised_from_chain_then_local() -> None:
    chain = Chain(7)
    allocator = SequenceAllocator(ACCOUNT, chain.read)
    assert allocator.chain_estimate() is None
    assert [await allocator.allocate() for _ in range(3)] == [7, 8, 9]
    assert chain.reads == 1
    assert allocator.in_flight == {7, 8, 9}
    assert allocator.chain_estimate() == 7
    await allocator.committed(7)
    assert allocator.chain_estimate() == 8


async def test_lost_number_stalls_later_ones_until_they_resolve() -> None:
    chain = Chain(0)
    allocator = SequenceAllocator(ACCOUNT, chain.read)
    first, second = await allocator.allocate(), await allocator.allocate()
    await allocator.mark_lost(first)
    assert allocator.stalled
    assert allocator.is_lost(second) and allocator.is_lost(first)
    assert allocator.chain_estimate() == 0

    waiter = asyncio.create_task(allocator.allocate())
    await asyncio.sleep(0)
    assert not waiter.done()  # `second` may still be parked in the mempool
    await allocator.mark_lost(second)  # waited out to its expiration
    assert await waiter == 0  # re-read from the chain: the gap is refilled
    assert chain.reads == 2
    assert not allocator.stalled


async def test_stall_waits_for_earlier_in_flight_too() -> None:
    chain = Chain(5)
    allocator = SequenceAllocator(ACCOUNT, chain.read)
    a, b = await allocator.allocate(), await allocator.allocate()
    await allocator.mark_lost(b)
    assert not allocator.is_lost(a)
    waiter = asyncio.create_task(allocator.allocate())
    await asyncio.sleep(0)
    assert not waiter.done()
    chain.sequence = 6  # `a` committed on chain
    await allocator.committed(a)
    assert await waiter == 6


async def test_resync_refuses_with_numbers_in_flight() -> None:
    chain = Chain(1)
    allocator = SequenceAllocator(ACCOUNT, chain.read)
    await allocator.allocate()
    with pytest.raises(RuntimeError, match="in flight"):
        await allocator.resync()
    await allocator.committed(1)
    chain.sequence = 9  # another process sent 7 transactions
    assert await allocator.resync() == 9
    assert await allocator.allocate() == 9


async def test_observe_chain_only_when_idle() -> None:
    chain = Chain(3)
    allocator = SequenceAllocator(ACCOUNT, chain.read)
    assert await allocator.ensure_initialised() == 3
    await allocator.observe_chain(4)
    assert await allocator.allocate() == 4
    await allocator.observe_chain(10)  # ignored: 4 is in flight
    assert await allocator.allocate() == 5


async def test_concurrent_allocations_are_distinct() -> None:
    allocator = SequenceAllocator(ACCOUNT, Chain(0).read)
    numbers = await asyncio.gather(*(allocator.allocate() for _ in range(50)))
    assert sorted(numbers) == list(range(50))
