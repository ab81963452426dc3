"""A time-ordered queue of scheduled events with cheap cancellation.

Advancing time pops only the events that are due, so the cost grows with the events due,
not with the number of live orders. Cancelled entries are dropped lazily when they reach
the top.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["EventQueue", "ScheduledEvent"]


@dataclass(order=True)
class ScheduledEvent:
    """One scheduled event: `kind` (e.g. `dca_slice`, `limit_expiry`) about `key`."""

    at: datetime
    seq: int
    kind: str = field(compare=False)
    key: str = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class EventQueue:
    """A min-heap of `ScheduledEvent` by time, then by insertion order."""

    def __init__(self) -> None:
        self._heap: list[ScheduledEvent] = []
        self._counter = itertools.count()
        self._live = 0

    def __len__(self) -> int:
        return self._live

    def push(self, at: datetime, kind: str, key: str) -> ScheduledEvent:
        """Schedule an event; keep the returned handle to cancel it."""
        event = ScheduledEvent(at, next(self._counter), kind, key)
        heapq.heappush(self._heap, event)
        self._live += 1
        return event

    def cancel(self, event: ScheduledEvent) -> None:
        """Cancel a scheduled event (no effect if already popped or cancelled)."""
        if not event.cancelled:
            event.cancelled = True
            self._live -= 1

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)

    def peek_time(self) -> datetime | None:
        """When the next live event is due, or None."""
        self._drop_cancelled()
        return self._heap[0].at if self._heap else None

    def pop_due(self, until: datetime) -> ScheduledEvent | None:
        """Remove and return the earliest live event due at or before `until`."""
        self._drop_cancelled()
        if self._heap and self._heap[0].at <= until:
            event = heapq.heappop(self._heap)
            event.cancelled = True  # popped: a later cancel() is a no-op
            self._live -= 1
            return event
        return None
