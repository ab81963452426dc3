"""The order tracker against an in-process paper world and a real SQLite journal file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.clock import SteppedClock
from bot.config import PaperFunding, PaperSettings
from bot.engine.events import (
    FillsRecorded,
    OrderCreated,
    OrderDisappeared,
    OrderEvent,
    OrderFilled,
    OrderPartiallyFilled,
)
from bot.engine.tracker import OrderTracker
from bot.journal import Journal, OrderSnapshot
from bot.paper.world import PaperWorld, build_world

WALLET = "0x" + "3c" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
H = {"x-api-key": "k"}


@dataclass
class Rig:
    world: PaperWorld
    http: httpx.AsyncClient
    client: PanoraClient
    journal: Journal
    tracker: OrderTracker
    events: list[OrderEvent]

    @property
    def clock(self) -> SteppedClock:
        clock = self.world.market.clock
        assert isinstance(clock, SteppedClock)
        return clock


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            funding=[
                PaperFunding(wallet=WALLET, token="USDC", amount=Decimal(10_000)),
                PaperFunding(wallet=WALLET, token="APT", amount=Decimal(1_000)),
            ],
        ),
        escrow_style="escrow",
    )
    transport = httpx.ASGITransport(app=world.app)
    journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    client = PanoraClient(
        base_url="http://paper",
        api_key=SecretStr("k"),
        transport=transport,
        rate_limit_per_second=1000.0,
        rate_limit_burst=1000,
    )
    tracker = OrderTracker(client, journal, world.market.clock, WALLET, page_size=2)
    events: list[OrderEvent] = []
    tracker.subscribe(events.append)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as http:
        yield Rig(world, http, client, journal, tracker, events)
    await client.aclose()
    journal.close()


async def create_dca(rig: Rig, orders: int = 3) -> str:
    response = await rig.http.post(
        "/dca/v1/createOrder",
        headers=H,
        json={
            "chainId": "1",
            "toWalletAddress": WALLET,
            "fromTokenAddress": USDC,
            "toTokenAddress": APT,
            "fromTokenAmount": {"value": "30", "type": "total"},
            "interval": {"value": "1", "timePeriod": "hour"},
            "numberOfOrders": orders,
        },
    )
    assert response.status_code == 200, response.text
    order_id: str = response.json()["panoraTxId"]
    return order_id


async def test_a_dca_is_recorded_as_created_then_filled_with_its_fills(rig: Rig) -> None:
    order_id = await create_dca(rig)
    first = await rig.tracker.poll()
    # No delay: the first slice ran at creation, so the first poll sees it too.
    assert [type(e) for e in first.events] == [OrderCreated, FillsRecorded]
    rig.clock.advance(timedelta(hours=3))
    second = await rig.tracker.poll()
    # The last slices before the order is told filled, as they happened.
    assert [type(e) for e in second.events] == [FillsRecorded, OrderFilled]
    history = [(t.from_status, t.to_status) for t in rig.journal.transitions("dca", order_id)]
    assert history == [(None, "active"), ("active", "filled")]
    fills = [f for f in rig.journal.fills("dca", order_id) if f.type == "filled"]
    assert len(fills) == 3
    stored = rig.journal.order("dca", order_id)
    assert stored is not None and stored.status == "filled"
    # Each fill's fromTokenAmount is what the slice consumed (keeper fee included).
    assert sum((f.from_amount or Decimal(0)) for f in fills) == Decimal(30)


async def test_a_listener_that_fails_keeps_no_event_from_the_others(rig: Rig) -> None:
    def broken(event: OrderEvent) -> None:
        raise RuntimeError("a listener broke")

    rig.tracker._subscribers.insert(0, broken)  # before the rig's own listener
    await create_dca(rig)
    report = await rig.tracker.poll()  # does not raise
    assert [type(e) for e in report.events] == [OrderCreated, FillsRecorded]
    assert rig.events == report.events  # the other listener saw every event


async def test_polling_again_adds_nothing(rig: Rig) -> None:
    for _ in range(5):
        await create_dca(rig, orders=2)  # 5 orders, 3 pages of 2
    await rig.tracker.poll()
    rig.clock.advance(timedelta(hours=2))
    await rig.tracker.poll()
    again = await rig.tracker.poll()
    assert (again.transitions, again.fills, again.events) == (0, 0, [])
    assert len(rig.journal.orders(kind="dca")) == 5


async def test_a_restart_polls_without_duplicates(rig: Rig, tmp_path: Path) -> None:
    order_id = await create_dca(rig)
    await rig.tracker.poll()
    rig.clock.advance(timedelta(hours=3))
    await rig.tracker.poll()
    rig.journal.close()
    reopened = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        tracker = OrderTracker(rig.client, reopened, rig.clock, WALLET)
        report = await tracker.poll()
        assert (report.transitions, report.fills) == (0, 0)
        assert len(reopened.transitions("dca", order_id)) == 2
    finally:
        reopened.close()
        rig.journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")


async def test_a_limit_order_partially_fills_then_fills(tmp_path: Path) -> None:
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            pool_depth_usd=Decimal(20_000),
            funding=[PaperFunding(wallet=WALLET, token="APT", amount=Decimal(100))],
        ),
        escrow_style="escrow",
    )
    market = world.market
    apt, usdc = market.tokens.require(APT), market.tokens.require(USDC)
    # Sell 100 APT at a rate just under the market: the shallow pool fills it in steps.
    rate = market.pools.marginal_rate(apt, usdc, market.now) * Decimal("0.995")
    order = market.limit.create(
        owner=WALLET,
        recipient=WALLET,
        sell=apt,
        buy=usdc,
        amount=100 * 10**8,
        rate=rate.quantize(Decimal("0.0001")),
        slippage=Decimal(1),
        expiry=None,
        now=market.now,
    )
    transport = httpx.ASGITransport(app=world.app)
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        async with PanoraClient(
            base_url="http://paper",
            api_key=SecretStr("k"),
            transport=transport,
            rate_limit_per_second=1000.0,
            rate_limit_burst=1000,
        ) as client:
            tracker = OrderTracker(client, journal, market.clock, WALLET, kinds=["limit"])
            seen: list[OrderEvent] = []
            tracker.subscribe(seen.append)
            statuses = []
            for _ in range(60):
                await tracker.poll()
                stored = journal.order("limit", order.order_id)
                assert stored is not None
                statuses.append(stored.status)
                if stored.status == "filled":
                    break
                market.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
        history = [
            (t.from_status, t.to_status) for t in journal.transitions("limit", order.order_id)
        ]
    assert history == [
        (None, "active"),
        ("active", "partially_filled"),
        ("partially_filled", "filled"),
    ]
    assert any(isinstance(e, OrderPartiallyFilled) for e in seen)
    assert any(isinstance(e, OrderFilled) for e in seen)


async def test_a_live_order_the_provider_forgot_is_reported(rig: Rig) -> None:
    rig.journal.upsert_order(
        OrderSnapshot(
            kind="dca",
            order_id="0x" + "ab" * 32,
            wallet=WALLET,
            from_token=USDC,
            to_token=APT,
            status="active",
            amount_total=Decimal(5),
        ),
        observed_at=rig.world.market.now,
        source="test",
    )
    report = await rig.tracker.poll()
    assert [type(e) for e in report.events] == [OrderDisappeared]
    stored = rig.journal.order("dca", "0x" + "ab" * 32)
    assert stored is not None and stored.status == "missing"  # recorded, never deleted
    assert (await rig.tracker.poll()).events == []  # reported once, not every poll
