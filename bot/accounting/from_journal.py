"""The journal's records as the accounting's: an order's fills as `Trade`s, ticks as prices.

The one module of `bot.accounting` that knows the journal, and only its frozen views
(`bot.journal.views`): the caller reads the journal and hands the views in.

What the journal holds and what it does not (yet):
- a fill (`txDetails` record) of type `filled` is a trade: `from_amount` of the order's
  `from_token` sold (the keeper fee inside it, as the paper world and the provider's
  `fromTokenAmount` count it), `to_amount` of its `to_token` bought; `fee_amount` is a
  keeper fee in the sold token (the journal does not store the order's `feeToken`;
  `fee_token` overrides it). Other types (`created`, `attempted`, `failed`,
  `cancelled`: a refund) move nothing that is traded and are skipped;
- a fill's USD values are not stored (the provider's `…USD` fields are dropped), so the
  trade is valued from recorded prices (`price_book`);
- keepers execute DCA slices and limit fills: the wallet pays no gas for them (its
  create/cancel transactions have gas, but the journal keeps `gas_used` without the
  unit price, so their octas are not known here);
- swaps (intent kind `swap`) have no fill record: their amounts are not yet journaled.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Final

from bot.accounting.prices import PriceBook, PricePoint
from bot.accounting.records import Fee, FeeKind, Trade
from bot.journal.views import FillView, OrderView, PriceTickRow

__all__ = ["TRADED_FILL_TYPE", "UNASSIGNED", "price_book", "trades_of_order"]

TRADED_FILL_TYPE: Final = "filled"
"""The `txDetails` type of an execution (the others move nothing traded)."""
UNASSIGNED: Final = "(no strategy)"
"""The strategy name of an order the journal links to none (adopted by hand)."""


def trades_of_order(
    order: OrderView, fills: Iterable[FillView], *, fee_token: str | None = None
) -> list[Trade]:
    """The trades of one order's fills (executions with both amounts positive).

    `fee_token`: the token fees are in, when known (default: the order's sold token).
    A fill without a time is dated when the journal learned of it (`recorded_at`).
    """
    trades: list[Trade] = []
    for fill in fills:
        if fill.type != TRADED_FILL_TYPE or not fill.from_amount or not fill.to_amount:
            continue
        fee = fill.fee_amount or Decimal(0)
        number = "" if fill.tx_number is None else f"#{fill.tx_number}"
        trades.append(
            Trade(
                time=fill.time if fill.time is not None else fill.recorded_at,
                strategy=order.strategy or UNASSIGNED,
                wallet=order.wallet,
                ref=f"{order.kind}:{order.order_id}{number}",
                sold_token=order.from_token,
                sold=fill.from_amount,
                bought_token=order.to_token,
                bought=fill.to_amount,
                fees=(Fee(FeeKind.KEEPER, fee_token or order.from_token, fee),) if fee else (),
                label=fill.tx_id,
            )
        )
    return trades


def price_book(ticks: Iterable[PriceTickRow]) -> PriceBook:
    """A price book of recorded ticks (each token's USD prices)."""
    points: dict[str, list[PricePoint]] = {}
    for tick in ticks:
        points.setdefault(tick.token, []).append(PricePoint(tick.timestamp, tick.usd_price))
    return PriceBook.of_points(points)
