from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest

from bot.journal import FillRecord, Journal, JournalError, OrderObservation, OrderSnapshot

from .conftest import APT, T0, USDC, WALLET

SNAP = OrderSnapshot(
    kind="limit",
    order_id="L-1",
    wallet=WALLET,
    from_token="0x01::aptos_coin::AptosCoin",  # stored canonical
    to_token=USDC.upper().replace("0X", "0x"),
    status="active",
    amount_total=Decimal(2**128 - 1),
    rate=Decimal("0.000000000000000001"),
    strategy="lim",
    expire_at=T0 + timedelta(days=7),
)


def test_insert_then_same_observation_records_nothing_new(journal: Journal) -> None:
    change = journal.upsert_order(SNAP, observed_at=T0, source="create", raw_hash="h0")
    assert change.created and change.transition_recorded
    assert (change.from_status, change.to_status) == (None, "active")
    stored = journal.order("limit", "L-1")
    assert stored is not None
    assert stored.from_token == APT and stored.to_token == USDC
    assert stored.amount_total == 2**128 - 1
    assert stored.rate == Decimal("0.000000000000000001")
    assert stored.expire_at == T0 + timedelta(days=7)
    again = journal.upsert_order(
        SNAP, observed_at=T0 + timedelta(minutes=1), source="poll", raw_hash="h0"
    )
    assert not again.created and not again.transition_recorded
    assert again.changed_fields == ()
    assert len(journal.transitions("limit", "L-1")) == 1
    after = journal.order("limit", "L-1")
    assert after is not None
    assert after.last_seen_at == T0 + timedelta(minutes=1)
    assert after.updated_at == T0


def test_status_path_records_exactly_those_transitions(journal: Journal) -> None:
    journal.upsert_order(SNAP, observed_at=T0, source="create", raw_hash="h0")
    steps = [
        ("partially_filled", Decimal("0.5"), "h1"),
        ("partially_filled", Decimal("0.5"), "h1"),
        ("filled", Decimal("1.5"), "h2"),
        ("filled", Decimal("1.5"), "h2"),
    ]
    for minute, (status, spent, digest) in enumerate(steps, start=1):
        journal.upsert_order(
            replace(SNAP, status=status, amount_spent=spent),
            observed_at=T0 + timedelta(minutes=minute),
            source="poll",
            raw_hash=digest,
        )
    history = journal.transitions("limit", "L-1")
    assert [(t.from_status, t.to_status, t.source) for t in history] == [
        (None, "active", "create"),
        ("active", "partially_filled", "poll"),
        ("partially_filled", "filled", "poll"),
    ]
    stored = journal.order("limit", "L-1")
    assert stored is not None and stored.status == "filled"
    assert stored.amount_spent == Decimal("1.5")
    assert journal.orders(status=["filled"]) == [stored]
    assert journal.orders(exclude_status=["filled", "cancelled"]) == []


def test_unknown_status_strings_are_stored(journal: Journal) -> None:
    journal.upsert_order(SNAP, observed_at=T0, source="poll")
    change = journal.upsert_order(
        replace(SNAP, status="paused_by_keeper"),
        observed_at=T0 + timedelta(minutes=1),
        source="poll",
    )
    assert change.transition_recorded and change.to_status == "paused_by_keeper"
    assert [o.status for o in journal.orders(status=["paused_by_keeper"])] == ["paused_by_keeper"]


def test_none_never_erases_and_stale_observations_are_ignored(journal: Journal) -> None:
    journal.upsert_order(SNAP, observed_at=T0 + timedelta(minutes=5), source="poll")
    change = journal.upsert_order(
        replace(SNAP, strategy=None, status="cancelled"),
        observed_at=T0,
        source="poll",
    )
    assert change.stale and not change.transition_recorded
    stored = journal.order("limit", "L-1")
    assert stored is not None and stored.status == "active"
    journal.upsert_order(
        replace(SNAP, strategy=None, rate=None), observed_at=T0 + timedelta(minutes=6), source="p"
    )
    stored = journal.order("limit", "L-1")
    assert stored is not None
    assert stored.strategy == "lim" and stored.rate == SNAP.rate


def test_identity_conflict_is_refused(journal: Journal) -> None:
    journal.upsert_order(SNAP, observed_at=T0, source="poll")
    with pytest.raises(JournalError, match="wallet"):
        journal.upsert_order(replace(SNAP, wallet="0x" + "cd" * 32), observed_at=T0, source="poll")
    with pytest.raises(JournalError, match="dca or limit"):
        journal.upsert_order(replace(SNAP, kind="twap"), observed_at=T0, source="poll")
    with pytest.raises(JournalError, match=r"rate.*float"):
        journal.upsert_order(replace(SNAP, rate=0.1), observed_at=T0, source="poll")  # type: ignore[arg-type]


def test_dca_with_infinite_bound_and_filters(journal: Journal) -> None:
    dca = OrderSnapshot(
        kind="dca",
        order_id="L-1",  # same provider id, other kind: a different order
        wallet=WALLET,
        from_token=USDC,
        to_token=APT,
        status="active",
        amount_total=Decimal("100"),
        min_rate=Decimal("0"),
        max_rate=Decimal("Infinity"),
        interval_value=1,
        interval_period="hour",
        orders_total=10,
        orders_completed=0,
        strategy="dca",
    )
    journal.upsert_order(dca, observed_at=T0, source="create")
    journal.upsert_order(SNAP, observed_at=T0, source="create")
    stored = journal.order("dca", "L-1")
    assert stored is not None and stored.max_rate == Decimal("Infinity")
    assert [o.kind for o in journal.orders()] == ["dca", "limit"]
    assert [o.kind for o in journal.orders(kind="limit")] == ["limit"]
    assert [o.kind for o in journal.orders(strategy="dca")] == ["dca"]
    assert len(journal.orders(wallet=WALLET.replace("0x", "0x"))) == 2
    assert journal.orders(wallet="0x" + "cd" * 32) == []


def test_fills_are_deduplicated_by_tx_id_and_number(journal: Journal) -> None:
    journal.upsert_order(SNAP, observed_at=T0, source="create")
    fill = FillRecord(
        tx_id="tx-1",
        tx_number=1,
        type="filled",
        from_amount=Decimal("0.000000000000000001"),
        to_amount=Decimal(2**128 - 1),
        fee_amount=Decimal("0"),
        time=T0,
        keeper="0x00" + "ef" * 31,
        price_to_per_from=Decimal("Infinity"),
    )
    assert journal.add_fill("limit", "L-1", fill, at=T0)
    assert not journal.add_fill("limit", "L-1", fill, at=T0)
    assert journal.add_fill("limit", "L-1", replace(fill, tx_number=2), at=T0)
    no_number = FillRecord(tx_id="tx-2", type="created")
    assert journal.add_fill("limit", "L-1", no_number, at=T0)
    assert not journal.add_fill("limit", "L-1", no_number, at=T0)
    fills = journal.fills("limit", "L-1")
    assert [(f.tx_id, f.tx_number) for f in fills] == [("tx-1", 1), ("tx-1", 2), ("tx-2", None)]
    assert fills[0].from_amount == Decimal("0.000000000000000001")
    assert fills[0].to_amount == 2**128 - 1
    assert fills[0].keeper == "0x" + "00ef" + "ef" * 30
    with pytest.raises(JournalError, match="no limit order"):
        journal.add_fill("limit", "missing", fill, at=T0)


def test_observe_orders_batch_is_atomic(journal: Journal) -> None:
    fills = [FillRecord(tx_id="a", tx_number=1, type="filled")]
    changes = journal.observe_orders(
        [
            OrderObservation(SNAP, "h", fills),
            OrderObservation(replace(SNAP, order_id="L-2"), "h2", fills + fills),
        ],
        observed_at=T0,
        source="poll",
    )
    assert [(c.order_id, c.created, c.fills_added) for c in changes] == [
        ("L-1", True, 1),
        ("L-2", True, 1),
    ]
    with pytest.raises(JournalError):
        journal.observe_orders(
            [
                OrderObservation(replace(SNAP, order_id="L-3")),
                OrderObservation(replace(SNAP, wallet="0x" + "cd" * 32)),  # conflicts: L-1
            ],
            observed_at=T0,
            source="poll",
        )
    assert journal.order("limit", "L-3") is None


def test_same_order_twice_in_one_batch(journal: Journal) -> None:
    fill = FillRecord(tx_id="t", tx_number=None, type="created")
    changes = journal.observe_orders(
        [
            OrderObservation(SNAP, "h0", [fill]),
            OrderObservation(replace(SNAP, status="filled"), "h1", [fill, fill]),
        ],
        observed_at=T0,
        source="poll",
    )
    assert [(c.created, c.from_status, c.to_status, c.transition_recorded) for c in changes] == [
        (True, None, "active", True),
        (False, "active", "filled", True),
    ]
    assert [c.fills_added for c in changes] == [1, 0]
    assert [(t.from_status, t.to_status) for t in journal.transitions("limit", "L-1")] == [
        (None, "active"),
        ("active", "filled"),
    ]


def test_a_flip_flop_is_logged_as_a_chain_ending_at_the_current_status(
    journal: Journal,
) -> None:
    journal.upsert_order(SNAP, observed_at=T0, source="poll", raw_hash="a")
    for minute, status in enumerate(["filled", "active", "filled"], start=1):
        journal.upsert_order(
            replace(SNAP, status=status),
            observed_at=T0 + timedelta(minutes=minute),
            source="poll",
            raw_hash="b" if status == "filled" else "a",
        )
    assert [(t.from_status, t.to_status) for t in journal.transitions("limit", "L-1")] == [
        (None, "active"),
        ("active", "filled"),
        ("filled", "active"),
        ("active", "filled"),
    ]
    stored = journal.order("limit", "L-1")
    assert stored is not None and stored.status == "filled"


def test_fills_by_order_groups_a_strategys_fills_in_one_read(journal: Journal) -> None:
    mine = replace(SNAP, strategy="s1")
    other = replace(SNAP, order_id="L-2", strategy="s2")
    third = replace(SNAP, order_id="L-3", strategy="s1")
    for snap in (mine, other, third):
        journal.upsert_order(snap, observed_at=T0, source="create")
    for order_id, tx in (("L-1", "t1"), ("L-2", "t2"), ("L-1", "t3"), ("L-3", "t4")):
        journal.add_fill(
            "limit",
            order_id,
            FillRecord(tx_id=tx, type="filled", tx_number=1, from_amount=Decimal("1.5")),
            at=T0,
        )
    found = journal.fills_by_order("s1")
    assert {k: [f.tx_id for f in v] for k, v in found.items()} == {
        ("limit", "L-1"): ["t1", "t3"],
        ("limit", "L-3"): ["t4"],
    }
    assert found[("limit", "L-1")][0].from_amount == Decimal("1.5")
    assert journal.fills_by_order("nobody") == {}
