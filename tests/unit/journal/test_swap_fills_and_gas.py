"""Journal revision 0005: gas unit prices, balance changes, swap fills, provider USD values."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import text

from bot.journal import FillRecord, Journal, JournalError, OrderSnapshot, SwapFillRecord, migrate
from bot.journal.db import make_engine
from tests.unit.journal.conftest import APT, T0, USDC, WALLET

HASH = "0x" + "12" * 32


def _swap_intent(journal: Journal, key: str = "k") -> int:
    intent = journal.record_intent("s", WALLET, "swap", key, {"sell": "USDC"}, at=T0)
    return intent.id


def test_a_transaction_keeps_its_gas_unit_price_balance_changes_and_commit_time(
    journal: Journal,
) -> None:
    journal.record_transaction(HASH, WALLET, 3, "{}", at=T0)
    before = journal.transaction(HASH)
    assert before is not None and before.gas_fee is None and before.balance_changes is None
    committed = T0 + timedelta(seconds=2)
    journal.update_transaction(
        HASH,
        "committed",
        at=committed,
        gas_used=1227,
        gas_unit_price=100,
        balance_changes={USDC: -100_000_000, "0x1::aptos_coin::AptosCoin": 2_263_533_804},
        committed_at=committed,
    )
    # a repeat without them erases nothing
    view = journal.update_transaction(HASH, "committed", at=committed + timedelta(seconds=1))
    assert (view.gas_used, view.gas_unit_price, view.gas_fee) == (1227, 100, 122_700)
    assert view.balance_changes == {APT: 2_263_533_804, USDC: -100_000_000}
    assert view.committed_at == committed


@pytest.mark.parametrize(
    ("field", "value"),
    [("gas_unit_price", -1), ("gas_unit_price", True), ("balance_changes", {APT: "5"})],
)
def test_a_bad_gas_figure_or_balance_change_is_refused(
    journal: Journal, field: str, value: object
) -> None:
    journal.record_transaction(HASH, WALLET, 3, "{}", at=T0)
    with pytest.raises(JournalError, match=r"gas_unit_price|balance change"):
        journal.update_transaction(HASH, "committed", at=T0, **{field: value})  # type: ignore[arg-type]


def test_a_swap_fill_is_recorded_once_per_intent(journal: Journal) -> None:
    intent_id = _swap_intent(journal)
    fill = SwapFillRecord(
        intent_id, HASH, USDC, Decimal(100), APT, Decimal("22.63533804"), "chain", T0
    )
    assert journal.record_swap_fill(fill, at=T0) is True
    again = SwapFillRecord(intent_id, HASH, USDC, Decimal(1), APT, Decimal(1), "bounds", T0)
    assert journal.record_swap_fill(again, at=T0) is False  # the first record wins
    [stored] = journal.swap_fills()
    assert (stored.sold_amount, stored.bought_amount, stored.source) == (
        Decimal(100),
        Decimal("22.63533804"),
        "chain",
    )
    assert (stored.strategy, stored.wallet, stored.recorded_at) == ("s", WALLET, T0)
    assert journal.swap_fills("s") == [stored] and journal.swap_fills("other") == []


def test_a_swap_fill_must_be_a_swap_intent_with_amounts_and_a_known_source(
    journal: Journal,
) -> None:
    create = journal.record_intent("s", WALLET, "create_dca", "c", {}, at=T0).id
    swap = _swap_intent(journal)
    cases = [
        (
            SwapFillRecord(create, HASH, USDC, Decimal(1), APT, Decimal(1), "chain", T0),
            "not a swap",
        ),
        (SwapFillRecord(swap, HASH, USDC, Decimal(-1), APT, Decimal(1), "chain", T0), ">= 0"),
        (SwapFillRecord(swap, HASH, USDC, Decimal(1), APT, Decimal(1), "quote", T0), "source"),
        (SwapFillRecord(swap, "0x12", USDC, Decimal(1), APT, Decimal(1), "chain", T0), "hash"),
    ]
    for fill, message in cases:
        with pytest.raises(JournalError, match=message):
            journal.record_swap_fill(fill, at=T0)
    assert journal.swap_fills() == []


def test_a_fill_keeps_the_providers_usd_values_and_drops_unusable_ones(journal: Journal) -> None:
    snapshot = OrderSnapshot("dca", "o1", WALLET, USDC, APT, "active", Decimal(75))
    journal.upsert_order(snapshot, observed_at=T0, source="create")
    good = FillRecord(
        "t1",
        "filled",
        1,
        Decimal(25),
        Decimal("4.98"),
        Decimal("0.0125"),
        T0,
        from_amount_usd=Decimal("25.0012"),
        to_amount_usd=Decimal("24.9"),
        fee_amount_usd=Decimal("0.0125"),
    )
    hostile = FillRecord(
        "t2",
        "filled",
        2,
        Decimal(25),
        Decimal("4.98"),
        None,
        T0,
        from_amount_usd=Decimal(-5),
        to_amount_usd=Decimal("NaN"),
    )
    assert journal.add_fill("dca", "o1", good, at=T0)
    assert journal.add_fill("dca", "o1", hostile, at=T0)  # recorded, without the bad values
    first, second = journal.fills("dca", "o1")
    assert (first.from_amount_usd, first.to_amount_usd, first.fee_amount_usd) == (
        Decimal("25.0012"),
        Decimal("24.9"),
        Decimal("0.0125"),
    )
    assert (second.from_amount_usd, second.to_amount_usd, second.to_amount) == (
        None,
        None,
        Decimal("4.98"),
    )


def test_rows_of_before_0005_migrate_with_no_gas_price_and_no_usd(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    migrate.upgrade(url, "0004_price_source")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO transactions (hash, sender, sequence_number, payload_summary, "
                "state, gas_used, created_at, updated_at) VALUES (:h, :w, '1', '{}', "
                "'committed', '500', '2026-01-01T00:00:00.000000+00:00', "
                "'2026-01-01T00:00:00.000000+00:00')"
            ),
            {"h": HASH, "w": WALLET},
        )
    engine.dispose()
    assert migrate.upgrade(url) == ("0004_price_source", migrate.head_revision())
    with Journal.open(url) as journal:
        old = journal.transaction(HASH)
        assert old is not None and old.gas_used == 500
        assert (old.gas_unit_price, old.gas_fee, old.balance_changes) == (None, None, None)
    migrate.downgrade(url, "0004_price_source")
    engine = make_engine(url)
    with engine.connect() as conn:
        tables = {row[0] for row in conn.execute(text("SELECT name FROM sqlite_master"))}
        columns = {row[1] for row in conn.execute(text("PRAGMA table_info(transactions)"))}
    engine.dispose()
    assert "swap_fills" not in tables and "gas_unit_price" not in columns
