"""Property: whatever the provider shows, in whatever order, the log has no duplicates."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.api import GetOrdersRequest, OrderFilter, PanoraClient
from bot.api.models import FINAL_STATUSES, LimitOrder, OrdersPage
from bot.clock import SteppedClock
from bot.engine.tracker import OrderTracker
from bot.journal import Journal

WALLET = "0x" + "4d" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
STATUSES = [
    "active",
    "partially_filled",
    "filled",
    "cancelled",
    "expired",
    "refunded",
    "paused",
    "settling",
]  # the last two: statuses the spec does not list


def record(order_id: str, status: str, spent: int) -> LimitOrder:
    return LimitOrder.model_validate(
        {
            "panoraTxId": order_id,
            "status": status,
            "fromToken": {"address": APT, "decimals": 8},
            "toToken": {"address": USDC, "decimals": 6},
            "fromTokenAmount": "10",
            "rateToTokenPerFromToken": "6",
            "fromTokenAmountSpent": str(spent),
            "fromTokenAmountBalance": str(10 - spent),
            "createdAtTime": "2026-01-01T00:00:00Z",
        }
    )


class ScriptedProvider:
    """Answers getOrders with whatever the test says each order looks like right now."""

    chain_id = 1

    def __init__(self) -> None:
        self.current: dict[str, LimitOrder] = {}

    async def get_orders(self, kind: str, request: GetOrdersRequest) -> OrdersPage[LimitOrder]:
        wanted = FINAL_STATUSES if request.status == OrderFilter.COMPLETED else None
        orders = [
            o
            for o in self.current.values()
            if (o.status in FINAL_STATUSES) == (wanted is not None)
            and (request.order_id is None or o.order_id == request.order_id)
        ]
        return OrdersPage(
            1, WALLET, request.page_number, 1, orders if request.page_number == 1 else []
        )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    states=st.lists(
        st.tuples(st.sampled_from(STATUSES), st.integers(0, 10)), min_size=1, max_size=6
    ),
    polls=st.lists(st.integers(0, 5), min_size=1, max_size=12),
)
def test_any_sequence_of_states_gives_a_clean_log(
    tmp_path_factory: Any, states: list[tuple[str, int]], polls: list[int]
) -> None:
    path: Path = tmp_path_factory.mktemp("journal") / "bot.db"
    provider = ScriptedProvider()
    clock = SteppedClock(datetime(2026, 1, 1, tzinfo=UTC))
    observed: list[tuple[str, int]] = []
    with Journal.open(f"sqlite:///{path}") as journal:
        tracker = OrderTracker(
            cast(PanoraClient, provider), journal, clock, WALLET, kinds=["limit"]
        )
        for index in polls:  # any order, with repeats
            status, spent = states[index % len(states)]
            provider.current["0xorder"] = record("0xorder", status, spent)
            observed.append((status, spent))
            asyncio.run(tracker.poll())
            clock.advance(timedelta(seconds=1))
        stored = journal.order("limit", "0xorder")
        log = [(t.from_status, t.to_status) for t in journal.transitions("limit", "0xorder")]
    assert stored is not None and stored.status == observed[-1][0]
    changes = [b for a, b in itertools.pairwise([None, *[s for s, _ in observed]]) if a != b]
    assert [to for _, to in log] == changes  # one transition per change, none repeated
    assert all(a == b for (_, a), (b, _) in itertools.pairwise(log))  # a chain
    assert stored.amount_spent == Decimal(observed[-1][1])


def test_an_order_that_disappears_and_reappears_is_recorded_once_each_way(
    tmp_path: Path,
) -> None:
    from bot.engine.events import OrderDisappeared, OrderReappeared

    provider = ScriptedProvider()
    clock = SteppedClock(datetime(2026, 1, 1, tzinfo=UTC))
    events: list[object] = []
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        tracker = OrderTracker(
            cast(PanoraClient, provider), journal, clock, WALLET, kinds=["limit"]
        )
        tracker.subscribe(events.append)
        provider.current["0xorder"] = record("0xorder", "active", 0)
        for present in (True, False, False, True, True):
            if present:
                provider.current["0xorder"] = record("0xorder", "active", 0)
            else:
                provider.current.pop("0xorder", None)
            asyncio.run(tracker.poll())
            clock.advance(timedelta(seconds=1))
        log = [(t.from_status, t.to_status) for t in journal.transitions("limit", "0xorder")]
    assert log == [(None, "active"), ("active", "missing"), ("missing", "active")]
    kinds = [type(e) for e in events]
    assert kinds.count(OrderDisappeared) == 1 and kinds.count(OrderReappeared) == 1
