"""The strategy's view in a backtest: the live engine's `Context`, built from the paper core.

`ContextBuilder` fills the same fields `bot.engine.engine.Engine.context` does — prices,
balances, the strategy's orders with their fills, its state and intents, a quote
function, a logger — straight from the market (no HTTP, no journal):

* prices: every token of the price series (the live context lists every token of the
  provider), keyed by coin type and FA address, with the 24 h change, as the wire
  shows them (no trailing zeros);
* balances: the wallet's free balance of APT and of every token the parameters name;
* orders: the strategy's orders, newest first (ties in creation order, as the journal
  lists them), amounts in human units, each with its execution records;
* state: what the strategy saved, stored and read back through the journal's JSON codec
  (so a value the live journal would refuse fails here too).

`OrderWatcher` stands in for the order tracker: asked at each strategy tick, it reports
what changed since the previous tick (status transitions, new execution records) as the
same `OrderEvent`s the tracker emits.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView
from datetime import datetime
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Decimal
from decimal import Context as DecimalContext
from types import MappingProxyType
from typing import Any, Final

from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.backtest.broker import CoreBroker
from bot.config import param_strings
from bot.engine.events import OrderEvent, event_for_change
from bot.engine.strategy import Context, FillInfo, OrderInfo, PriceInfo, Strategy
from bot.journal import OrderChange
from bot.journal.codec import decode_json, encode_json
from bot.money import format_decimal, to_base_units_down
from bot.paper.core.dca import DcaOrder
from bot.paper.core.limit import LimitOrder
from bot.paper.core.market import PaperMarket
from bot.paper.core.orders import OrderState
from bot.paper.core.prices import PriceBook
from bot.paper.core.swaps import SwapError

__all__ = ["ContextBuilder", "HumanAmounts", "OrderWatcher", "human"]

_WIDE: Final = DecimalContext(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
_FINAL: Final = frozenset({"filled", "cancelled", "expired", "refunded"})

CoreOrder = DcaOrder | LimitOrder
_MISSING: Final = object()
_IMMUTABLE: Final = (Decimal, int, str, bool, datetime)


def human(units: int, token: Token) -> Decimal:
    """Base units → the exact human amount (as `bot.money.from_base_units`, faster)."""
    return Decimal(units).scaleb(-token.decimals, context=_WIDE)


class HumanAmounts:
    """`human` for one token, one shared `Decimal` per amount seen recently.

    An order's records repeat a few amounts thousands of times (a DCA's slice and keeper
    fee): the values are immutable, so one object serves them all.
    """

    def __init__(self, token: Token, size: int = 256) -> None:
        self.places = -token.decimals
        self.size = size
        self.known: dict[int, Decimal] = {}

    def __call__(self, units: int) -> Decimal:
        """The human amount of `units` base units."""
        value = self.known.get(units)
        if value is None:
            if len(self.known) >= self.size:
                self.known.clear()
            value = self.known[units] = Decimal(units).scaleb(self.places, context=_WIDE)
        return value


def _wire(value: Decimal | None) -> Decimal | None:
    """A value as the client reads it off the wire: plain text, no trailing zeros.

    That is `Decimal(format_decimal(value))`, made without the text: an integral value
    becomes an integer (exponent 0, no negative zero), any other loses its trailing zeros.
    """
    if value is None:
        return None
    if not value.is_finite():
        return Decimal(format_decimal(value))
    if value == value.to_integral_value():
        return Decimal(int(value))
    return value.normalize(_WIDE)


def named_tokens(strategy: Strategy, book: TokenBook, *, with_apt: bool = True) -> dict[str, Token]:
    """The tokens a strategy's parameters name (plus APT, as the engine's balances), by key."""
    names = param_strings(strategy.params.model_dump())
    return book.tokens_named(sorted({"APT", *names} if with_apt else set(names)))


class _OrderCache:
    """One order's `OrderInfo`, rebuilt only when the order changed."""

    def __init__(self, kind: str, order: CoreOrder, strategy: str) -> None:
        self.kind = kind
        self.order = order
        self.strategy = strategy
        self.seen: tuple[str, int] = ("", -1)
        self.fills: tuple[FillInfo, ...] = ()
        self.sold = HumanAmounts(order.sell)
        self.info = self.refresh()

    @property
    def final(self) -> bool:
        """True once the order can no longer change."""
        return self.order.status in _FINAL

    def changed(self) -> bool:
        """Whether the order moved since `info` was built."""
        return self.seen != (self.order.status, len(self.order.details))

    def refresh(self) -> OrderInfo:
        """Rebuild `info` from the order (new execution records converted once)."""
        order = self.order
        sell, buy, sold = order.sell, order.buy, self.sold
        self.fills += tuple(
            FillInfo(
                d.tx_id,
                d.type,
                sold(d.from_amount),
                human(d.to_amount, buy),
                sold(d.fee_amount),
                d.time,
            )
            for d in order.details[len(self.fills) :]
        )
        self.info = OrderInfo(
            self.kind,
            order.order_id,
            order.status,
            sell.address,
            buy.address,
            human(order.funded, sell),
            human(order.spent, sell),
            human(order.received, buy),
            order.rate if isinstance(order, LimitOrder) else None,
            order.created_at,
            self.strategy,
            self.fills,
        )
        self.seen = (order.status, len(order.details))
        return self.info


class _OrderList:
    """The strategy's orders as the context lists them, kept up to date incrementally.

    Only orders that can still change are looked at; the newest-first tuple is rebuilt
    only when one did (so a tick costs what changed, not the whole history).
    """

    def __init__(self, market: PaperMarket, broker: CoreBroker, strategy: str) -> None:
        self.market = market
        self.broker = broker
        self.strategy = strategy
        self._all: list[_OrderCache] = []  # creation order
        self._open: list[_OrderCache] = []
        self._listed: tuple[OrderInfo, ...] = ()

    def current(self) -> tuple[OrderInfo, ...]:
        """Newest first; orders created at one moment stay in creation order."""
        dirty = False
        for kind, order_id in self.broker.orders[len(self._all) :]:
            engine = self.market.dca if kind == "dca" else self.market.limit
            cache = _OrderCache(kind, engine.get(order_id), self.strategy)
            self._all.append(cache)
            self._open.append(cache)
            dirty = True
        for cache in self._open:
            if cache.changed():
                cache.refresh()
                dirty = True
        if dirty:
            self._open = [c for c in self._open if not c.final]
            ordered = sorted(self._all, key=lambda c: c.order.created_at, reverse=True)
            self._listed = tuple(c.info for c in ordered)
        return self._listed


class _TickPrices(Mapping[str, PriceInfo]):
    """The tick's prices, as the live context lists them: every priced token, by each id.

    A token's `PriceInfo` is worked out when first read (a DCA reads none): the same
    values, of the same moment, as making them all up front.
    """

    def __init__(
        self, book: PriceBook, now: datetime, tokens: Mapping[str, tuple[str, str]]
    ) -> None:
        self._book = book
        self._now = now
        self._tokens = tokens
        self._infos: dict[str, PriceInfo] = {}
        self._all: dict[str, PriceInfo] | None = None

    def __getitem__(self, identity: str) -> PriceInfo:
        key, symbol = self._tokens[identity]
        info = self._infos.get(key)
        if info is None:
            book, now = self._book, self._now
            change = _wire(book.change_24h(key, now))  # first: see `PriceBook.change_24h`
            info = PriceInfo(key, symbol, _wire(book.usd_visible(key, now)), change)
            self._infos[key] = info
        return info

    def __contains__(self, identity: object) -> bool:
        return identity in self._tokens

    def values(self) -> ValuesView[PriceInfo]:
        """Every price (a look-up by symbol walks them all): made once, as a dict's."""
        return self._every().values()

    def items(self) -> ItemsView[str, PriceInfo]:
        """Every (identity, price), as a dict's."""
        return self._every().items()

    def _every(self) -> dict[str, PriceInfo]:
        if self._all is None:
            self._all = {identity: self[identity] for identity in self._tokens}
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)


class ContextBuilder:
    """Builds the `Context` of one strategy at the market's current time."""

    def __init__(
        self,
        *,
        market: PaperMarket,
        broker: CoreBroker,
        strategy: Strategy,
        priced: Iterable[Token],
        named: Iterable[Token],
        log: Any,
    ) -> None:
        self.market = market
        self.broker = broker
        self.strategy = strategy
        self.priced = {
            identity: (token.address, token.symbol or "?")
            for token in priced
            for identity in token.keys
        }
        """Every identity of every priced token → (its key, its symbol)."""
        self.named = list(named)
        self.log = log
        self.state: dict[str, str] = {}
        """The strategy's state as the journal stores it: key → canonical JSON."""
        self._orders = _OrderList(market, broker, strategy.instance)
        self._prices: tuple[datetime, Mapping[str, PriceInfo]] | None = None
        self._intents: dict[str, str] = {}
        self._decoded: dict[str, Any] = {}

    def build(self) -> Context:
        """A frozen snapshot for the strategy, now."""
        now = self.market.now
        name = self.strategy.instance
        return Context(
            strategy=name,
            now=now,
            prices=self._prices_now(now),
            balances=self._balances(),
            orders=self._orders.current() if name in self.strategy.order_sources() else (),
            state={key: self._state_value(text) for key, text in self.state.items()},
            log=self.log,
            quote=self._quote,
            intents=self._intents_now(),
        )

    def release(self) -> None:
        """Forget the orders' views (their fills in human units): the run is over."""
        self._orders = _OrderList(self.market, self.broker, self.strategy.instance)

    def _state_value(self, text: str) -> Any:
        """A stored value, decoded; immutable ones are decoded once and reused."""
        cached = self._decoded.get(text, _MISSING)
        if cached is not _MISSING:
            return cached
        value = decode_json(text)
        if isinstance(value, _IMMUTABLE) or value is None:
            if len(self._decoded) > 1024:
                self._decoded.clear()
            self._decoded[text] = value
        return value

    def _intents_now(self) -> Mapping[str, str]:
        outcomes = self.broker.outcomes
        if len(outcomes) != len(self._intents):
            for key in list(outcomes)[len(self._intents) :]:
                self._intents[key] = outcomes[key].state
        return MappingProxyType(self._intents)

    def save(self, ctx: Context) -> None:
        """Keep what the strategy saved, as the journal would (canonical JSON).

        Raises:
            ValueError: a value the journal refuses (a float, a naive time...).
        """
        for key, value in ctx.saved.items():
            self.state[key] = encode_json(value)

    def _prices_now(self, now: datetime) -> Mapping[str, PriceInfo]:
        if self._prices is not None and self._prices[0] == now:
            return self._prices[1]
        prices = _TickPrices(self.market.prices, now, self.priced)
        self._prices = (now, prices)
        return prices

    def _balances(self) -> dict[str, Decimal]:
        ledger, wallet = self.market.ledger, self.broker.wallet
        return {
            t.address: Decimal(ledger.balance(wallet, t.address)).scaleb(-t.decimals)
            for t in self.named
        }

    async def _quote(self, sell: str, buy: str, amount: Decimal) -> Decimal | None:
        """What selling `amount` of `sell` would buy of `buy` now (None when it cannot)."""
        try:
            book = self.broker.tokens
            sell_token, buy_token = book.find(sell), book.find(buy)
            if sell_token.address not in self.broker.allowed:
                return None
            if buy_token.address not in self.broker.allowed:
                return None
            units = to_base_units_down(amount, sell_token.decimals)
            terms = self.market.quote(sell_token, buy_token, amount_in=units)
        except (TokenLookupError, SwapError, ValueError, ArithmeticError):
            return None
        return human(terms.amount_out, buy_token)


class OrderWatcher:
    """The order tracker's events, from the core: what changed since the last `poll`.

    An order the strategy created starts as the executor records it (active, no
    execution records); each poll reports, per order, a status transition (if any) then
    `FillsRecorded` for new records — DCA orders first, then limit orders, live ones
    before finished ones, newest first, as the tracker walks its pages. Only orders not
    yet seen final are looked at.
    """

    def __init__(self, market: PaperMarket, broker: CoreBroker) -> None:
        self.market = market
        self.broker = broker
        self._seen: dict[str, tuple[str, int]] = {}
        self._open: list[tuple[str, OrderState]] = []
        self._known = 0

    def poll(self) -> list[OrderEvent]:
        """The events since the previous poll."""
        for kind, order_id in self.broker.orders[self._known :]:
            engine = self.market.dca if kind == "dca" else self.market.limit
            self._open.append((kind, engine.get(order_id)))
        self._known = len(self.broker.orders)
        changed = [
            (kind, order)
            for kind, order in self._open
            if self._seen.get(order.order_id, ("active", 0)) != (order.status, len(order.details))
        ]
        if not changed:
            return []
        events: list[OrderEvent] = []
        for wanted in ("dca", "limit"):
            mine = [order for kind, order in changed if kind == wanted]
            live = [o for o in mine if o.status not in _FINAL]
            done = [o for o in mine if o.status in _FINAL]
            for order in [*reversed(live), *reversed(done)]:
                events += self._events(wanted, order)
        self._open = [(k, o) for k, o in self._open if o.status not in _FINAL]
        return events

    def _events(self, kind: str, order: OrderState) -> list[OrderEvent]:
        before_status, before_count = self._seen.get(order.order_id, ("active", 0))
        self._seen[order.order_id] = (order.status, len(order.details))
        change = OrderChange(
            kind=kind,
            order_id=order.order_id,
            row_id=0,
            created=False,
            from_status=before_status,
            to_status=order.status,
            transition_recorded=order.status != before_status,
            fills_added=len(order.details) - before_count,
        )
        return event_for_change(kind, change)
