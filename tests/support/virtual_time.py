"""Monotonic time that moves only when slept: for rate limiters and back-offs under test."""

from __future__ import annotations

import asyncio


class VirtualTime:
    """`monotonic()` and `sleep()` for code that takes them injected.

    Sleeping records the wait and moves the time by it at once. `yields`: each sleep also
    gives the event loop one turn, for code that expects other tasks to run meanwhile.
    """

    def __init__(self, start: float = 1000.0, *, yields: bool = False) -> None:
        self.now = start
        self.sleeps: list[float] = []
        self.yields = yields

    def monotonic(self) -> float:
        """The current virtual time."""
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Record the wait and move the time by it."""
        self.sleeps.append(seconds)
        self.now += seconds
        if self.yields:
            await asyncio.sleep(0)
