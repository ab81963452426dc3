"""The engine's ports over the paper core: what a backtest plugs into the live engine.

A backtest runs the engine itself (`bot.engine.engine.Engine`); only the ports differ from
a live run (`bot.engine.ports`; the live ones: `bot.engine.live_ports`):

* `CoreMarket` (`MarketData`): the prices of the series at the market's time (`_TickPrices`:
  each worked out when first read), the wallet's free balances in the core's ledger,
  quotes from the core's pools;
* `CoreOrders` (`OrderView`): each strategy's orders with their fills (`_OrderList`: only
  what changed is converted), who created an order, the intents' states — from
  `CoreBroker`, which carries the actions out (`Broker`);
* `CoreState` (`StateStore`): the strategies' saved values, kept as the journal stores them
  (canonical JSON through the journal's codec: a value the live journal refuses fails);
* `CoreEvents` (`OrderEvents`): stands in for the order tracker — at each poll it reports
  what changed since the previous one (status transitions, new execution records) as the
  same `OrderEvent`s the tracker emits, in the tracker's order, to the same subscriber.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final

from bot.aptos.tokens import Token, TokenLookupError
from bot.backtest.broker import CoreBroker
from bot.backtest.context import _OrderList, _TickPrices, human
from bot.domain import FINAL_STATUSES, OrderKind
from bot.engine.events import OrderEvent, event_for_change
from bot.engine.ports import PollReport, Subscriber
from bot.engine.strategy import OrderInfo, PriceInfo
from bot.journal.codec import decode_json, encode_json
from bot.money import to_base_units_down
from bot.paper.core.market import PaperMarket
from bot.paper.core.orders import OrderState
from bot.paper.core.swaps import SwapError

__all__ = ["CoreEvents", "CoreMarket", "CoreOrders", "CoreState"]

_MISSING: Final = object()
_IMMUTABLE: Final = (Decimal, int, str, bool, datetime)


@dataclass(frozen=True)
class _Change:
    """A change of one order, as the journal reports recording it (`event_for_change`)."""

    order_id: str
    from_status: str | None
    to_status: str
    transition_recorded: bool
    fills_added: int


class CoreMarket:
    """Prices, balances and quotes from the paper core (`MarketData`)."""

    def __init__(
        self,
        market: PaperMarket,
        broker: CoreBroker,
        priced: Iterable[Token],
        gas: Token | None,
    ) -> None:
        self.market = market
        self.broker = broker
        self.priced = {token.address: token for token in priced}
        """The tokens with a price series, by key."""
        self.gas = gas
        self._named: dict[tuple[str, ...], dict[str, Token]] = {}
        self._identities: dict[tuple[str, ...], dict[str, tuple[str, str]]] = {}
        self._lazy: _TickPrices | None = None
        self._eager = False
        """Whether prices are made at once, as a plain dict: once a tick's lazy prices were
        read (the strategies read prices), a dict costs less than a mapping whose every
        look-up is a Python call; until then, a price nobody reads is never made."""

    def _tokens(self, names: Sequence[str]) -> dict[str, Token]:
        """The tokens named and the gas token, by key (the run's book never changes)."""
        asked = tuple(names)
        found = self._named.get(asked)
        if found is None:
            found = self._named[asked] = self.broker.tokens.tokens_named(asked)
            if self.gas is not None:
                found.setdefault(self.gas.address, self.gas)
        return found

    async def prices(self, names: Sequence[str]) -> Mapping[str, PriceInfo]:
        """The prices of the tokens named and of the gas token (those with a series)."""
        asked = tuple(names)
        identities = self._identities.get(asked)
        if identities is None:
            identities = self._identities[asked] = {
                identity: (token.address, token.symbol or "?")
                for key in sorted(self._tokens(asked))
                if (token := self.priced.get(key)) is not None
                for identity in token.keys
            }
        prices = _TickPrices(self.market.prices, self.market.now, identities)
        if not self._eager and self._lazy is not None and self._lazy.read:
            self._eager = True  # a strategy reads prices: see `_eager`
        if self._eager:
            return prices.every()
        self._lazy = prices
        return prices

    async def balances(self, names: Sequence[str]) -> dict[str, Decimal]:
        """The wallet's free balance of the tokens named and of the gas token."""
        ledger, wallet = self.market.ledger, self.broker.wallet
        return {
            key: Decimal(ledger.balance(wallet, key)).scaleb(-t.decimals)
            for key, t in self._tokens(names).items()
        }

    async def quote(self, sell: str, buy: str, amount: Decimal) -> Decimal | None:
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


class CoreOrders:
    """The strategies' orders and intents, from the broker and the core (`OrderView`)."""

    def __init__(self, market: PaperMarket, broker: CoreBroker) -> None:
        self.market = market
        self.broker = broker
        self._created: dict[str, list[tuple[str, str]]] = {}
        self._lists: dict[str, _OrderList] = {}
        self._known = 0

    def _list(self, strategy: str) -> _OrderList:
        orders = self.broker.orders
        if self._known != len(orders):
            for order in orders[self._known :]:
                self._created.setdefault(self.broker.owners[order], []).append(order)
            self._known = len(orders)
        found = self._lists.get(strategy)
        if found is None:
            created = self._created.setdefault(strategy, [])
            found = self._lists[strategy] = _OrderList(self.market, created, strategy)
        return found

    def orders_of(self, strategies: Sequence[str]) -> Sequence[OrderInfo]:
        """The strategies' orders (each strategy once), newest first."""
        if len(strategies) == 1:
            return self._list(strategies[0]).current()
        names = list(dict.fromkeys(strategies))
        infos = [info for name in names for info in self._list(name).current()]
        return sorted(infos, key=lambda o: o.created_at, reverse=True)

    def owner_of(self, kind: str, order_id: str) -> str | None:
        """The strategy that created the order in this run."""
        return self.broker.owners.get((kind, order_id))

    def intent_states(self, strategy: str) -> Mapping[str, str]:
        """The strategy's keys → the state of their last attempt (read-only)."""
        return MappingProxyType(self.broker.intents.setdefault(strategy, {}))

    def release(self) -> None:
        """Forget the orders' views (their fills in human units): the run is over."""
        self._lists.clear()


class CoreState:
    """The strategies' saved values, held as the journal stores them (`StateStore`)."""

    def __init__(self) -> None:
        self._stored: dict[str, dict[str, str]] = {}
        """Strategy → key → canonical JSON."""
        self._decoded: dict[str, Any] = {}

    def load(self, strategy: str) -> dict[str, Any]:
        """Every saved value of `strategy`, decoded afresh (immutable ones reused)."""
        stored = self._stored.get(strategy)
        if not stored:
            return {}
        return {key: self._value(text) for key, text in sorted(stored.items())}

    def save(self, strategy: str, values: Mapping[str, Any], *, at: datetime) -> None:
        """Keep `values` (all or none), encoded as the journal would.

        Raises:
            ValueError: a value the journal refuses (a float, a naive time...).
        """
        if not values:
            return
        encoded = {key: encode_json(value) for key, value in values.items()}
        self._stored.setdefault(strategy, {}).update(encoded)

    def _value(self, text: str) -> Any:
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


class CoreEvents:
    """The order tracker of a backtest: what changed in the core since the last poll.

    An order a strategy created starts as the executor records it (active, no execution
    records); each poll reports, per order, `FillsRecorded` for new records and a status
    transition (if any) in `event_for_change`'s order (created first, any other status
    after the fills) — DCA orders first, then limit orders, live ones
    before finished ones, newest first, as the tracker walks its pages — and delivers
    them to the subscribers before it returns. Only orders not yet seen final are looked at.
    """

    def __init__(self, market: PaperMarket, broker: CoreBroker) -> None:
        self.market = market
        self.broker = broker
        self._subscribers: list[Subscriber] = []
        self._seen: dict[str, tuple[str, int]] = {}
        self._open: list[tuple[str, OrderState]] = []
        self._known = 0

    def subscribe(self, subscriber: Subscriber) -> None:
        """Call `subscriber(event)` for every event of every later poll."""
        self._subscribers.append(subscriber)

    async def poll(self) -> PollReport:
        """The events since the previous poll, delivered; the report lists them."""
        report = PollReport(events=self._changes())
        for event in report.events:
            for subscriber in self._subscribers:
                result = subscriber(event)
                if inspect.isawaitable(result):
                    await result
        return report

    def _changes(self) -> list[OrderEvent]:
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
        for wanted in OrderKind:
            mine = [order for kind, order in changed if kind == wanted]
            live = [o for o in mine if o.status not in FINAL_STATUSES]
            done = [o for o in mine if o.status in FINAL_STATUSES]
            for order in [*reversed(live), *reversed(done)]:
                events += self._events(wanted, order)
        self._open = [(k, o) for k, o in self._open if o.status not in FINAL_STATUSES]
        return events

    def _events(self, kind: str, order: OrderState) -> list[OrderEvent]:
        before_status, before_count = self._seen.get(order.order_id, ("active", 0))
        self._seen[order.order_id] = (order.status, len(order.details))
        change = _Change(
            order_id=order.order_id,
            from_status=before_status,
            to_status=order.status,
            transition_recorded=order.status != before_status,
            fills_added=len(order.details) - before_count,
        )
        return event_for_change(kind, change)
