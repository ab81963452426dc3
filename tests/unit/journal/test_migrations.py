from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from bot.journal import Journal, PriceTickRow, migrate
from bot.journal.db import make_engine
from bot.journal.models import journal_metadata

APT = "0x1::aptos_coin::AptosCoin"


def schema(url: str) -> dict[str, Any]:
    engine = make_engine(url)
    try:
        insp = inspect(engine)
        out: dict[str, Any] = {}
        for table in sorted(insp.get_table_names()):
            if table == "alembic_version":
                continue
            out[table] = {
                "columns": [
                    (c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns(table)
                ],
                "pk": insp.get_pk_constraint(table),
                "fks": sorted(
                    (fk["name"], tuple(fk["constrained_columns"]), fk["referred_table"])
                    for fk in insp.get_foreign_keys(table)
                ),
                "indexes": sorted(
                    (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                    for i in insp.get_indexes(table)
                ),
                "uniques": sorted(
                    (u["name"], tuple(u["column_names"]))
                    for u in insp.get_unique_constraints(table)
                ),
            }
        return out
    finally:
        engine.dispose()


def sqlite_url(tmp_path: Path, name: str) -> str:
    return f"sqlite:///{tmp_path / name}"


def test_revisions_are_linear_and_head_is_last() -> None:
    revisions = migrate.revisions()
    assert revisions[0] == "0001_initial"
    assert len(revisions) >= 2
    assert migrate.head_revision() == revisions[-1]


def test_empty_database_to_head(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path, "new.db")
    assert migrate.current_revision(url) is None
    assert migrate.upgrade(url) == (None, migrate.head_revision())
    assert migrate.current_revision(url) == migrate.head_revision()
    tables = set(schema(url))
    assert tables == set(journal_metadata.tables)
    # Running again is a no-op.
    assert migrate.upgrade(url) == (migrate.head_revision(), migrate.head_revision())


def test_head_matches_the_models(tmp_path: Path) -> None:
    migrated = sqlite_url(tmp_path, "migrated.db")
    created = sqlite_url(tmp_path, "created.db")
    migrate.upgrade(migrated)
    engine = make_engine(created)
    journal_metadata.create_all(engine)
    engine.dispose()
    assert schema(migrated) == schema(created)
    engine = make_engine(migrated)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            assert compare_metadata(context, journal_metadata) == []
    finally:
        engine.dispose()


@pytest.mark.parametrize("start", migrate.revisions())
def test_every_revision_upgrades_to_the_same_head(tmp_path: Path, start: str) -> None:
    fresh = sqlite_url(tmp_path, "fresh.db")
    migrate.upgrade(fresh)
    old = sqlite_url(tmp_path, "old.db")
    assert migrate.upgrade(old, start) == (None, start)
    # Data written at the old revision survives the upgrade.
    engine = make_engine(old)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO intents (strategy, wallet, kind, idempotency_key, action_json, "
                "created_at, state, updated_at) VALUES ('s', '0x1', 'swap', 'k', '{}', "
                "'2026-01-01T00:00:00.000000+00:00', 'planned', "
                "'2026-01-01T00:00:00.000000+00:00')"
            )
        )
    engine.dispose()
    assert migrate.upgrade(old) == (start, migrate.head_revision())
    assert schema(old) == schema(fresh)
    engine = make_engine(old)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT idempotency_key FROM intents")).scalar() == "k"
    engine.dispose()


def test_downgrade_of_the_newest_revision(tmp_path: Path) -> None:
    revisions = migrate.revisions()
    url = sqlite_url(tmp_path, "down.db")
    reference = sqlite_url(tmp_path, "ref.db")
    migrate.upgrade(reference, revisions[-2])
    migrate.upgrade(url)
    assert migrate.downgrade(url, revisions[-2]) == (revisions[-1], revisions[-2])
    assert schema(url) == schema(reference)
    assert migrate.downgrade(url, "base") == (revisions[-2], None)
    assert schema(url) == {}
    assert migrate.upgrade(url)[1] == revisions[-1]


def test_a_failed_migration_leaves_the_database_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = sqlite_url(tmp_path, "fail.db")
    migrate.upgrade(url, "0001_initial")
    from alembic import command  # what migrate imports when it runs

    real_upgrade = command.upgrade

    def upgrade_then_break(config: Any, revision: str) -> None:
        real_upgrade(config, revision)
        raise RuntimeError("power cut")

    monkeypatch.setattr(command, "upgrade", upgrade_then_break)
    with pytest.raises(RuntimeError, match="power cut"):
        migrate.upgrade(url)
    monkeypatch.undo()
    assert migrate.current_revision(url) == "0001_initial"
    indexes = {i[0] for i in schema(url)["orders"]["indexes"]}
    assert "ix_orders_status" not in indexes


def test_foreign_keys_are_back_on_after_migrating(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path, "fk.db")
    engine = make_engine(url, pool_size=1, max_overflow=0)
    try:
        migrate.upgrade_engine(engine)
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
    finally:
        engine.dispose()


def test_price_ticks_of_before_the_source_column_keep_no_source(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path, "ticks.db")
    migrate.upgrade(url, "0003_transition_chain")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO price_ticks (timestamp, token, symbol, usd_price, native_price) "
                "VALUES ('2026-01-01T00:00:00.000000+00:00', '0x1::aptos_coin::AptosCoin', "
                "'APT', '5.000000000000000001', '1')"
            )
        )
    engine.dispose()
    assert migrate.upgrade(url) == ("0003_transition_chain", migrate.head_revision())
    with Journal.open(url) as journal:
        journal.add_price_ticks(
            [PriceTickRow(datetime(2026, 1, 1, 0, 1, tzinfo=UTC), APT, Decimal(6), source="paper")]
        )
        ticks = journal.price_ticks(APT)
    assert [(t.usd_price, t.source) for t in ticks] == [
        (Decimal("5.000000000000000001"), None),  # recorded before: the rule of before
        (Decimal(6), "paper"),
    ]
    migrate.downgrade(url, "0003_transition_chain")
    assert "source" not in {c[0] for c in schema(url)["price_ticks"]["columns"]}
