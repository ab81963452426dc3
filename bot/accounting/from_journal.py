"""The journal's records as the accounting's: fills and swaps as `Trade`s, gas, prices.

The one module of `bot.accounting` that knows the journal, and only its frozen views
(`bot.journal.views`): the caller reads the journal and hands the views in, or hands in
the journal itself (`journal_records`: any object with its read methods).

What the journal holds, and how it becomes records:
- a fill (`txDetails` record) of type `filled` is a trade: `from_amount` of the order's
  `from_token` sold (the keeper fee inside it, as the paper world and the provider's
  `fromTokenAmount` count it), `to_amount` of its `to_token` bought; `fee_amount` is a
  keeper fee in the sold token (the journal does not store the order's `feeToken`;
  `fee_token` overrides it). Other types (`created`, `attempted`, `failed`,
  `cancelled`: a refund) move nothing that is traded and are skipped. Keepers execute
  DCA slices and limit fills: the wallet pays no gas for them;
- a fill's `…USD` values (the provider's, since journal revision 0005) give the trade its
  trade-time USD prices (value / amount) and the fee its USD value, before the price
  book. They are untrusted provider data: valuation display only, never signing;
- a swap fill (`swap_fills`: what a confirmed swap sold and received, from its own
  committed transaction's balance changes, or flagged `bounds`) is a trade whose gas is
  its committed transaction's (`gas_used × gas_unit_price` octas);
- every other transaction the wallet's intents executed on chain (an order's create or
  cancel, a swap that aborted) is a `GasCost` of the intent's strategy. A transaction
  recorded before revision 0005 has no gas unit price: its gas is unknown and left out
  (`JournalRecords.gas_unknown` names them).
Gas is valued at APT's price in the book at the transaction's time, when there is one.
An open order (`active`, `partiallyFilled`) still holds part of its deposit: `open_orders`
makes it an `OpenOrder` (`bot.accounting.locked`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Final, Protocol

from bot.accounting.exact import EXACT, ZERO, ratio
from bot.accounting.locked import OpenOrder
from bot.accounting.prices import PriceBook, PricePoint
from bot.accounting.records import (
    APT_COIN_TYPE,
    APT_DECIMALS,
    Fee,
    FeeKind,
    GasCost,
    Trade,
    checked_trade,
)
from bot.domain import PROVIDER_LIVE_STATUSES
from bot.journal.rows import FillRow
from bot.journal.views import (
    FillView,
    IntentView,
    OrderView,
    PriceTickRow,
    SwapFillView,
    TransactionView,
)
from bot.money import from_base_units

__all__ = [
    "EXECUTED_TX_STATES",
    "TRADED_FILL_TYPE",
    "UNASSIGNED",
    "JournalReads",
    "JournalRecords",
    "SwapAndGasReads",
    "accounted_name",
    "gas_costs",
    "gas_usd",
    "journal_records",
    "open_orders",
    "price_book",
    "stored_names",
    "swaps_and_gas",
    "trades_of_order",
    "trades_of_swaps",
]

TRADED_FILL_TYPE: Final = "filled"
"""The `txDetails` type of an execution (the others move nothing traded)."""
UNASSIGNED: Final = "(no strategy)"
"""The strategy name of an order the journal links to none (adopted by hand)."""
EXECUTED_TX_STATES: Final = frozenset({"committed", "failed"})
"""Transaction states that ran on chain and so paid gas (`failed`: aborted)."""
_INFINITY: Final = Decimal("Infinity")


def accounted_name(stored: str | None) -> str:
    """The strategy an order stored with `stored` is accounted under (none: `UNASSIGNED`)."""
    return stored or UNASSIGNED


def stored_names(accounted: Collection[str]) -> set[str | None]:
    """What orders accounted under the names `accounted` may be stored with (None: none).

    The reverse of `accounted_name`: a superset, to select the orders to read by.
    """
    stored: set[str | None] = set(accounted)
    if UNASSIGNED in stored:
        stored.update((None, ""))
    return stored


def trades_of_order(
    order: OrderView,
    fills: Iterable[FillView | FillRow],
    *,
    fee_token: str | None = None,
) -> list[Trade]:
    """The trades of one order's fills (executions with both amounts positive).

    `fee_token`: the token fees are in, when known (default: the order's sold token).
    A fill without a time is dated when the journal learned of it (`recorded_at`). The
    provider's USD values, when the fill carries them, give the trade's USD prices.

    Made for a year of fills at a time: what the order gives every trade is worked out
    once, equal fees are one `Fee`, and a fill whose values are plainly valid (positive
    finite amounts, an aware UTC time) becomes a trade without checking them again
    (`checked_trade`); any other goes through `Trade(...)`, which says what is wrong.
    """
    trades: list[Trade] = []
    strategy = accounted_name(order.strategy)
    wallet, sold_token, bought_token = order.wallet, order.from_token, order.to_token
    prefix = f"{order.kind}:{order.order_id}"
    fee_in = fee_token or sold_token
    fees: dict[tuple[Decimal, Decimal | None], tuple[Fee, ...]] = {}
    for fill in fills:
        sold, bought = fill.from_amount, fill.to_amount
        if fill.type != TRADED_FILL_TYPE or not sold or not bought:
            continue
        fee = fill.fee_amount
        if fee:
            key = (fee, fill.fee_amount_usd)
            charged = fees.get(key)
            if charged is None:  # checked once, by `Fee(...)`
                charged = fees[key] = (Fee(FeeKind.KEEPER, fee_in, fee, fill.fee_amount_usd),)
        else:
            charged = ()
        time = fill.time if fill.time is not None else fill.recorded_at
        number = "" if fill.tx_number is None else f"#{fill.tx_number}"
        usd = fill.from_amount_usd
        sold_price = None if usd is None else _unit_price(usd, sold)
        usd = fill.to_amount_usd
        bought_price = None if usd is None else _unit_price(usd, bought)
        make = (
            checked_trade  # `Trade`'s checks hold: positive finite Decimals, aware UTC
            if time.tzinfo is UTC
            and sold.__class__ is Decimal
            and ZERO < sold < _INFINITY
            and bought.__class__ is Decimal
            and ZERO < bought < _INFINITY
            and (sold_price is None or sold_price.is_finite())
            and (bought_price is None or bought_price.is_finite())
            else Trade
        )
        trades.append(
            make(
                time,
                strategy,
                wallet,
                prefix + number,
                sold_token,
                sold,
                bought_token,
                bought,
                charged,
                0,
                None,
                sold_price,
                bought_price,
                fill.tx_id,
            )
        )
    return trades


def trades_of_swaps(
    fills: Iterable[SwapFillView],
    transactions: Mapping[str, TransactionView],
    book: PriceBook | None = None,
) -> list[Trade]:
    """The trades of confirmed swaps; `transactions` by hash give their gas.

    A swap whose amounts are the intent's bounds (`source` `bounds`: the node reported
    no balance changes) says so in its label.
    """
    trades: list[Trade] = []
    for fill in fills:
        tx = transactions.get(fill.tx_hash)
        octas = (tx.gas_fee if tx is not None else None) or 0
        trades.append(
            Trade(
                time=fill.time,
                strategy=fill.strategy,
                wallet=fill.wallet,
                ref=f"swap:{fill.intent_id}",
                sold_token=fill.sold_token,
                sold=fill.sold_amount,
                bought_token=fill.bought_token,
                bought=fill.bought_amount,
                gas_octas=octas,
                gas_usd=gas_usd(octas, fill.time, book) if octas else None,
                label=fill.tx_hash if fill.source == "chain" else f"{fill.tx_hash} (bounds)",
            )
        )
    return trades


def gas_costs(
    intents: Iterable[IntentView],
    transactions: Iterable[TransactionView],
    *,
    traded: Iterable[str] = (),
    book: PriceBook | None = None,
) -> list[GasCost]:
    """The gas of the intents' executed transactions that is in no trade (`traded`: hashes).

    Transactions of no listed intent, not executed (expired, never sent), or whose gas
    is unknown (no unit price: recorded before journal revision 0005) are left out.
    """
    by_id = {intent.id: intent for intent in intents}
    counted = set(traded)
    costs: list[GasCost] = []
    for tx in transactions:
        intent = by_id.get(tx.intent_id) if tx.intent_id is not None else None
        octas = tx.gas_fee
        if intent is None or tx.state not in EXECUTED_TX_STATES or tx.hash in counted:
            continue
        if not octas:
            continue
        time = tx.committed_at or tx.updated_at
        costs.append(
            GasCost(
                time=time,
                strategy=intent.strategy,
                wallet=intent.wallet,
                ref=tx.hash,
                gas_octas=octas,
                gas_usd=gas_usd(octas, time, book),
                label=intent.kind,
            )
        )
    return costs


def gas_usd(octas: int, time: datetime, book: PriceBook | None) -> Decimal | None:
    """The USD value of `octas` of gas at `time` (APT's price in `book`), if known."""
    if book is None:
        return None
    price = book.usd_at(APT_COIN_TYPE, time)
    if price is None:
        return None
    return EXACT.multiply(from_base_units(octas, APT_DECIMALS), price)


def price_book(ticks: Iterable[PriceTickRow]) -> PriceBook:
    """A price book of recorded ticks (each token's USD prices)."""
    points: dict[str, list[PricePoint]] = {}
    for tick in ticks:
        points.setdefault(tick.token, []).append(PricePoint(tick.timestamp, tick.usd_price))
    return PriceBook.of_points(points)


class SwapAndGasReads(Protocol):
    """The journal's reads `swaps_and_gas` uses (`bot.journal.Journal` has them)."""

    def swap_fills(self, strategy: str | None = None) -> list[SwapFillView]:
        """Recorded swap fills, of one strategy or all."""
        ...

    def intents(
        self, states: Iterable[str] | None = None, strategy: str | None = None
    ) -> list[IntentView]:
        """Intents (oldest first), of one strategy or all."""
        ...

    def transactions(
        self, intent_id: int | None = None, states: Iterable[str] | None = None
    ) -> list[TransactionView]:
        """Recorded transactions (oldest first), optionally in `states`."""
        ...


class JournalReads(SwapAndGasReads, Protocol):
    """The journal's reads `journal_records` uses (`bot.journal.Journal` has them)."""

    def orders(self, *, strategy: str | None = None) -> list[OrderView]:
        """Stored orders (oldest first), of one strategy or all."""
        ...

    def fills(self, kind: str, order_id: str) -> list[FillView]:
        """An order's fills in recording order."""
        ...


@dataclass(frozen=True)
class JournalRecords:
    """Everything the accounting reads of a journal: trades, gas outside them, unknowns."""

    trades: list[Trade]
    """Fills of orders and confirmed swaps."""
    gas: list[GasCost]
    """Gas of order create/cancel transactions and of swaps that aborted."""
    gas_unknown: list[str]
    """Hashes of executed transactions whose gas is not known (no unit price)."""


def journal_records(
    journal: JournalReads, *, strategy: str | None = None, book: PriceBook | None = None
) -> JournalRecords:
    """The trades and gas costs of one strategy (None: all) from the journal's reads.

    Order fills (`trades_of_order`, one read per order) and `swaps_and_gas`. `book`
    values gas in USD (APT's price at the time); without one gas has no USD value.
    """
    trades: list[Trade] = []
    for order in journal.orders(strategy=strategy):
        trades += trades_of_order(order, journal.fills(order.kind, order.order_id))
    rest = swaps_and_gas(journal, strategy=strategy, book=book)
    return JournalRecords(trades + rest.trades, rest.gas, rest.gas_unknown)


def swaps_and_gas(
    journal: SwapAndGasReads, *, strategy: str | None = None, book: PriceBook | None = None
) -> JournalRecords:
    """What the journal holds beyond order fills: swap trades and gas outside trades.

    For a loader that reads order fills its own way (`bot.app.report`): add `trades` to
    its trades and pass `gas` to `by_strategy`. `book` values the gas (APT's price).
    """
    swaps = journal.swap_fills(strategy)
    intents = journal.intents(strategy=strategy)
    ids = {intent.id for intent in intents}
    txs = [tx for tx in journal.transactions(states=EXECUTED_TX_STATES) if tx.intent_id in ids]
    by_hash = {tx.hash: tx for tx in txs}
    trades = trades_of_swaps(swaps, by_hash, book)
    gas = gas_costs(intents, txs, traded=(s.tx_hash for s in swaps), book=book)
    unknown = [tx.hash for tx in txs if tx.gas_fee is None]
    return JournalRecords(trades=trades, gas=gas, gas_unknown=unknown)


def open_orders(orders: Iterable[OrderView]) -> list[OpenOrder]:
    """The open orders among `orders` and what each still holds of its deposit.

    What it holds: the provider's `amount_balance` when observed, else its total less
    what it spent (never below zero). An order linked to no strategy is `UNASSIGNED`.
    """
    held: list[OpenOrder] = []
    for order in orders:
        if order.status not in PROVIDER_LIVE_STATUSES:
            continue
        if order.amount_balance is not None:
            locked = order.amount_balance
        else:
            locked = max(order.amount_total - (order.amount_spent or Decimal(0)), Decimal(0))
        held.append(
            OpenOrder(
                strategy=accounted_name(order.strategy),
                wallet=order.wallet,
                ref=f"{order.kind}:{order.order_id}",
                token=order.from_token,
                locked=locked,
            )
        )
    return held


def _unit_price(usd: Decimal | None, amount: Decimal | None) -> Decimal | None:
    """USD per one token from the provider's USD value of `amount` (None: not usable)."""
    if usd is None or amount is None or amount <= 0 or usd <= 0:
        return None
    return ratio(usd, amount)
