"""Typed order events the tracker emits to subscribers (strategies, alerts).

One event per recorded status transition (and per batch of new fills), built from what
the journal reports it changed, so an event is emitted exactly when a transition is
recorded — never twice for one observation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

__all__ = [
    "FillsRecorded",
    "ForeignOrder",
    "OrderCancelled",
    "OrderCreated",
    "OrderDisappeared",
    "OrderEvent",
    "OrderExpired",
    "OrderFilled",
    "OrderPartiallyFilled",
    "OrderReappeared",
    "OrderRefunded",
    "OrderStatusChanged",
    "UnknownStatus",
    "event_for_change",
]


@dataclass(frozen=True)
class OrderEvent:
    """Something happened to an order (`kind` dca|limit, the provider's id)."""

    kind: str
    order_id: str


@dataclass(frozen=True)
class OrderStatusChanged(OrderEvent):
    """The status moved from `from_status` (None: first seen) to `to_status`."""

    from_status: str | None
    to_status: str


class OrderCreated(OrderStatusChanged):
    """First seen, live."""


class OrderFilled(OrderStatusChanged):
    """Completely filled."""


class OrderPartiallyFilled(OrderStatusChanged):
    """Partly filled; more may follow."""


class OrderCancelled(OrderStatusChanged):
    """Cancelled; the balance was returned."""


class OrderExpired(OrderStatusChanged):
    """Expired; the balance was returned."""


class OrderRefunded(OrderStatusChanged):
    """Ended with a refund (e.g. DCA slices skipped by its rate bounds)."""


class OrderReappeared(OrderStatusChanged):
    """A `missing` order the provider lists again."""


class UnknownStatus(OrderStatusChanged):
    """A status the spec does not list: recorded, and worth a look."""


@dataclass(frozen=True)
class FillsRecorded(OrderEvent):
    """New fills (txDetails records) were recorded for the order."""

    count: int


@dataclass(frozen=True)
class ForeignOrder(OrderEvent):
    """A listed order record that says it is another wallet's (`listed_for`): ignored.

    Never recorded nor linked to an intent; reported once per order id.
    """

    listed_for: str


@dataclass(frozen=True)
class OrderDisappeared(OrderEvent):
    """A live order the provider no longer lists, even when asked by id.

    `status` is what the journal now says: `missing` (still live: it may come back) or
    `lost` (closed: the embedded paper world does not know it; `reason` says why).
    """

    last_status: str
    status: str = "missing"
    reason: str | None = None


class RecordedChange(Protocol):
    """What the journal reports it changed of one order (`bot.journal.OrderChange` is one).

    A Protocol: strategies import events, and the engine core imports no journal.
    """

    @property
    def order_id(self) -> str:
        """The provider's id."""
        ...

    @property
    def from_status(self) -> str | None:
        """The status before (None: first seen)."""
        ...

    @property
    def to_status(self) -> str:
        """The status now."""
        ...

    @property
    def transition_recorded(self) -> bool:
        """A status transition was recorded."""
        ...

    @property
    def fills_added(self) -> int:
        """How many new fills were recorded."""
        ...


_BY_STATUS: Final[dict[str, type[OrderStatusChanged]]] = {
    "filled": OrderFilled,
    "partially_filled": OrderPartiallyFilled,
    "cancelled": OrderCancelled,
    "expired": OrderExpired,
    "refunded": OrderRefunded,
    "active": OrderCreated,
}
_KNOWN: Final = frozenset({*_BY_STATUS, "active"})


def event_for_change(kind: str, change: RecordedChange) -> list[OrderEvent]:
    """The events of one journal change (none when nothing was recorded), in their order.

    An order is created before its first fills; any other status (filled, partially
    filled, cancelled, …) comes after the fills that led to it: the last slice is told
    before the order is told filled, as it happened.
    """
    if change.transition_recorded and change.to_status == "missing":
        return []  # reported by the tracker as OrderDisappeared
    fills: list[OrderEvent] = []
    if change.fills_added:
        fills.append(FillsRecorded(kind, change.order_id, change.fills_added))
    if not change.transition_recorded:
        return fills
    if change.from_status == "missing":
        cls: type[OrderStatusChanged] = OrderReappeared
    elif change.to_status not in _KNOWN:
        cls = UnknownStatus
    elif change.to_status == "active" and change.from_status is not None:
        cls = OrderStatusChanged  # e.g. back to active: report, not "created"
    else:
        cls = _BY_STATUS[change.to_status]
    status = cls(kind, change.order_id, change.from_status, change.to_status)
    if cls is OrderCreated:
        return [status, *fills]
    return [*fills, status]
