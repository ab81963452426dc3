"""What every route shares: the sources, the clock, and the worker threads reads run in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
import anyio.to_thread
from fastapi import HTTPException, Request

from bot.clock import Clock
from bot.console.sources import ConsoleSources

__all__ = ["ConsoleCore", "client_address", "not_found"]

T = TypeVar("T")


@dataclass
class ConsoleCore:
    """The console's shared parts. `threads`: how many journal reads may run at once."""

    sources: ConsoleSources
    clock: Clock
    threads: int = 4
    _limiter: anyio.CapacityLimiter | None = field(default=None, init=False, repr=False)

    async def off_loop(self, work: Callable[[], T]) -> T:
        """Run blocking `work` (journal reads, the status) in a worker thread.

        The event loop goes on (trading ticks) while a slow query runs; at most `threads`
        run at once, the rest wait their turn without holding the loop.
        """
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        return await anyio.to_thread.run_sync(work, limiter=self._limiter)


def client_address(request: Request) -> str:
    """Where a request came from (the client's address; a trusted proxy's X-Forwarded-For)."""
    client = request.client
    return client.host if client is not None else "unknown"


def not_found(reason: str) -> HTTPException:
    """A 404 with a one-line reason."""
    return HTTPException(status_code=404, detail=reason)
