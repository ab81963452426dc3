"""The strategy plugin API (version 1): what a strategy sees and what it may return.

A strategy is a class `Strategy[P]` with a `name`, its parameters' pydantic model `P` (a
`StrategyParams`, validated when the plugin is loaded, then `self.params`), the tokens it
needs (`tokens()`), and `async def on_tick(ctx) -> list[Action]`. It never holds a client,
signer or journal: it reads a frozen `Context` and returns actions; the engine risk-checks
them, journals the intents and carries them out.

A strategy module imports this module (and what it re-exports: the actions, the order
events, the parameter types `Period` and `Slippage`), `bot.money`, pydantic and the
standard library, nothing else of the bot.

Hooks follow one contract each (documented on `Strategy`): when it is called, what must
not be done in it, the default, what the return value means. Keep `**kwargs`-free
signatures as given: future versions add to `Context`, never to the hook arguments.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Final, Generic, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict
from typing_extensions import TypeVar

from bot.clock import EPOCH
from bot.domain import LIVE_ORDER_STATUSES
from bot.duration import order_period, parse_duration
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
    "NOTED_CANCELS",
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
    "Period",
    "PriceInfo",
    "QuoteFn",
    "Slippage",
    "Strategy",
    "StrategyParams",
    "Swap",
    "UnknownStatus",
    "cancelled_by_user",
    "needed_tokens",
    "new_user_cancels",
    "note_user_cancels",
    "parse_period",
    "period_length",
    "window",
]


API_VERSION = 1

QuoteFn = Callable[[str, str, Decimal], Awaitable[Decimal | None]]
"""(sell token, buy token, amount sold) → amount bought, from a read-only quote."""


class StrategyParams(BaseModel):
    """Base of every strategy's parameters: strict about unknown keys, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --- parameter types ----------------------------------------------------------------------


_BARE_M: Final = re.compile(r"\d+\s*[mM]")


def parse_period(text: str) -> tuple[int, str]:
    """An order period in the API's form: `"6 hour"`, `"6h"` → `(6, "hour")`.

    The text is a duration in the bot's one grammar (`bot.duration`); the unit returned is
    one of minute, hour, day, week, month.

    Raises:
        ValueError: one line naming the text: not a duration, not whole minutes, or a
            bare `m` (`"6m"`: a period of an order spends money, so minute or month is
            written out).
    """
    duration = parse_duration(text)
    if _BARE_M.fullmatch(text.strip()):
        raise ValueError(f"{text!r} is ambiguous for an order period: write 'min' or 'month'")
    return order_period(duration)


def period_length(text: str) -> timedelta:
    """How long a period lasts (`"12 hour"` → 12 h; a month counts as 30 days)."""
    return parse_duration(text).length


def window(moment: datetime, length: timedelta) -> int:
    """Which `length`-long window `moment` falls in, counted from the Unix epoch (exact).

    A key built from it (`<instance>:dip:<window>`) is the same on every tick of a window.
    """
    return (moment - EPOCH) // length


def _normal_period(text: str) -> str:
    number, unit = parse_period(text)
    return f"{number} {unit}"


def _check_slippage(value: Decimal | str) -> Decimal | str:
    if isinstance(value, Decimal) and not Decimal(0) <= value <= Decimal(100):
        raise ValueError("slippage must be between 0 and 100 (or 'auto')")
    return value


Period = Annotated[str, AfterValidator(_normal_period)]
"""A period parameter (`"6 hour"`, `"6h"`, `"1 day"`), validated and kept as `"<n> <unit>"`
with unit minute, hour, day, week or month: ready for `parse_period` and `period_length`."""
Slippage = Annotated[Decimal | Literal["auto"], AfterValidator(_check_slippage)]
"""A slippage parameter: a percent from 0 to 100, or `"auto"`."""

P = TypeVar("P", bound=StrategyParams, default=StrategyParams, covariant=True)
"""The parameters' model of a strategy (`Strategy[MyParams]`)."""


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


class Strategy(Generic[P]):
    """Base class of every strategy plugin: `class Grid(Strategy[GridParams])`.

    Subclasses set `name` (the plugin name used in config) and implement `on_tick`; the
    model in brackets (a `StrategyParams` subclass) becomes `Params`, which the loader
    validates the config's `params` with, and `self.params` is typed by it. (Setting
    `Params` instead, on a bare `Strategy` subclass, still works.)
    """

    name: ClassVar[str] = ""
    Params: ClassVar[type[StrategyParams]] = StrategyParams
    api_version: ClassVar[int] = API_VERSION

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("Params")
        for base in cls.__dict__.get("__orig_bases__", ()):
            if get_origin(base) is not Strategy:
                continue
            (model,) = get_args(base)
            if not (isinstance(model, type) and issubclass(model, StrategyParams)):
                raise TypeError(f"{cls.__name__}: Strategy[...] takes a StrategyParams model")
            if declared is not None and not issubclass(declared, model):
                raise TypeError(f"{cls.__name__}: Params is not a {model.__name__}")
            if declared is None:
                cls.Params = model

    def __init__(self, instance: str, params: P) -> None:
        """An instance named `instance` (the config's `name`) with validated parameters."""
        if not isinstance(params, type(self).Params):
            raise TypeError(
                f"{self.name or type(self).__name__} needs {type(self).Params.__name__}, "
                f"got {type(params).__name__}"
            )
        self.instance = instance
        self.params: P = params

    def tokens(self) -> Iterable[str]:
        """The tokens (symbols or addresses) whose prices and balances this strategy needs.

        When: at load (`bot config check` lists a failure), and as the engine gathers the
        tick's prices and the strategy's balances. Must not: depend on anything but the
        parameters; block. Default: the strings of the parameters named `token`,
        `tokens` or ending in `_token`/`_tokens` (a string or a list of strings).
        Returns: the names; `ctx.prices` and `ctx.balances` hold these (and APT).
        """
        names: list[str] = []
        for key, value in self.params:
            if key in ("token", "tokens") or key.endswith(("_token", "_tokens")):
                items = [value] if isinstance(value, str) else value
                if isinstance(items, list | tuple):
                    names.extend(item for item in items if isinstance(item, str))
        return names

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


def needed_tokens(strategy: Strategy) -> list[str]:
    """`strategy.tokens()`, each name once, first seen first.

    Raises:
        TypeError: `tokens()` did not give strings (the message names the strategy).
    """
    names = list(strategy.tokens())
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"{strategy.instance}: tokens() must give token names (strings)")
    return list(dict.fromkeys(names))


# --- orders the user cancelled ------------------------------------------------------------

NOTED_CANCELS: Final = "user_cancelled"
"""State key: the ids of the orders whose cancel by the user was already logged."""
_NOTED_KEPT: Final = 100


def cancelled_by_user(ctx: Context, instance: str, order: OrderInfo) -> bool:
    """Whether `order` was cancelled by someone else than the strategy `instance` itself.

    A built-in cancels its own orders under the key `<instance>:cancel:<order id>`, so its
    cancels are in `ctx.intents`; one whose intent failed sent nothing. Any other cancel is
    the user's: `bot cancel` (an intent of the command line's) or one made outside the bot
    (the provider lists the order `cancelled`).
    """
    if order.status != "cancelled":
        return False
    own = ctx.intents.get(f"{instance}:cancel:{order.order_id}")
    return own is None or own == "failed"


def _noted(ctx: Context) -> list[str]:
    stored = ctx.state.get(NOTED_CANCELS)
    return [str(i) for i in stored] if isinstance(stored, list) else []


def new_user_cancels(ctx: Context, instance: str, orders: Sequence[OrderInfo]) -> list[OrderInfo]:
    """The orders among `orders` the user cancelled and `note_user_cancels` has not noted."""
    noted = _noted(ctx)
    return [o for o in orders if cancelled_by_user(ctx, instance, o) and o.order_id not in noted]


def note_user_cancels(ctx: Context, orders: Sequence[OrderInfo], event: str, **fields: Any) -> None:
    """Log each of `orders` (from `new_user_cancels`) once, as `event`, and remember it.

    The ids are kept in state (`NOTED_CANCELS`, the latest 100): a cancel is reported,
    and acted on, by the first tick that sees it, not by every tick after.
    """
    if not orders:
        return
    for order in orders:
        ctx.log.info(event, order=order.order_id, **fields)
    kept = [*_noted(ctx), *(o.order_id for o in orders)]
    ctx.save(NOTED_CANCELS, kept[-_NOTED_KEPT:])
