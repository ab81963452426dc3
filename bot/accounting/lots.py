"""The cost basis: which purchase's cost a sale is measured against.

Each token held has lots (quantity, USD cost). A purchase adds a lot; a sale takes its
quantity from the lots and, with it, their cost:

- FIFO (`CostMethod.FIFO`, the default): the oldest lots first;
- average cost (`CostMethod.AVERAGE`): one pooled lot per token, so every unit held
  costs the pool's cost / quantity.

Cost is *moved*, never created or lost: a part of a lot takes the share
`cost × part / quantity` (the one rounded step, `bot.accounting.exact.ratio`) and the lot
keeps the rest exactly; a lot taken whole gives its whole remaining cost. So the costs
of all sales plus the cost still held equal the cost paid, exactly, under either method,
and when everything bought is sold both methods give the same realised total.

Selling more than the lots hold (an opening balance bought before the records, the
quote token a DCA spends) is *uncovered*: the caller values that part at the market
when sold (no gain, no loss) and reports the quantity.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from bot.accounting.exact import EXACT, ZERO, ratio
from bot.accounting.records import CostMethod

__all__ = ["CostBasis", "Lot", "Taken"]


@dataclass(slots=True)
class Lot:
    """A quantity of one token still held and what it cost in USD."""

    quantity: Decimal
    cost: Decimal


class Taken(NamedTuple):
    """What a sale took from the lots: the USD cost, and the quantity no lot covered."""

    cost: Decimal
    uncovered: Decimal


_taken = tuple.__new__


class CostBasis:
    """Lots per token under one cost-basis method.

    Each lot is held as a (quantity, cost) pair, a lot taken in part replaced by its rest:
    a year of purchases is a year of lots.
    """

    def __init__(self, method: CostMethod = CostMethod.FIFO) -> None:
        self.method = CostMethod(method)
        self._pooled = self.method is CostMethod.AVERAGE
        self._lots: dict[str, deque[tuple[Decimal, Decimal]]] = {}

    def add(self, token: str, quantity: Decimal, cost: Decimal) -> None:
        """Record a purchase of `quantity` of `token` for `cost` USD (quantity 0: nothing)."""
        if quantity <= ZERO:
            return
        lots = self._lots.get(token)
        if lots is None:
            lots = self._lots[token] = deque()
        if self._pooled and lots:
            held, paid = lots[0]
            lots[0] = (EXACT.add(held, quantity), EXACT.add(paid, cost))
        else:
            lots.append((quantity, cost))

    def take(self, token: str, quantity: Decimal) -> Taken:
        """Remove `quantity` of `token` for a sale; returns the cost taken with it."""
        lots = self._lots.get(token)
        if not lots:  # nothing held (a DCA's quote token): all of it uncovered
            return _taken(Taken, (ZERO, quantity))  # `Taken(ZERO, quantity)`, for every slice
        left = quantity
        cost = ZERO
        while lots and left > ZERO:
            held, paid = lots[0]
            if held <= left:
                cost = EXACT.add(cost, paid)
                left = EXACT.subtract(left, held)
                lots.popleft()
                continue
            share = ratio(EXACT.multiply(paid, left), held)
            cost = EXACT.add(cost, share)
            lots[0] = (EXACT.subtract(held, left), EXACT.subtract(paid, share))
            left = ZERO
        if not lots:
            del self._lots[token]
        return Taken(cost=cost, uncovered=left)

    def held(self) -> dict[str, Lot]:
        """Each token still held: its total quantity and remaining cost (a copy)."""
        result: dict[str, Lot] = {}
        add = EXACT.add
        for token, lots in self._lots.items():
            quantity = ZERO
            cost = ZERO
            for held, paid in lots:
                quantity = add(quantity, held)
                cost = add(cost, paid)
            result[token] = Lot(quantity, cost)
        return result
