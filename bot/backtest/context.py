"""The paper core seen as the live context shows it: cached views for `bot.backtest.ports`.

The backtest's ports (`bot.backtest.ports`) give the engine what its live ports give it,
straight from the market (no HTTP, no journal); these are the views they are made of,
kept up to date incrementally so a tick costs what changed, not the whole history:

* `_TickPrices`: a tick's prices, by coin type and FA address, with the 24 h change, as
  the wire shows them (no trailing zeros), each worked out when first read;
* `_OrderList`: a strategy's orders, newest first (ties in creation order, as the
  journal lists them), amounts in human units, each with its execution records;
* `human`, `HumanAmounts`: base units → exact human amounts.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from datetime import datetime
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Decimal
from decimal import Context as DecimalContext
from operator import attrgetter
from typing import Final

from bot.aptos.tokens import Token, TokenBook
from bot.domain import FINAL_STATUSES
from bot.engine.strategy import FillInfo, OrderInfo, PriceInfo, Strategy, needed_tokens
from bot.money import format_decimal
from bot.paper.core.dca import DcaOrder
from bot.paper.core.limit import LimitOrder
from bot.paper.core.market import PaperMarket
from bot.paper.core.prices import PriceBook
from bot.paper.core.registry import APT_COIN_TYPE

__all__ = ["HumanAmounts", "RunBook", "gas_token", "human", "named_tokens"]

_WIDE: Final = DecimalContext(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)

CoreOrder = DcaOrder | LimitOrder

# `_OrderList` sorts and lists every order of a strategy at each change (a ladder has
# hundreds): C-level getters, not a Python function per order.
_CREATED: Final = attrgetter("order.created_at")
_INFO: Final = attrgetter("info")


def human(units: int, token: Token) -> Decimal:
    """Base units → the exact human amount (as `bot.money.from_base_units`, faster)."""
    return Decimal(units).scaleb(-token.decimals, _WIDE)  # positional: cheaper in _decimal


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
            value = self.known[units] = Decimal(units).scaleb(self.places, _WIDE)
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


class RunBook(TokenBook):
    """A run's token book: the registry's, with each look-up made once.

    A run never changes its book, and the engine, the risk checker and the broker look
    the same few names up for every action: the answers (not the failures, which raise
    anew) are remembered. The indexes are the registry book's own, shared.
    """

    def __init__(self, book: TokenBook) -> None:
        super().__init__()
        self._by_key = book._by_key
        self._by_symbol = book._by_symbol
        self._by_provider_symbol = book._by_provider_symbol
        self._found: dict[str, Token] = {}
        self._got: dict[str, Token | None] = {}

    def find(self, name: str) -> Token:
        """`TokenBook.find`, remembered."""
        token = self._found.get(name)
        if token is None:
            token = self._found[name] = super().find(name)
        return token

    def get(self, identity: str) -> Token | None:
        """`TokenBook.get`, remembered."""
        try:
            return self._got[identity]
        except KeyError:
            token = self._got[identity] = super().get(identity)
            return token


def gas_token(book: TokenBook) -> Token | None:
    """The token that pays for gas (APT), as the book knows it."""
    return book.get(APT_COIN_TYPE)


def named_tokens(strategy: Strategy, book: TokenBook, *, with_gas: bool = True) -> dict[str, Token]:
    """The tokens a strategy declares (`tokens()`; and the gas token, as balances), by key."""
    found = book.tokens_named(sorted(needed_tokens(strategy)))
    gas = gas_token(book) if with_gas else None
    if gas is not None:
        found.setdefault(gas.address, gas)
    return found


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
        return self.order.status in FINAL_STATUSES

    def changed(self) -> bool:
        """Whether the order moved since `info` was built."""
        return self.seen != (self.order.status, len(self.order.details))

    def refresh(self) -> OrderInfo:
        """Rebuild `info` from the order (new execution records converted once)."""
        order = self.order
        sell, buy, sold = order.sell, order.buy, self.sold
        shared, bought = sold.known.get, -buy.decimals  # `sold` and `human`, inlined
        new = [
            FillInfo(
                d.tx_id,
                d.type,
                shared(d.from_amount) or sold(d.from_amount),
                Decimal(d.to_amount).scaleb(bought, _WIDE),
                shared(d.fee_amount) or sold(d.fee_amount),
                d.time,
            )
            for d in order.details[len(self.fills) :]
        ]  # a list, then one tuple: cheaper than a tuple grown from a generator
        self.fills += tuple(new)
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
    """One strategy's orders as the context lists them, kept up to date incrementally.

    `created` is the strategy's (kind, order id) list, oldest first, which grows as it
    creates orders. Only orders that can still change are looked at; the newest-first
    tuple is rebuilt only when one did. A run creates orders at the market's time, which
    only moves forward: a new order's place is then at the front (after those of its own
    moment), found without sorting hundreds of orders at every change (a ladder's).
    """

    def __init__(self, market: PaperMarket, created: list[tuple[str, str]], strategy: str) -> None:
        self.market = market
        self.created = created
        self.strategy = strategy
        self._all: list[_OrderCache] = []  # creation order
        self._open: list[_OrderCache] = []
        self._ordered: list[_OrderCache] = []  # newest first, while `_in_order`
        self._in_order = True
        """Whether the orders' times never went back (creation after creation) nor changed;
        once not, `_ordered` is sorted in full at each change, as the journal lists them."""
        self._listed: tuple[OrderInfo, ...] = ()
        self._tail: tuple[OrderInfo, ...] = ()
        """The infos of the oldest orders of `_ordered` (while `_in_order`), all final: they
        never change again and no order is placed among them, so they are kept, not made
        again at every change (`_listing`)."""
        self._tail_count = 0

    def current(self) -> tuple[OrderInfo, ...]:
        """Newest first; orders created at one moment stay in creation order."""
        dirty = False
        for kind, order_id in self.created[len(self._all) :]:
            engine = self.market.dca if kind == "dca" else self.market.limit
            cache = _OrderCache(kind, engine.get(order_id), self.strategy)
            self._all.append(cache)
            self._open.append(cache)
            self._place(cache)
            dirty = True
        for cache in self._open:
            if cache.changed():
                before = cache.info.created_at
                if cache.refresh().created_at != before:  # (a pending order activated)
                    self._in_order = False
                dirty = True
        if dirty:
            self._open = [c for c in self._open if not c.final]
            if self._in_order:
                self._listed = self._listing()
            else:
                self._ordered = sorted(self._all, key=_CREATED, reverse=True)
                self._listed = tuple(map(_INFO, self._ordered))
        return self._listed

    def _listing(self) -> tuple[OrderInfo, ...]:
        """The infos of `_ordered`: those before the tail made afresh, then the tail."""
        ordered = self._ordered
        size, kept = len(ordered), self._tail_count
        grown = kept
        while grown < size and ordered[size - 1 - grown].final:
            grown += 1
        if grown > kept:  # the oldest open orders finished: the tail grows
            self._tail = tuple(map(_INFO, ordered[size - grown : size - kept])) + self._tail
            self._tail_count = grown
        return tuple(map(_INFO, ordered[: size - grown])) + self._tail

    def _place(self, cache: _OrderCache) -> None:
        """Put a new order first in `_ordered`, after the others of its moment (if in order)."""
        ordered, at = self._ordered, cache.order.created_at
        if ordered and at < ordered[0].order.created_at:
            self._in_order = False  # older than the newest: sorted in full from now on
        if not self._in_order:
            return
        index = 0
        while index < len(ordered) and ordered[index].order.created_at == at:
            index += 1
        if index > len(ordered) - self._tail_count:  # among the tail's (one moment's) orders
            self._tail, self._tail_count = (), 0
        ordered.insert(index, cache)


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

    @property
    def read(self) -> bool:
        """Whether any price was read (worked out) yet."""
        return bool(self._infos)

    def every(self) -> dict[str, PriceInfo]:
        """Every price by identity, as a plain dict (the mapping's items, in its order)."""
        return self._every()

    def _every(self) -> dict[str, PriceInfo]:
        if self._all is None:
            self._all = {identity: self[identity] for identity in self._tokens}
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)
