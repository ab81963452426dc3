"""Sums over a set of trades: one strategy's, one wallet's, one bucket's.

`Figures` is what a report shows of them; `Tally` adds trades up (exactly) and freezes
into `Figures`. Every USD figure is the value *at the trade's time*.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from itertools import chain
from operator import attrgetter

from bot.accounting.exact import EXACT, ZERO
from bot.accounting.records import FeeKind, Trade

__all__ = ["Figures", "Tally"]


@dataclass(frozen=True)
class Figures:
    """Totals of a set of trades.

    `invested`: of each token, how much left the wallet in trades (fees in it included);
    `received`: of each token, how much reached it. `traded_usd`: the USD value of the
    trades (what was sold, at its price then). `fees`: by kind, then token;
    `fees_usd`: the fees with a known USD value; `gas_octas` / `gas_usd`: the gas, and
    its USD value where known (`gas_unvalued`: trades with gas but no USD value for it).
    `realised_usd`: the gain or loss of the sales among them (`bot.accounting.report`).
    """

    trades: int = 0
    invested: dict[str, Decimal] = field(default_factory=dict)
    received: dict[str, Decimal] = field(default_factory=dict)
    traded_usd: Decimal = ZERO
    fees: dict[FeeKind, dict[str, Decimal]] = field(default_factory=dict)
    fees_usd: Decimal = ZERO
    fees_unvalued: int = 0
    gas_octas: int = 0
    gas_usd: Decimal = ZERO
    gas_unvalued: int = 0
    realised_usd: Decimal = ZERO


class Tally:
    """Adds trades up into `Figures` (exact sums)."""

    def __init__(self) -> None:
        self.trades = 0
        self.invested: dict[str, Decimal] = {}
        self.received: dict[str, Decimal] = {}
        self.traded_usd = ZERO
        self.fees: dict[FeeKind, dict[str, Decimal]] = {}
        self.fees_usd = ZERO
        self.fees_unvalued = 0
        self.gas_octas = 0
        self.gas_usd = ZERO
        self.gas_unvalued = 0
        self.realised_usd = ZERO

    def add_trades(
        self,
        trades: Sequence[Trade],
        *,
        values_usd: Sequence[Decimal | None],
        fees_usd: Sequence[Sequence[Decimal | None]],
        realised_usd: Sequence[Decimal],
    ) -> None:
        """Count `trades` with their USD values, their fees' USD values and realised gains.

        The other arguments are in the order of `trades` (`fees_usd[i]` in the order of
        `trades[i].fees`; None: no USD value). Summed a column at a time (a bucket of a
        year's trades usually sells one token, buys one, pays one kind of fee): exact sums
        under `EXACT`, so the order of the additions changes nothing.
        """
        with localcontext(EXACT):
            self.trades += len(trades)
            _sum_by(self.invested, list(map(_sold_token, trades)), map(_sold, trades))
            _sum_by(self.received, list(map(_bought_token, trades)), map(_bought, trades))
            # `filter(None, …)`: drops None and zeros, which add nothing.
            self.traded_usd = sum(filter(None, values_usd), self.traded_usd)
            self.realised_usd = sum(filter(None, realised_usd), self.realised_usd)
            fees = list(chain.from_iterable(map(_fees, trades)))
            if fees:
                for kind in set(map(_kind, fees)):
                    of_kind = [fee for fee in fees if fee.kind == kind]
                    sums = self.fees.get(kind)
                    if sums is None:
                        sums = self.fees[kind] = {}
                    _sum_by(sums, list(map(_token, of_kind)), map(_amount, of_kind))
                valued = list(chain.from_iterable(fees_usd))
                self.fees_unvalued += valued.count(None)
                self.fees_usd = sum(filter(None, valued), self.fees_usd)
            gas_usd = list(map(_gas_usd, trades))
            self.gas_usd = sum(filter(None, gas_usd), self.gas_usd)
            octas = sum(map(_gas_octas, trades))
            if octas:
                self.gas_octas += octas
                self.gas_unvalued += sum(
                    1 for t, usd in zip(trades, gas_usd, strict=True) if t.gas_octas and usd is None
                )

    def add_gas(self, octas: int, usd: Decimal | None) -> None:
        """Count gas paid outside any trade (`GasCost`): in the gas, and as a realised loss."""
        self.gas_octas += octas
        if usd is not None:
            self.gas_usd = EXACT.add(self.gas_usd, usd)
            self.realised_usd = EXACT.subtract(self.realised_usd, usd)
        elif octas:
            self.gas_unvalued += 1

    def merge(self, other: Tally) -> None:
        """Count everything `other` counted too (exact sums): a bucket into the totals."""
        add = EXACT.add
        self.trades += other.trades
        for token, amount in other.invested.items():
            _add_to(self.invested, token, amount)
        for token, amount in other.received.items():
            _add_to(self.received, token, amount)
        self.traded_usd = add(self.traded_usd, other.traded_usd)
        for kind, by_token in other.fees.items():
            mine = self.fees.setdefault(kind, {})
            for token, amount in by_token.items():
                _add_to(mine, token, amount)
        self.fees_usd = add(self.fees_usd, other.fees_usd)
        self.fees_unvalued += other.fees_unvalued
        self.gas_octas += other.gas_octas
        self.gas_usd = add(self.gas_usd, other.gas_usd)
        self.gas_unvalued += other.gas_unvalued
        self.realised_usd = add(self.realised_usd, other.realised_usd)

    def freeze(self) -> Figures:
        """The figures so far (tokens sorted, copies)."""
        return Figures(
            trades=self.trades,
            invested=dict(sorted(self.invested.items())),
            received=dict(sorted(self.received.items())),
            traded_usd=self.traded_usd,
            fees={kind: dict(sorted(by.items())) for kind, by in sorted(self.fees.items())},
            fees_usd=self.fees_usd,
            fees_unvalued=self.fees_unvalued,
            gas_octas=self.gas_octas,
            gas_usd=self.gas_usd,
            gas_unvalued=self.gas_unvalued,
            realised_usd=self.realised_usd,
        )


def _add_to(sums: dict[str, Decimal], token: str, amount: Decimal) -> None:
    sums[token] = EXACT.add(sums.get(token, ZERO), amount)


def _sum_by(sums: dict[str, Decimal], tokens: list[str], amounts: Iterator[Decimal]) -> None:
    """Add each amount to its token's sum in `sums` (under the caller's exact context)."""
    distinct = set(tokens)
    if len(distinct) == 1:  # the usual case: one sum, a column at a time
        (token,) = distinct
        sums[token] = sum(amounts, sums.get(token, ZERO))
        return
    for token, amount in zip(tokens, amounts, strict=True):
        sums[token] = sums.get(token, ZERO) + amount


_sold_token, _sold = attrgetter("sold_token"), attrgetter("sold")
_bought_token, _bought = attrgetter("bought_token"), attrgetter("bought")
_fees, _gas_usd, _gas_octas = attrgetter("fees"), attrgetter("gas_usd"), attrgetter("gas_octas")
_kind, _token, _amount = attrgetter("kind"), attrgetter("token"), attrgetter("amount")
