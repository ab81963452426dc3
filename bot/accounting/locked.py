"""Funds locked in open orders: what a DCA or limit order still holds of its deposit.

An order's deposit leaves the wallet when it is created and comes back only as fills (the
bought token) or a refund when it ends. What it still holds is neither in the wallet nor
traded yet: the report shows it apart, so "where is my money" adds up.

Pure: plain `OpenOrder` records in (the journal adapter builds them from its open
orders), per-token totals out, valued with the `PriceBook`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext

from bot.accounting.exact import EXACT, ZERO
from bot.accounting.prices import PriceBook
from bot.clock import ensure_utc

__all__ = ["Locked", "OpenOrder", "locked_funds"]


@dataclass(frozen=True)
class OpenOrder:
    """One open order and what it still holds of its deposit (human units of `token`)."""

    strategy: str
    wallet: str
    ref: str
    """The order's kind and id, e.g. `dca:0x3068…`."""
    token: str
    """The token deposited (the order's sold token)."""
    locked: Decimal

    def __post_init__(self) -> None:
        if not isinstance(self.locked, Decimal) or not self.locked.is_finite() or self.locked < 0:
            raise ValueError(f"open order {self.ref}: not an amount: {self.locked!r}")


@dataclass(frozen=True)
class Locked:
    """What the open orders hold of one token, and its USD value at `at` when priced."""

    token: str
    amount: Decimal
    orders: int
    usd: Decimal | None


def locked_funds(orders: Iterable[OpenOrder], book: PriceBook, at: datetime) -> list[Locked]:
    """Per token, the sum the open orders hold (exact) and its USD value at `at`.

    Tokens in the order first met; an order holding nothing is counted in `orders` but
    adds nothing. `usd` is None when the token has no price at `at`.
    """
    at = ensure_utc(at)
    amounts: dict[str, Decimal] = {}
    counts: dict[str, int] = {}
    with localcontext(EXACT):
        for order in orders:
            amounts[order.token] = amounts.get(order.token, ZERO) + order.locked
            counts[order.token] = counts.get(order.token, 0) + 1
        result = []
        for token, amount in amounts.items():
            price = book.usd_at(token, at)
            result.append(
                Locked(token, amount, counts[token], None if price is None else amount * price)
            )
    return result
