"""The DCA engine: schedules, amounts, bounds, cancel, pending orders, money conservation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from bot.paper.core.dca import DcaOrder
from bot.paper.core.ledger import InsufficientFunds
from bot.paper.core.orders import (
    NotOwner,
    OrderIds,
    OrderStateError,
    UnknownOrder,
    add_period,
    human_rate,
)
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
)

HOUR = timedelta(hours=1)


class Model:
    """An independent constant-product model of one fresh pool (to check exact outputs)."""

    def __init__(self, sell_usd: Decimal, buy_usd: Decimal, depth: Decimal = Decimal(2000000)):
        self.x = int((depth / sell_usd).scaleb(APT.decimals))
        self.y = int((depth / buy_usd).scaleb(USDC.decimals))

    def swap(self, amount_in: int, platform_bps: int = 10, pool_bps: int = 25) -> int:
        net = amount_in - amount_in * platform_bps // 10_000
        effective = net * (10_000 - pool_bps)
        out = self.y * effective // (self.x * 10_000 + effective)
        self.x += net
        self.y -= out
        return out


def flat_world(**kwargs: object) -> World:
    oracle = StepOracle(
        {
            APT.address: [(T0 - timedelta(days=1), Decimal(10))],
            USDC.address: [(T0 - timedelta(days=1), Decimal(1))],
        }
    )
    world = World(oracle, **kwargs)  # type: ignore[arg-type]
    world.ledger.mint(ALICE, APT.address, apt("1000"))
    return world


def create(world: World, **overrides: object) -> DcaOrder:
    params: dict[str, object] = {
        "owner": ALICE,
        "recipient": BOB,
        "sell": APT,
        "buy": USDC,
        "amount": apt("10"),
        "amount_type": "total",
        "orders": 4,
        "interval": (1, "hour"),
        "delay": None,
        "min_rate": None,
        "max_rate": None,
        "slippage": Decimal("1"),
        "now": world.now,
    }
    params.update(overrides)
    return world.dca.create(**params)  # type: ignore[arg-type]


def test_n_orders_complete_in_exactly_n_intervals_with_exact_amounts() -> None:
    world = flat_world()
    total = apt("10") + 3
    order = create(world, amount=total)
    assert order.status == "active" and order.per_order == apt("2.5") and order.remainder == 3
    assert order.next_at == T0 and order.estimated_completion == T0 + 3 * HOUR
    assert world.ledger.balance(ALICE, APT.address) == apt("990") - 3
    assert world.ledger.balance(order.escrow, APT.address) == total

    world.advance(T0 + 3 * HOUR - minutes(1))
    assert order.orders_done == 3 and order.next_at == T0 + 3 * HOUR
    world.advance(T0 + 3 * HOUR)
    assert order.status == "filled" and order.orders_done == 4 and order.orders_executed == 4
    assert order.next_at is None and order.remaining_orders == 0

    model = Model(Decimal(10), Decimal(1))
    slices = [apt("2.5")] * 3 + [apt("2.5") + 3]
    keepers = [s * 5 // 10_000 for s in slices]
    outs = [model.swap(s - k) for s, k in zip(slices, keepers, strict=True)]
    assert order.spent == total and order.withdrawn == 0 and order.balance == 0
    assert order.received == sum(outs) and order.fees_paid == sum(keepers)
    assert world.ledger.balance(BOB, USDC.address) == sum(outs)
    assert world.ledger.balance(KEEPER, APT.address) == sum(keepers)
    assert world.ledger.balance(order.escrow, APT.address) == 0
    swapped = total - sum(keepers)
    assert order.avg_price_buy_per_sell == human_rate(sum(outs), USDC, swapped, APT)
    assert order.avg_price_sell_per_buy == human_rate(swapped, APT, sum(outs), USDC)
    assert Decimal("9.9") < order.avg_price_buy_per_sell < Decimal(10)

    kinds = [(d.type, d.time, d.tx_number, d.attempt_number) for d in order.details]
    assert kinds == [("created", T0, 1, 0)] + [
        ("filled", T0 + i * HOUR, i + 2, i + 1) for i in range(4)
    ]
    fills = order.details[1:]
    assert [d.to_amount for d in fills] == outs
    assert [d.from_amount for d in fills] == slices
    assert [d.fee_amount for d in fills] == keepers
    assert all(d.keeper is None for d in fills)
    assert len({d.tx_id for d in order.details}) == 5
    assert world.dca.live_count == 0 and len(world.events) == 0
    world.check_money([ALICE, BOB])


def test_perorder_amount_multiplies_and_first_slice_waits_for_processing() -> None:
    world = flat_world()
    order = create(world, amount=apt("1"), amount_type="perorder", orders=3)
    assert order.total == apt("3") and order.per_order == apt("1") and order.remainder == 0
    assert order.details[-1].type == "created" and order.orders_done == 0  # not run in create
    world.advance(T0)
    assert order.orders_done == 1
    world.advance(T0 + 5 * HOUR)
    assert order.status == "filled" and order.spent == apt("3")


def test_delay_shifts_the_first_slice() -> None:
    world = flat_world()
    order = create(world, delay=(2, "day"), orders=2)
    assert order.next_at == T0 + timedelta(days=2)
    world.advance(T0 + timedelta(days=2) - minutes(1))
    assert order.orders_done == 0
    world.advance(T0 + timedelta(days=3))
    assert [d.time for d in order.details if d.type == "filled"] == [
        T0 + timedelta(days=2),
        T0 + timedelta(days=2) + HOUR,
    ]
    assert order.status == "filled"


def test_add_period_month_clamps_to_month_end() -> None:
    jan31 = datetime(2025, 1, 31, 10, 30, tzinfo=UTC)
    assert add_period(jan31, 1, "month") == datetime(2025, 2, 28, 10, 30, tzinfo=UTC)
    assert add_period(jan31, 2, "month") == datetime(2025, 3, 31, 10, 30, tzinfo=UTC)
    assert add_period(jan31, 13, "month") == datetime(2026, 2, 28, 10, 30, tzinfo=UTC)
    leap = datetime(2024, 1, 30, tzinfo=UTC)
    assert add_period(leap, 1, "month") == datetime(2024, 2, 29, tzinfo=UTC)
    assert add_period(datetime(2024, 12, 15, tzinfo=UTC), 1, "month").year == 2025
    assert add_period(T0, 2, "week") == T0 + timedelta(days=14)
    assert add_period(T0, 0, "minute") == T0
    with pytest.raises(ValueError):
        add_period(T0, 1, "year")


def test_monthly_interval_across_month_ends() -> None:
    world = flat_world()
    start = datetime(2025, 1, 31, 9, tzinfo=UTC)
    world.now = start
    order = create(world, interval=(1, "month"), orders=4)
    world.advance(datetime(2025, 6, 1, tzinfo=UTC))
    times = [d.time for d in order.details if d.type == "filled"]
    assert times == [
        start,
        datetime(2025, 2, 28, 9, tzinfo=UTC),
        datetime(2025, 3, 31, 9, tzinfo=UTC),
        datetime(2025, 4, 30, 9, tzinfo=UTC),
    ]
    assert order.status == "filled"


def bumpy_world() -> World:
    """APT at $10, $5 during the second hour, $10 again after."""
    day = T0 - timedelta(days=1)
    oracle = StepOracle(
        {
            APT.address: [
                (day, Decimal(10)),
                (T0 + HOUR, Decimal(5)),
                (T0 + 2 * HOUR, Decimal(10)),
            ],
            USDC.address: [(day, Decimal(1))],
        }
    )
    world = World(oracle)
    world.ledger.mint(ALICE, APT.address, apt("1000"))
    return world


def test_min_rate_skips_a_slice_and_refunds_the_exact_remainder() -> None:
    world = bumpy_world()
    order = create(world, amount=apt("3") + 2, orders=3, min_rate=Decimal(8))
    world.advance(T0 + 5 * HOUR)
    assert [d.type for d in order.details] == [
        "created",
        "filled",
        "attempted",
        "filled",
        "cancelled",
    ]
    attempted = order.details[2]
    assert attempted.time == T0 + HOUR and attempted.to_amount == 0
    assert attempted.price_to_per_from is not None and attempted.price_to_per_from < 5
    assert attempted.attempt_number == 2 and attempted.fee_amount == 0
    assert order.status == "refunded" and order.orders_done == 3 and order.orders_executed == 2
    assert order.withdrawn == apt("1") and order.details[-1].from_amount == apt("1")
    assert order.spent == apt("2") + 2 and order.balance == 0
    assert world.ledger.balance(ALICE, APT.address) == apt("998") - 2
    world.check_money([ALICE, BOB])


def test_max_rate_skips_expensive_slices() -> None:
    world = bumpy_world()
    order = create(world, orders=3, max_rate=Decimal(7))
    world.advance(T0 + 5 * HOUR)
    assert [d.type for d in order.details] == [
        "created",
        "attempted",
        "filled",
        "attempted",
        "cancelled",
    ]
    assert order.status == "refunded" and order.withdrawn == 2 * (apt("10") // 3) + 1
    world.check_money([ALICE, BOB])


def test_unbounded_rates_and_invalid_requests() -> None:
    world = flat_world()
    order = create(world, min_rate=Decimal(0), max_rate=Decimal("Infinity"))
    assert order.min_rate is None and order.max_rate is None
    bad: list[dict[str, object]] = [
        {"orders": 0},
        {"amount": 3, "orders": 4},
        {"amount": 0},
        {"min_rate": Decimal(5), "max_rate": Decimal(4)},
        {"max_rate": Decimal(0)},
        {"interval": (0, "hour")},
        {"interval": (1, "year")},
        {"delay": (-1, "day")},
        {"buy": APT},
        {"slippage": Decimal(101)},
        {"amount_type": "each"},
    ]
    for overrides in bad:
        with pytest.raises(ValueError):
            create(world, **overrides)
    assert world.dca.live_count == 1


def test_too_small_slices_fail_and_are_refunded() -> None:
    world = flat_world()
    order = create(world, amount=3, orders=3)
    world.advance(T0 + 5 * HOUR)
    assert [d.type for d in order.details] == ["created", "failed", "failed", "failed", "cancelled"]
    assert order.status == "refunded" and order.withdrawn == 3 and order.received == 0
    assert order.avg_price_buy_per_sell is None


def test_cancel_midway_refunds_the_exact_balance() -> None:
    world = flat_world()
    order = create(world)
    world.advance(T0 + HOUR + minutes(30))
    assert order.orders_done == 2
    with pytest.raises(NotOwner):
        world.dca.cancel(order.order_id, world.now, owner=BOB)
    world.dca.cancel(order.order_id, world.now, owner=ALICE)
    assert order.status == "cancelled" and order.next_at is None
    assert order.withdrawn == apt("5") and order.balance == 0
    assert order.details[-1].type == "cancelled" and order.details[-1].from_amount == apt("5")
    assert len(world.events) == 0 and world.dca.live_count == 0
    world.advance(T0 + 10 * HOUR)
    assert order.orders_done == 2
    with pytest.raises(OrderStateError):
        world.dca.cancel(order.order_id, world.now)
    with pytest.raises(UnknownOrder):
        world.dca.cancel("0xdead", world.now)
    world.check_money([ALICE, BOB])


def test_insufficient_funds_records_nothing() -> None:
    world = flat_world()
    with pytest.raises(InsufficientFunds):
        create(world, amount=apt("5000"))
    assert world.dca.orders_of(ALICE) == [] and world.dca.live_count == 0
    assert len(world.events) == 0
    world.check_money([ALICE, BOB])


def test_pending_activate_and_drop() -> None:
    world = flat_world()
    order = create(world, escrow_now=False)
    assert order.status == "pending" and order.details == []
    assert world.dca.orders_of(ALICE) == [] and len(world.events) == 0
    assert world.ledger.balance(ALICE, APT.address) == apt("1000")
    with pytest.raises(OrderStateError):
        world.dca.activate(order.order_id, T0)
    with pytest.raises(OrderStateError):
        world.dca.cancel(order.order_id, T0)
    world.ledger.transfer(APT.address, ALICE, order.escrow, order.total)  # the deposit
    world.now = T0 + minutes(5)
    world.dca.activate(order.order_id, world.now)
    assert order.status == "active" and order.created_at == T0 + minutes(5)
    assert order.next_at == T0 + minutes(5) and order.details[0].type == "created"
    assert world.dca.orders_of(BOB) == [order] and world.dca.orders_of(ALICE) == [order]
    with pytest.raises(OrderStateError):
        world.dca.activate(order.order_id, world.now)

    other = create(world, escrow_now=False)
    world.dca.drop_pending(other.order_id)
    with pytest.raises(UnknownOrder):
        world.dca.get(other.order_id)
    world.advance(T0 + 4 * HOUR)
    assert order.status == "filled"
    world.check_money([ALICE, BOB])


def test_listing_is_newest_first_and_ids_are_deterministic() -> None:
    world = flat_world()
    first = create(world)
    world.now = T0 + minutes(1)
    second = create(world, recipient=ALICE)
    assert world.dca.orders_of(ALICE) == [second, first]
    assert world.dca.orders_of(BOB) == [first]
    ids = OrderIds("test")
    assert first.order_id == ids.new("dca") and second.order_id == ids.new("dca")
    assert len(first.order_id) == 66 and first.details[0].tx_id == ids.tx(first.order_id, 1)
