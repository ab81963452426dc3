"""Sums over a set of trades: one strategy's, one wallet's, one bucket's.

`Figures` is what a report shows of them; `Tally` adds trades up (exactly) and freezes
into `Figures`. Every USD figure is the value *at the trade's time*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

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

    def add(
        self,
        trade: Trade,
        *,
        value_usd: Decimal | None,
        fee_usd: Sequence[Decimal | None],
        realised_usd: Decimal,
    ) -> None:
        """Count `trade` with its USD value, its fees' USD values and its realised gain.

        `fee_usd` is in the order of `trade.fees` (None: a fee without a USD value).
        """
        add = EXACT.add  # once per trade, for every trade of a year: kept lean
        self.trades += 1
        invested, received = self.invested, self.received
        token = trade.sold_token
        invested[token] = add(invested.get(token, ZERO), trade.sold)
        token = trade.bought_token
        received[token] = add(received.get(token, ZERO), trade.bought)
        if value_usd is not None:
            self.traded_usd = add(self.traded_usd, value_usd)
        if trade.fees or fee_usd:
            for fee, usd in zip(trade.fees, fee_usd, strict=True):
                sums = self.fees.get(fee.kind)
                if sums is None:
                    sums = self.fees[fee.kind] = {}
                token = fee.token
                sums[token] = add(sums.get(token, ZERO), fee.amount)
                if usd is None:
                    self.fees_unvalued += 1
                else:
                    self.fees_usd = add(self.fees_usd, usd)
        octas = trade.gas_octas
        if octas:
            self.gas_octas += octas
            if trade.gas_usd is None:
                self.gas_unvalued += 1
        if trade.gas_usd is not None:
            self.gas_usd = add(self.gas_usd, trade.gas_usd)
        if realised_usd:  # most trades (buys) realise nothing
            self.realised_usd = add(self.realised_usd, realised_usd)

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
