"""A small journal of trades for the report, page and export tests, written through its API.

One strategy's DCA of USDC into APT (25 USDC a slice, 0.05 of each the keeper's, a slice
a day at noon from `T0`), another strategy's limit order selling APT for USDC, and the
prices in force: USDC at 1 and APT at each slice's price (and a last one, when given).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from bot.journal import Journal
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot, PriceTickRow

__all__ = ["APT", "T0", "USDC", "WALLET", "Sale", "write_trades"]

T0 = datetime(2026, 5, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
SLICE = Decimal("25")
KEEPER_FEE = Decimal("0.05")


@dataclass(frozen=True)
class Sale:
    """The limit order of strategy `tp-apt`: `sold` APT for `got` USDC at `at`."""

    sold: Decimal = Decimal("1")
    got: Decimal = Decimal("5.5")
    at: datetime = T0 + timedelta(hours=61)
    tx_id: str = "0xl1"


def write_trades(
    path: Path,
    slices: Sequence[tuple[Decimal, Decimal]],
    *,
    strategy: str = "dca-apt",
    sale: Sale | None = None,
    last_price: Decimal | None = None,
    tx_ids: Sequence[str] | None = None,
    second_offsets: bool = False,
    wallet: str = WALLET,
) -> None:
    """Write the journal at `path`: one fill per `(APT price, APT got)` of `slices`.

    `tx_ids`: the slices' transaction ids (default `0xt1`, …); `second_offsets`: slice n
    lands n seconds after noon (distinct times to the second); `last_price`: APT's price
    at `T0` + 96 h; `wallet`: whose orders they are.
    """
    sale = sale or Sale()
    spent = SLICE * len(slices)
    fills = [FillRecord("0xt0", "created", 0, from_amount=spent, time=T0)]
    ticks = [PriceTickRow(T0, USDC, Decimal("1")), PriceTickRow(T0, APT, Decimal("5"))]
    for n, (price, got) in enumerate(slices, start=1):
        at = T0 + timedelta(hours=12 + 24 * (n - 1), seconds=n if second_offsets else 0)
        tx_id = tx_ids[n - 1] if tx_ids is not None else f"0xt{n}"
        fills.append(FillRecord(tx_id, "filled", n, SLICE, got, KEEPER_FEE, at))
        ticks.append(PriceTickRow(at, APT, price))
    if last_price is not None:
        ticks.append(PriceTickRow(T0 + timedelta(hours=96), APT, last_price))
    dca = OrderSnapshot(
        kind="dca",
        order_id="0xdca1",
        wallet=wallet,
        from_token=USDC,
        to_token=APT,
        status="completed",
        amount_total=spent,
        strategy=strategy,
    )
    limit = OrderSnapshot(
        kind="limit",
        order_id="0xlim1",
        wallet=wallet,
        from_token=APT,
        to_token=USDC,
        status="completed",
        amount_total=sale.sold,
        strategy="tp-apt",
    )
    sold = FillRecord(sale.tx_id, "filled", 1, sale.sold, sale.got, None, sale.at)
    with Journal.open(f"sqlite:///{path}") as journal:
        journal.observe_orders(
            [OrderObservation(dca, fills=fills), OrderObservation(limit, fills=[sold])],
            observed_at=T0 + timedelta(hours=97),
            source="poll",
        )
        journal.add_price_ticks(ticks)
