"""The strategy plugin API (version 1): what a strategy sees and what it may return.

A strategy is a class with a `name`, a pydantic model of its parameters (`Params`,
validated when the plugin is loaded), and `async def on_tick(ctx) -> list[Action]`. It
never holds a client, signer or journal: it reads a frozen `Context` and returns actions;
the engine risk-checks them, journals the intents and carries them out.

Hooks follow one contract each (documented on `Strategy`): when it is called, what must
not be done in it, the default, what the return value means. Keep `**kwargs`-free
signatures as given: future versions add to `Context`, never to the hook arguments.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar, Final

from pydantic import BaseModel, ConfigDict

from bot.engine.actions import Action, CancelDca, CancelLimit, CreateDca, CreateLimit, Swap
from bot.engine.events import (
    FillsRecorded,
    OrderCancelled,
    OrderCreated,
    OrderDisappeared,
    OrderEvent,
    OrderExpired,
    OrderFilled,
    OrderPartiallyFilled,
    OrderReappeared,
    OrderRefunded,
    UnknownStatus,
)

__all__ = [
    "API_VERSION",
    "LIVE_ORDER_STATUSES",
    "Action",
    "CancelDca",
    "CancelLimit",
    "Context",
    "CreateDca",
    "CreateLimit",
    "FillInfo",
    "FillsRecorded",
    "OrderCancelled",
    "OrderCreated",
    "OrderDisappeared",
    "OrderEvent",
    "OrderExpired",
    "OrderFilled",
    "OrderInfo",
    "OrderPartiallyFilled",
    "OrderReappeared",
    "OrderRefunded",
    "PriceInfo",
    "QuoteFn",
    "Strategy",
    "StrategyParams",
    "Swap",
    "UnknownStatus",
]

LIVE_ORDER_STATUSES: Final = ("active", "partially_filled", "missing")
"""Statuses of an order that may still trade (`missing`: not listed lately, not ended)."""

API_VERSION = 1

QuoteFn = Callable[[str, str, Decimal], Awaitable[Decimal | None]]
"""(sell token, buy token, amount sold) → amount bought, from a read-only quote."""


class StrategyParams(BaseModel):
    """Base of every strategy's parameters: strict about unknown keys, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class PriceInfo:
    """One token's price at the tick (from the one `/prices` call of the tick)."""

    token: str
    symbol: str
    usd: Decimal | None
    change_24h: Decimal | None


@dataclass(frozen=True)
class FillInfo:
    """One recorded execution record (`txDetails`) of an order, in human units."""

    tx_id: str
    type: str
    from_amount: Decimal | None
    to_amount: Decimal | None
    fee_amount: Decimal | None
    time: datetime | None


@dataclass(frozen=True)
class OrderInfo:
    """One of the strategy's own orders, as the journal knows it."""

    kind: str
    order_id: str
    status: str
    sell: str
    buy: str
    amount_total: Decimal
    amount_spent: Decimal | None
    received: Decimal | None
    rate: Decimal | None
    created_at: datetime
    strategy: str | None = None
    fills: tuple[FillInfo, ...] = ()
    """The order's execution records (slices, partial fills, refunds), oldest first."""

    @property
    def live(self) -> bool:
        """True while the order may still trade."""
        return self.status in LIVE_ORDER_STATUSES


@dataclass(frozen=True)
class Context:
    """A frozen snapshot for one tick: nothing in it can send, sign or write.

    Attributes:
        now: the tick's time (aware UTC; simulated in backtests and stepped runs).
        prices: token key → price info (symbols also work through `price`), for the
            tokens the running strategies' parameters name, and APT.
        balances: token key → the wallet's balance (human units), when known.
        orders: this strategy's orders (live and past), newest first.
        state: this strategy's persistent state (return updates via `Context.save`).
        log: a logger bound to the strategy's name.
    """

    strategy: str
    now: datetime
    prices: Mapping[str, PriceInfo]
    balances: Mapping[str, Decimal]
    orders: Sequence[OrderInfo]
    state: Mapping[str, Any]
    log: Any
    quote: QuoteFn | None = None
    """`await ctx.quote(sell, buy, amount)`: what selling `amount` would buy now (or None)."""
    intents: Mapping[str, str] = field(default_factory=dict)
    """This strategy's idempotency keys → intent state (planned, sent, confirmed, failed,
    unknown, reconciled). A key whose intent failed (nothing applied) runs again when
    returned again; the failed attempt stays listed as `<key>~failed-<id>`."""
    saved: dict[str, Any] = field(default_factory=dict)

    def price(self, name: str) -> PriceInfo | None:
        """A price by token key or by symbol (case-insensitive), or None."""
        if name in self.prices:
            return self.prices[name]
        wanted = name.lower()
        return next((p for p in self.prices.values() if p.symbol.lower() == wanted), None)

    def live_orders(self, kind: str | None = None) -> list[OrderInfo]:
        """The strategy's orders that may still trade (optionally of one kind)."""
        return [o for o in self.orders if o.live and (kind is None or o.kind == kind)]

    def save(self, key: str, value: Any) -> None:
        """Persist `value` under `key` for later ticks (written after the tick)."""
        self.saved[key] = value


class Strategy:
    """Base class of every strategy plugin.

    Subclasses set `name` (the plugin name used in config) and `Params` (a
    `StrategyParams` subclass), and implement `on_tick`.
    """

    name: ClassVar[str] = ""
    Params: ClassVar[type[StrategyParams]] = StrategyParams
    api_version: ClassVar[int] = API_VERSION

    def __init__(self, instance: str, params: StrategyParams) -> None:
        self.instance = instance
        self.params = params

    async def on_tick(self, ctx: Context) -> list[Action]:
        """Decide what to do now.

        When: on every fire of the strategy's schedule.
        Must not: block (no network, no heavy computation), keep references to `ctx`.
        Default: none — every strategy implements it.
        Returns: the actions to take now; each carries an idempotency key, so returning
        the same action on a later tick never doubles it. An empty list means "nothing".
        """
        raise NotImplementedError

    async def on_order_event(self, ctx: Context, event: OrderEvent) -> list[Action]:
        """React to a change of one of this strategy's orders.

        When: after the order tracker records a transition or new fills of an order this
        strategy created. Must not: block. Default: no actions.
        Returns: actions to take at once (same rules as `on_tick`).
        """
        return []

    def order_sources(self) -> list[str]:
        """The strategy instances whose orders `ctx.orders` holds. Default: this one only.

        Override to read other strategies' orders too (e.g. take profit on what a DCA
        bought); `OrderInfo.strategy` tells whose each order is.
        """
        return [self.instance]

    async def on_start(self, ctx: Context) -> None:
        """Called once when the strategy is loaded (daemon start, reload). Default: nothing."""

    async def on_stop(self, ctx: Context) -> None:
        """Called once when the strategy is unloaded (shutdown, reload). Default: nothing."""
