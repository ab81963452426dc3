"""What the accounting reads: trades (fills and swaps) with their fees and gas.

Plain frozen records, built by an adapter from the journal (`bot.accounting.from_journal`),
from a backtest result, or by hand in tests: the accounting never reads a database, the
API or the chain itself. A `GasCost` is gas the wallet paid outside any trade (an order's
create or cancel transaction, a swap that aborted on chain).

Amounts are exact human-unit `Decimal`s of a token; gas is an `int` in octas (APT base
units, `APT_DECIMALS`). Times are aware UTC (`bot.clock.ensure_utc`: a naive time is
refused). A token is named by one identity text (its canonical coin type or FA address,
or a symbol in tests): the accounting compares identities as given, so the caller names
each token one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Final

from bot.clock import ensure_utc
from bot.domain import APT_COIN_TYPE
from bot.money import MoneyError, from_base_units

__all__ = [
    "APT_COIN_TYPE",
    "APT_DECIMALS",
    "CostMethod",
    "Fee",
    "FeeKind",
    "GasCost",
    "Pair",
    "Trade",
    "checked_trade",
]

APT_DECIMALS: Final = 8
"""Decimals of APT: one APT is 10^8 octas (gas is paid in octas)."""
"""APT's identity as the journal names it (orders, prices): gas is valued at its price."""


class FeeKind(StrEnum):
    """Who a fee went to."""

    PROVIDER = "provider"
    """The aggregator (the DEX route's own fee, the provider's `feeTokenAmount`)."""
    KEEPER = "keeper"
    """The keeper that executed a DCA slice or a limit fill."""
    PLATFORM = "platform"
    """An integrator's platform fee."""


class CostMethod(StrEnum):
    """How the cost of what is sold is taken from what was bought (the cost basis)."""

    FIFO = "fifo"
    """First in, first out: the oldest lots are sold first (the default)."""
    AVERAGE = "average"
    """Average cost: every unit held costs the same, the pool's cost / quantity."""


def _amount(value: Decimal, field_name: str) -> None:
    """Refuse a float, NaN, infinity or a negative amount for `field_name`."""
    if not isinstance(value, Decimal):
        raise MoneyError(f"{field_name}: expected a Decimal, got {type(value).__name__}")
    if not value.is_finite() or value < 0:
        raise MoneyError(f"{field_name}: not an amount: {value}")


@dataclass(frozen=True, slots=True)
class Fee:
    """One fee of a trade: its kind, token and amount, and its USD value when known.

    The trade's amounts are what left and what reached the wallet: a fee in the sold
    token is inside `Trade.sold`, one in the bought token was kept back from
    `Trade.bought`; only a fee in a third token was paid on top of them.
    """

    kind: FeeKind
    token: str
    amount: Decimal
    usd: Decimal | None = None
    """The fee's USD value at the trade's time, if the source gave one."""

    def __post_init__(self) -> None:
        _amount(self.amount, "fee amount")
        if self.usd is not None:
            _amount(self.usd, "fee usd")


@dataclass(frozen=True, slots=True)
class Trade:
    """One execution: a DCA slice, a (partial) limit fill, or a swap.

    `sold` is everything of `sold_token` that left the wallet for it, fees in that token
    included; `bought` is what of `bought_token` reached the wallet. A refund is no trade:
    an order's unspent deposit coming back changes neither.
    """

    time: datetime
    strategy: str
    wallet: str
    ref: str
    """What it was: the order id (with its fill number) or the transaction hash."""
    sold_token: str
    sold: Decimal
    bought_token: str
    bought: Decimal
    fees: tuple[Fee, ...] = ()
    gas_octas: int = 0
    """Gas paid by the wallet for it, in octas (0: none, e.g. a keeper's fill)."""
    gas_usd: Decimal | None = None
    """The gas's USD value at the time, when known."""
    sold_usd_price: Decimal | None = None
    """USD per one `sold_token` at `time`, when the source recorded it."""
    bought_usd_price: Decimal | None = None
    """USD per one `bought_token` at `time`, when the source recorded it."""
    label: str = field(default="")
    """Free text carried to exports (the intent, the order kind)."""

    def __post_init__(self) -> None:
        # Made once per fill of a year of them: the usual case (UTC, no gas) kept cheap.
        if self.time.tzinfo is not UTC:
            object.__setattr__(self, "time", ensure_utc(self.time))
        _amount(self.sold, "sold")
        _amount(self.bought, "bought")
        if self.sold_token == self.bought_token:
            raise ValueError(f"trade {self.ref}: sold and bought the same token {self.sold_token}")
        if self.gas_octas.__class__ is not int or self.gas_octas < 0:
            _octas(self.gas_octas)
        if self.gas_usd is not None:
            _amount(self.gas_usd, "gas_usd")
        if self.sold_usd_price is not None:
            _amount(self.sold_usd_price, "sold_usd_price")
        if self.bought_usd_price is not None:
            _amount(self.bought_usd_price, "bought_usd_price")

    @property
    def gas_apt(self) -> Decimal:
        """The gas in APT, exact."""
        return from_base_units(self.gas_octas, APT_DECIMALS)


_new = object.__new__
(
    _time,
    _strategy,
    _wallet,
    _ref,
    _sold_token,
    _sold,
    _bought_token,
    _bought,
    _fees,
    _gas_octas,
    _gas_usd,
    _sold_usd_price,
    _bought_usd_price,
    _label,
) = (getattr(Trade, f.name).__set__ for f in fields(Trade))  # each field's slot setter


def checked_trade(
    time: datetime,
    strategy: str,
    wallet: str,
    ref: str,
    sold_token: str,
    sold: Decimal,
    bought_token: str,
    bought: Decimal,
    fees: tuple[Fee, ...],
    gas_octas: int,
    gas_usd: Decimal | None,
    sold_usd_price: Decimal | None,
    bought_usd_price: Decimal | None,
    label: str,
) -> Trade:
    """`Trade(...)` of values the caller has already checked, without checking them again.

    For an adapter making a year of trades of values it knows are valid, at half the cost:
    `bot.accounting.from_journal.trades_of_order` checks each value cheaply and calls
    `Trade(...)` for anything unusual, so its errors stay the same. Everyone else calls
    `Trade(...)`. Equal to `Trade(...)` of the same (valid) values.
    """
    trade = _new(Trade)
    _time(trade, time)
    _strategy(trade, strategy)
    _wallet(trade, wallet)
    _ref(trade, ref)
    _sold_token(trade, sold_token)
    _sold(trade, sold)
    _bought_token(trade, bought_token)
    _bought(trade, bought)
    _fees(trade, fees)
    _gas_octas(trade, gas_octas)
    _gas_usd(trade, gas_usd)
    _sold_usd_price(trade, sold_usd_price)
    _bought_usd_price(trade, bought_usd_price)
    _label(trade, label)
    return trade


def _octas(value: int) -> None:
    """Refuse a gas figure that is not a non-negative int."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise MoneyError(f"gas_octas: expected an int, got {type(value).__name__}")
    if value < 0:
        raise MoneyError(f"gas_octas: negative: {value}")


@dataclass(frozen=True, slots=True)
class GasCost:
    """Gas the wallet paid for a transaction that is no trade, in octas.

    An order's create (deposit) or cancel (withdraw) transaction, or a swap that aborted
    on chain: a cost of the strategy that sent it, counted in its gas and taken from its
    realised P&L (it buys nothing a lot could carry).
    """

    time: datetime
    strategy: str
    wallet: str
    ref: str
    """The transaction hash."""
    gas_octas: int
    gas_usd: Decimal | None = None
    """The gas's USD value at the time, when known."""
    label: str = ""
    """What the transaction was for (the intent's kind)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "time", ensure_utc(self.time))
        _octas(self.gas_octas)
        if self.gas_usd is not None:
            _amount(self.gas_usd, "gas_usd")

    @property
    def gas_apt(self) -> Decimal:
        """The gas in APT, exact."""
        return from_base_units(self.gas_octas, APT_DECIMALS)


@dataclass(frozen=True)
class Pair:
    """The pair a position is shown in: prices are `quote` per one `base`.

    For a DCA buying APT with USDC: base APT, quote USDC, an entry of 5.004 USDC per APT.
    """

    base: str
    quote: str

    def __post_init__(self) -> None:
        if self.base == self.quote:
            raise ValueError(f"a pair of one token: {self.base}")
