"""The limit engine: crossings, depth, expiry, cancel, pending orders; both engines together
under random operations (money conserved) and under two time drivers (same results)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from decimal import Decimal, localcontext

import pytest

from bot.paper.core.dca import DcaOrder
from bot.paper.core.ledger import InsufficientFunds
from bot.paper.core.limit import LimitOrder
from bot.paper.core.orders import KEEPER_WALLET, NotOwner, OrderStateError, UnknownOrder
from tests.support.paper_engines import (
    ALICE,
    APT,
    BOB,
    KEEPER,
    T0,
    USDC,
    StepOracle,
    World,
    apt,
    minutes,
    usdc,
)

HOUR = timedelta(hours=1)
DAY0 = T0 - timedelta(days=1)


def world_with(apt_path: list[tuple[datetime, str]], **kwargs: object) -> World:
    oracle = StepOracle(
        {
            APT.address: [(DAY0, Decimal(10))] + [(t, Decimal(p)) for t, p in apt_path],
            USDC.address: [(DAY0, Decimal(1))],
        }
    )
    world = World(oracle, **kwargs)  # type: ignore[arg-type]
    world.ledger.mint(ALICE, APT.address, apt("1000"))
    world.ledger.mint(ALICE, USDC.address, usdc("100000"))
    return world


def sell_apt(world: World, amount: int, rate: str, **overrides: object) -> LimitOrder:
    params: dict[str, object] = {
        "owner": ALICE,
        "recipient": BOB,
        "sell": APT,
        "buy": USDC,
        "amount": amount,
        "rate": Decimal(rate),
        "slippage": Decimal("0.5"),
        "expiry": None,
        "now": world.now,
    }
    params.update(overrides)
    return world.limit.create(**params)  # type: ignore[arg-type]


def fresh_out(amount_in: int, apt_usd: str, platform_bps: int = 10) -> int:
    """Exact output of a fresh default pool (2M USD per side) selling APT for USDC."""
    with localcontext() as ctx:
        ctx.prec = 60
        x = int((Decimal(2000000) / Decimal(apt_usd)).scaleb(8))
        y = int(Decimal(2000000).scaleb(6))
    effective = (amount_in - amount_in * platform_bps // 10_000) * 9975
    return y * effective // (x * 10_000 + effective)


def test_fills_at_the_crossing_time_not_before() -> None:
    # rate 11 needs usd ratio ≥ 11 / (0.9975 × 0.999) ≈ 11.0386
    path = [(T0 + HOUR, "11.03"), (T0 + 2 * HOUR, "11.2"), (T0 + 3 * HOUR, "10")]
    world = world_with(path)
    order = sell_apt(world, apt("1"), "11")
    assert world.limit.next_crossing(T0, T0 + 5 * HOUR) == T0  # unchecked new order
    world.advance(T0)
    assert world.limit.next_crossing(T0, T0 + 5 * HOUR) == T0 + 2 * HOUR
    world.advance(T0 + 2 * HOUR - minutes(1))
    assert order.status == "active" and order.fills == 0
    world.advance(T0 + 5 * HOUR)
    assert order.status == "filled" and order.fills == 1 and order.balance == 0
    keeper = apt("1") * 5 // 10_000
    out = fresh_out(apt("1") - keeper, "11.2")
    fill = order.details[-1]
    assert (fill.type, fill.time, fill.keeper) == ("filled", T0 + 2 * HOUR, KEEPER_WALLET)
    assert (fill.from_amount, fill.to_amount, fill.fee_amount) == (apt("1"), out, keeper)
    assert order.spent == apt("1") and order.received == out and order.fees_paid == keeper
    assert world.ledger.balance(BOB, USDC.address) == out
    assert world.ledger.balance(KEEPER, APT.address) == keeper
    assert order.avg_price_buy_per_sell is not None and order.avg_price_buy_per_sell >= 11
    assert fill.price_to_per_from == order.avg_price_buy_per_sell
    assert world.limit.live_count == 0 and world.limit.next_crossing(world.now, T0 + DAY) is None
    world.check_money([ALICE, BOB])


DAY = timedelta(days=1)


def test_next_crossing_is_cached_and_extended_not_rescanned() -> None:
    world = world_with([(T0 + 5 * HOUR, "12")])
    calls: list[tuple[datetime, datetime]] = []
    original = world.oracle.first_ratio_at_least

    def spy(num: str, den: str, threshold: Decimal, after: datetime, until: datetime):  # type: ignore[no-untyped-def]
        calls.append((after, until))
        return original(num, den, threshold, after, until)

    world.oracle.first_ratio_at_least = spy  # type: ignore[method-assign]
    sell_apt(world, apt("1"), "11")
    world.advance(T0)
    calls.clear()
    assert world.limit.next_crossing(T0, T0 + HOUR) is None
    assert world.limit.next_crossing(T0 + minutes(10), T0 + HOUR) is None
    assert world.limit.next_crossing(T0 + minutes(20), T0 + 6 * HOUR) == T0 + 5 * HOUR
    assert world.limit.next_crossing(T0 + HOUR, T0 + 2 * HOUR) is None
    assert calls == [(T0, T0 + HOUR), (T0 + HOUR, T0 + 6 * HOUR)]


def test_partial_fills_when_depth_is_short_then_completes() -> None:
    path = [(T0 + HOUR, "11"), (T0 + 90 * minutes(1), "11"), (T0 + 2 * HOUR, "11.5")]
    path.append((T0 + 3 * HOUR, "12"))
    world = world_with(path, depth_usd=Decimal(1000))
    order = sell_apt(world, apt("20"), "10.5")
    world.advance(T0 + HOUR)
    assert order.status == "partially_filled" and order.fills == 1
    assert 0 < order.balance < apt("20")
    # the pool now sits at the rate: no more depth at this price point
    marginal = world.pools.marginal_rate(APT, USDC, T0 + HOUR) * Decimal("0.999")
    assert marginal < Decimal("10.5") * Decimal("1.0001")
    world.advance(T0 + 2 * HOUR - minutes(1))
    assert order.fills == 2  # 01:30 is a new price point (same price, re-anchored pool)
    world.advance(T0 + 3 * HOUR)
    assert order.status == "filled" and order.fills == 4 and order.balance == 0
    fills = [d for d in order.details if d.type == "filled"]
    assert [d.time for d in fills] == [
        T0 + HOUR,
        T0 + 90 * minutes(1),
        T0 + 2 * HOUR,
        T0 + 3 * HOUR,
    ]
    for d in fills:
        assert d.price_to_per_from is not None and d.price_to_per_from >= Decimal("10.5")
    assert sum(d.from_amount for d in fills) == apt("20") == order.spent
    assert sum(d.to_amount for d in fills) == order.received
    world.check_money([ALICE, BOB])


def test_lowest_rate_fills_first() -> None:
    world = world_with([(T0 + HOUR, "11")], depth_usd=Decimal(1000))
    high = sell_apt(world, apt("20"), "10.8")
    low = sell_apt(world, apt("20"), "10.5")
    world.advance(T0 + 2 * HOUR)
    assert low.status == "partially_filled" and high.fills == 0 and high.status == "active"


def test_buying_apt_with_usdc_when_it_gets_cheap() -> None:
    world = world_with([(T0 + HOUR, "9.5"), (T0 + 2 * HOUR, "8")])
    order = world.limit.create(
        owner=ALICE,
        recipient=ALICE,
        sell=USDC,
        buy=APT,
        amount=usdc("100"),
        rate=Decimal("0.12"),
        slippage=Decimal(1),
        expiry=None,
        now=T0,
    )
    world.advance(T0 + 2 * HOUR - minutes(1))
    assert order.fills == 0
    world.advance(T0 + 3 * HOUR)
    assert order.status == "filled" and order.details[-1].time == T0 + 2 * HOUR
    assert order.avg_price_buy_per_sell is not None and order.avg_price_buy_per_sell >= Decimal(
        "0.12"
    )
    assert order.avg_price_sell_per_buy is not None and order.avg_price_sell_per_buy <= Decimal(9)
    world.check_money([ALICE, BOB])


def test_expiry_refunds_the_balance() -> None:
    path = [(T0 + HOUR, "11"), (T0 + 3 * HOUR, "11")]
    world = world_with(path, depth_usd=Decimal(1000))
    never = sell_apt(world, apt("2"), "20", expiry=(30, "minute"))
    partial = sell_apt(world, apt("20"), "10.5", expiry=(3, "hour"))
    assert partial.expire_at == T0 + 3 * HOUR
    world.advance(T0 + 5 * HOUR)
    assert never.status == "expired" and never.withdrawn == apt("2") and never.fills == 0
    assert [(d.type, d.time) for d in never.details] == [
        ("created", T0),
        ("cancelled", T0 + 30 * minutes(1)),
    ]
    # expiring at 03:00 it does not fill at the 03:00 price point
    assert partial.status == "expired" and partial.fills == 1
    assert partial.withdrawn == apt("20") - partial.spent and partial.balance == 0
    assert partial.details[-1].from_amount == partial.withdrawn
    assert world.limit.live_count == 0 and len(world.events) == 0
    world.check_money([ALICE, BOB])


def test_cancel_refunds_and_checks_state() -> None:
    world = world_with([(T0 + HOUR, "11")], depth_usd=Decimal(1000))
    order = sell_apt(world, apt("20"), "10.5", expiry=(1, "day"))
    world.advance(T0 + 2 * HOUR)
    assert order.status == "partially_filled"
    balance = order.balance
    with pytest.raises(NotOwner):
        world.limit.cancel(order.order_id, world.now, owner=BOB)
    world.limit.cancel(order.order_id, world.now, owner=ALICE)
    assert order.status == "cancelled" and order.withdrawn == balance and order.balance == 0
    assert order.details[-1].type == "cancelled" and len(world.events) == 0
    with pytest.raises(OrderStateError):
        world.limit.cancel(order.order_id, world.now)
    with pytest.raises(UnknownOrder):
        world.limit.get("0x1")
    world.check_money([ALICE, BOB])


def test_pending_activate_drop_and_insufficient_funds() -> None:
    world = world_with([(T0 + HOUR, "12")])
    with pytest.raises(InsufficientFunds):
        sell_apt(world, apt("5000"), "11")
    assert world.limit.live_count == 0 and world.limit.orders_of(ALICE) == []
    order = sell_apt(world, apt("1"), "11", escrow_now=False, expiry=(2, "hour"))
    assert order.status == "pending" and world.limit.orders_of(BOB) == []
    assert world.limit.next_crossing(T0, T0 + DAY) is None
    with pytest.raises(OrderStateError):
        world.limit.activate(order.order_id, T0)
    world.ledger.transfer(APT.address, ALICE, order.escrow, apt("1"))
    with pytest.raises(OrderStateError):
        world.limit.drop_pending(order.order_id)  # funds landed: activate instead
    world.now = T0 + minutes(10)
    world.limit.activate(order.order_id, world.now)
    assert order.status == "active" and order.expire_at == T0 + minutes(130)
    assert world.limit.orders_of(BOB) == [order]
    dropped = sell_apt(world, apt("1"), "11", escrow_now=False)
    world.limit.drop_pending(dropped.order_id)
    with pytest.raises(UnknownOrder):
        world.limit.drop_pending(dropped.order_id)
    world.advance(T0 + 2 * HOUR)
    assert order.status == "filled" and order.details[-1].time == T0 + HOUR
    world.check_money([ALICE, BOB])


def test_dust_is_refunded() -> None:
    world = world_with([])
    order = sell_apt(world, 1, "0.00001")
    world.advance(T0 + HOUR)
    assert order.status == "refunded" and order.withdrawn == 1 and order.fills == 0
    with pytest.raises(ValueError):
        sell_apt(world, apt("1"), "0")
    with pytest.raises(ValueError):
        sell_apt(world, apt("1"), "11", expiry=(0, "hour"))


# -- both engines together --------------------------------------------------------------


def walk_oracle(seed: int, hours: int) -> StepOracle:
    """APT moves every 7 minutes, USDC every 61 minutes; all points on whole minutes."""
    rng = random.Random(seed)
    apt_path, usdc_path = [(DAY0, Decimal(10))], [(DAY0, Decimal(1))]
    for k in range(1, hours * 60 // 7 + 1):
        step = Decimal(rng.randint(-150, 150)) / 10_000
        apt_path.append(
            (T0 + minutes(7 * k), (apt_path[-1][1] * (1 + step)).quantize(Decimal("0.0001")))
        )
    for k in range(1, hours + 1):
        step = Decimal(rng.randint(-10, 10)) / 10_000
        usdc_path.append((T0 + minutes(61 * k), (1 + step)))
    return StepOracle({APT.address: apt_path, USDC.address: usdc_path})


Op = tuple[int, str, dict[str, object]]


def random_ops(seed: int, hours: int, count: int) -> list[Op]:
    rng = random.Random(seed)
    times = sorted(rng.randrange(0, hours * 60) for _ in range(count))
    ops: list[Op] = []
    for minute in times:
        kind = rng.choice(["dca", "dca", "limit", "limit", "pending", "cancel"])
        ops.append(
            (
                minute,
                kind,
                {
                    "side": rng.choice(["sell_apt", "buy_apt"]),
                    "size": rng.randint(1, 400),
                    "orders": rng.randint(1, 5),
                    "interval": rng.randint(5, 50),
                    "bound": rng.random() < 0.3,
                    "edge": rng.randint(-100, 300),
                    "expiry": rng.choice([None, 30, 90, 200]),
                    "pick": rng.randrange(1000),
                },
            )
        )
    return ops


def apply_op(world: World, op: Op, ids: list[str]) -> None:
    _, kind, p = op
    sell, buy = (APT, USDC) if p["side"] == "sell_apt" else (USDC, APT)
    size = int(p["size"])  # type: ignore[call-overload]
    amount = apt(str(size)) // 10 if sell is APT else usdc(str(size * 5))
    if size > 390:
        amount *= 1000  # more than the wallet holds
    try:
        if kind == "dca":
            fair = world.oracle.usd(sell.address, world.now) / world.oracle.usd(
                buy.address, world.now
            )
            order = world.dca.create(
                owner=ALICE,
                recipient=BOB,
                sell=sell,
                buy=buy,
                amount=amount,
                amount_type="total",
                orders=int(p["orders"]),  # type: ignore[call-overload]
                interval=(int(p["interval"]), "minute"),
                delay=None,  # type: ignore[call-overload]
                min_rate=fair * Decimal("0.99") if p["bound"] else None,
                max_rate=None,
                slippage=Decimal(1),
                now=world.now,
            )
            ids.append(order.order_id)
        elif kind in ("limit", "pending"):
            fair = world.oracle.usd(sell.address, world.now) / world.oracle.usd(
                buy.address, world.now
            )
            rate = (fair * (1 + Decimal(int(p["edge"])) / 10_000)).quantize(Decimal("0.000001"))  # type: ignore[call-overload]
            expiry = None if p["expiry"] is None else (int(p["expiry"]), "minute")  # type: ignore[call-overload]
            limit = world.limit.create(
                owner=ALICE,
                recipient=BOB,
                sell=sell,
                buy=buy,
                amount=amount,
                rate=rate,
                slippage=Decimal(1),
                expiry=expiry,
                now=world.now,
                escrow_now=kind == "limit",
            )
            if kind == "pending":
                world.ledger.transfer(sell.address, ALICE, limit.escrow, amount)
                world.limit.activate(limit.order_id, world.now)
            ids.append(limit.order_id)
        else:
            live = [i for i in ids if live_order(world, i).status in ("active", "partially_filled")]
            if live:
                target = live[int(p["pick"]) % len(live)]  # type: ignore[call-overload]
                engine = world.dca if target in world.dca._orders else world.limit
                engine.cancel(target, world.now, owner=ALICE)
    except InsufficientFunds:
        pass


def live_order(world: World, order_id: str) -> DcaOrder | LimitOrder:
    try:
        return world.dca.get(order_id)
    except UnknownOrder:
        return world.limit.get(order_id)


def check_orders(world: World, ids: list[str]) -> None:
    world.check_money([ALICE, BOB])
    for order_id in ids:
        order = live_order(world, order_id)
        kinds = {d.type for d in order.details}
        assert kinds <= {"created", "filled", "attempted", "failed", "cancelled"}
        assert order.spent == sum(d.from_amount for d in order.details if d.type == "filled")
        assert order.received == sum(d.to_amount for d in order.details if d.type == "filled")
        assert order.fees_paid == sum(d.fee_amount for d in order.details if d.type == "filled")
        assert order.withdrawn == sum(d.from_amount for d in order.details if d.type == "cancelled")
        assert [d.tx_number for d in order.details] == list(range(1, len(order.details) + 1))
        if order.status not in ("active", "partially_filled"):
            assert order.balance == 0
        if isinstance(order, LimitOrder):
            for d in order.details:
                if d.type == "filled":
                    assert d.price_to_per_from is not None and d.price_to_per_from >= order.rate


def fresh_world(seed: int, hours: int) -> World:
    world = World(walk_oracle(seed, hours), depth_usd=Decimal(20000))
    world.ledger.mint(ALICE, APT.address, apt("500"))
    world.ledger.mint(ALICE, USDC.address, usdc("5000"))
    return world


def test_random_operations_conserve_money() -> None:
    hours = 12
    world = fresh_world(3, hours)
    ids: list[str] = []
    for op in random_ops(11, hours, 150):
        world.advance(T0 + minutes(op[0]))
        check_orders(world, ids)
        apply_op(world, op, ids)
        check_orders(world, ids)
    world.advance(T0 + (hours + 6) * HOUR)
    check_orders(world, ids)
    statuses = {live_order(world, i).status for i in ids}
    assert {"filled", "cancelled", "expired"} <= statuses
    assert any(live_order(world, i).fills > 1 for i in ids if i in world.limit._orders)  # type: ignore[union-attr]


def test_jumping_and_minute_stepping_agree() -> None:
    hours = 8
    ops = random_ops(5, hours, 80)
    worlds = [fresh_world(9, hours), fresh_world(9, hours)]
    ids: list[list[str]] = [[], []]
    for op in ops:
        worlds[0].advance(T0 + minutes(op[0]))
        worlds[1].advance_by_minute(T0 + minutes(op[0]))
        for world, known in zip(worlds, ids, strict=True):
            apply_op(world, op, known)
    worlds[0].advance(T0 + (hours + 4) * HOUR)
    worlds[1].advance_by_minute(T0 + (hours + 4) * HOUR)
    assert ids[0] == ids[1] and len(ids[0]) > 20
    for order_id in ids[0]:
        assert live_order(worlds[0], order_id) == live_order(worlds[1], order_id)
    assert worlds[0].ledger.dump() == worlds[1].ledger.dump()
    orders = [live_order(worlds[0], i) for i in ids[0]]
    assert sum(1 for o in orders for d in o.details if d.type == "filled") > 30
    assert any(isinstance(o, LimitOrder) and o.fills > 1 for o in orders)
    assert any(isinstance(o, DcaOrder) and o.orders_executed > 1 for o in orders)
