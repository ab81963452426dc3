"""A strategy's order list keeps its finished oldest orders' infos: still the list made anew.

`_OrderList` lists newest first; while orders come in time order it remakes only the
infos before its tail of finished oldest orders. Orders of one moment (some finished at
once), orders finishing out of order, fills recorded on open ones: at every step the
list must be what sorting every order's fresh info gives.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from bot.aptos.tokens import Token
from bot.backtest.context import _OrderList
from bot.paper.core.dca import DcaOrder
from bot.paper.core.orders import TxDetailRecord

T0 = datetime(2026, 1, 1, tzinfo=UTC)
USDC = Token(decimals=6, symbol="USDC", fa_address="0x" + "bae2" * 16)
APT = Token(decimals=8, symbol="APT", coin_type="0x1::aptos_coin::AptosCoin")


class _Engine:
    def __init__(self) -> None:
        self.orders: dict[str, DcaOrder] = {}

    def get(self, order_id: str) -> DcaOrder:
        return self.orders[order_id]


def _order(order_id: str, at: datetime, seq: int) -> DcaOrder:
    return DcaOrder(
        order_id=order_id,
        owner="w",
        recipient="w",
        sell=USDC,
        buy=APT,
        slippage=Decimal(1),
        created_at=at,
        status="active",
        seq=seq,
        total=10,
        per_order=1,
        orders_total=10,
        interval=(1, "hour"),
    )


@pytest.mark.parametrize("seed", range(40))
def test_the_order_list_with_a_kept_tail_is_the_list_made_anew(seed: int) -> None:
    rng = random.Random(seed)
    engine = _Engine()
    market: Any = type("Market", (), {"dca": engine, "limit": engine})()
    created: list[tuple[str, str]] = []
    listed = _OrderList(market, created, "s")
    at = T0
    for step in range(60):
        for _ in range(rng.choice([0, 1, 1, 2, 4])):  # several orders at one moment
            order_id = f"{step}-{len(created)}"
            engine.orders[order_id] = order = _order(order_id, at, len(created))
            created.append(("dca", order_id))
            if rng.random() < 0.2:  # finished at once (a refused fill, a cancel)
                order.status = "cancelled"
        live = [o for o in engine.orders.values() if o.status == "active"]
        for order in rng.sample(live, k=min(len(live), rng.choice([0, 1, 2]))):
            order.status = rng.choice(["filled", "cancelled", "refunded"])  # any order
        for order in [o for o in live if o.status == "active" and rng.random() < 0.3]:
            order.details.append(
                TxDetailRecord(f"tx-{len(order.details)}", 1, "filled", 1, 1, 2, 0, at)
            )
        if rng.random() < 0.7:
            at += timedelta(minutes=rng.choice([1, 30]))
        in_creation = [engine.orders[order_id] for _kind, order_id in created]
        expected = sorted(in_creation, key=lambda o: o.created_at, reverse=True)  # stable
        got = listed.current()
        assert [(o.order_id, o.status, len(o.fills)) for o in got] == [
            (o.order_id, o.status, len(o.details)) for o in expected
        ]
    assert listed._tail_count > 0  # the tail was kept (the test tests it)
