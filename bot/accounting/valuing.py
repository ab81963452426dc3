"""A trade's USD value and its fees', at its time, from its own prices or a price book.

The one rule the accounting, its value series and the exports value trades by: what it
sold × the sold token's USD price (the trade's own recorded one, else the book's in force
then), else what it bought × the bought token's, else unvalued (None).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from decimal import Decimal

from bot.accounting.exact import EXACT, ZERO
from bot.accounting.prices import PriceBook
from bot.accounting.records import Fee, Trade
from bot.clock import EPOCH, MICROSECOND

__all__ = ["Valuer"]

_multiply = EXACT.multiply  # for every trade


class Valuer:
    """Values trades at their time against a price book (each trade's µs worked out once).

    A trade's USD value: what it sold × the sold token's price (its own recorded one,
    else the book's), else what it bought × the bought token's price, else None. A fee's:
    its own USD value, else its amount × its token's price then (the trade's own for the
    sold or bought token, else the book's).
    """

    def __init__(self, prices: PriceBook) -> None:
        self._prices = prices
        self._columns: dict[str, tuple[Sequence[int], list[Decimal]] | None] = {}

    def _usd(self, token: str, micros: int) -> Decimal | None:
        """The book's price of `token` in force at `micros` (the last at or before it)."""
        try:
            columns = self._columns[token]
        except KeyError:
            series = self._prices.series(token)
            columns = self._columns[token] = None if series is None else series.columns()
        if columns is None:
            return None
        index = bisect_right(columns[0], micros) - 1
        return None if index < 0 else columns[1][index]

    def value(
        self, trade: Trade, micros: int | None = None
    ) -> tuple[Decimal | None, tuple[Decimal | None, ...]]:
        """The trade's USD value and its fees' (in the order of `trade.fees`).

        `micros`: the trade's time as µs since the epoch, when the caller has it (`micros_of`).
        """
        if micros is None:
            micros = (trade.time - EPOCH) // MICROSECOND  # `to_micros`: aware UTC
        value: Decimal | None = None
        sold_price = trade.sold_usd_price
        if sold_price is None:
            sold_price = self._usd(trade.sold_token, micros)
        if sold_price is not None and (sold_price > ZERO or trade.sold == ZERO):
            value = _multiply(trade.sold, sold_price)
        else:
            bought_price = self._bought_price(trade, micros)
            if bought_price is not None:
                value = _multiply(trade.bought, bought_price)
        fees = trade.fees
        if not fees:
            return value, ()
        if len(fees) == 1:  # the usual keeper fee
            fee = fees[0]
            if fee.usd is None and fee.token == trade.sold_token and sold_price is not None:
                return value, (_multiply(fee.amount, sold_price),)  # `_fee_usd`, in short
            return value, (self._fee_usd(trade, fee, micros, sold_price),)
        return value, tuple(self._fee_usd(trade, fee, micros, sold_price) for fee in fees)

    def _bought_price(self, trade: Trade, micros: int) -> Decimal | None:
        price = trade.bought_usd_price
        return price if price is not None else self._usd(trade.bought_token, micros)

    def _fee_usd(
        self, trade: Trade, fee: Fee, micros: int, sold_price: Decimal | None
    ) -> Decimal | None:
        """`fee`'s USD value; `sold_price`: the sold token's price then (own, else book's)."""
        if fee.usd is not None:
            return fee.usd
        if fee.token == trade.sold_token:
            price = sold_price
        elif fee.token == trade.bought_token:
            price = self._bought_price(trade, micros)
        else:
            price = self._usd(fee.token, micros)
        return None if price is None else EXACT.multiply(fee.amount, price)
