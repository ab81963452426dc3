"""The engine's ports: what the engine core asks of the world it runs in, as small Protocols.

The engine (`bot.engine.engine`) imports no HTTP client, node client or journal: it is
handed one object per port and never learns what stands behind it.

* `MarketData` — prices, the wallet's balances and quotes, in human units;
* `OrderView` — a strategy's orders with their fills, who owns an order, its intents' states;
* `StateStore` — the values strategies keep between ticks;
* `SpendLedger` — the two questions the risk checker asks (live orders, the day's spend);
* `Broker` — carries out one action (`ActionOutcome`);
* `OrderEvents` — order events delivered to subscribers at each `poll` (`PollReport`).

Live and paper runs plug in `bot.engine.live_ports` (over the Panora client, the node and
the journal; `live_engine` builds such an engine); a backtest plugs in
`bot.backtest.ports` (over the paper core, with its caches and vectorised searches). The
journal answers `SpendLedger` as it is; so does the backtest's `RiskView`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol

from bot.engine.actions import Action
from bot.engine.events import OrderEvent
from bot.engine.strategy import OrderInfo, PriceInfo

__all__ = [
    "ActionOutcome",
    "Broker",
    "MarketData",
    "OrderEvents",
    "OrderView",
    "PollReport",
    "SpendLedger",
    "StateStore",
    "Subscriber",
]


class MarketData(Protocol):
    """Prices, balances and quotes as a strategy's context shows them (human units)."""

    async def prices(self, names: Sequence[str]) -> Mapping[str, PriceInfo]:
        """The prices of the tokens `names` name and of the gas token, now.

        `names`: symbols or addresses, as strategies declare them (a name of no token is
        skipped). Each price is listed under every identity of its token (coin type, FA address).
        """
        ...

    async def balances(self, names: Sequence[str]) -> Mapping[str, Decimal]:
        """The wallet's balance of the tokens `names` name and of the gas token, by key.

        A balance that cannot be read now is left out (never an error).
        """
        ...

    async def quote(self, sell: str, buy: str, amount: Decimal) -> Decimal | None:
        """What selling `amount` of `sell` would buy of `buy` now; None when it cannot."""
        ...


class OrderView(Protocol):
    """What a strategy's context lists of orders and intents."""

    def orders_of(self, strategies: Sequence[str]) -> Sequence[OrderInfo]:
        """The orders of these strategies (each once) with their fills, newest first."""
        ...

    def owner_of(self, kind: str, order_id: str) -> str | None:
        """The strategy that placed the order (None: unknown order, or nobody's)."""
        ...

    def intent_states(self, strategy: str) -> Mapping[str, str]:
        """The strategy's intents: idempotency key → state, oldest first."""
        ...


class StateStore(Protocol):
    """Reads and writes the values strategies keep between ticks."""

    def load(self, strategy: str) -> dict[str, Any]:
        """Every stored value of `strategy`, by key."""
        ...

    def save(self, strategy: str, values: Mapping[str, Any], *, at: datetime) -> None:
        """Store `values` of `strategy` (all or none); other keys stay as they are.

        Raises:
            Exception: a value that is not exact JSON (a float, an object): the journal's
                `JournalError`, the backtest's `ValueError`; the engine fails the tick.
        """
        ...


class SpendLedger(Protocol):
    """The risk checker's two questions: the wallet's live orders, a day's spend."""

    def orders(self, *, status: Iterable[str] | None = None, wallet: str | None = None) -> Sized:
        """The wallet's orders with one of `status` (the checker counts them)."""
        ...

    def spent_today(
        self,
        strategy: str | None,
        wallet: str,
        token: str,
        day: date,
        *,
        states: Iterable[str] = ("confirmed",),
    ) -> Decimal:
        """What intents in `states` spent of `token` (key) on UTC `day`."""
        ...


@dataclass(frozen=True)
class ActionOutcome:
    """What became of one action: `state` is the intent's, or `dry-run`."""

    state: str
    order_id: str | None = None
    tx_hash: str | None = None
    detail: str = ""
    lines: list[str] = field(default_factory=list)
    duplicate: bool = False
    """The key was already recorded: nothing was sent now, `state` is the earlier intent's."""


class Broker(Protocol):
    """Carries out one action of a strategy."""

    async def carry_out(self, strategy: str, action: Action) -> ActionOutcome:
        """Do (or show) the action."""
        ...


@dataclass
class PollReport:
    """What one poll of the orders saw and did."""

    pages: int = 0
    orders_seen: int = 0
    transitions: int = 0
    fills: int = 0
    rejected_records: int = 0
    refused_observations: int = 0
    unknown_statuses: int = 0
    foreign_orders: int = 0
    """Records listed for another wallet, ignored (each id is reported once, ever)."""
    events: list[OrderEvent] = field(default_factory=list)


Subscriber = Callable[[OrderEvent], Awaitable[None] | None]
"""Called with each order event (a plain or an async callable)."""


class OrderEvents(Protocol):
    """The source of order events: the order tracker live, the core's watcher in a backtest."""

    def subscribe(self, subscriber: Subscriber) -> None:
        """Call `subscriber(event)` for every event of every later poll."""
        ...

    async def poll(self) -> PollReport:
        """Look at the orders once; the events are delivered before this returns."""
        ...
