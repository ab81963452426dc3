from __future__ import annotations

from pathlib import Path

from sqlalchemy import event, text

from bot.journal import Journal
from bot.journal.db import make_engine, sqlite_file

from .conftest import T0, WALLET


def test_pragmas_in_effect_on_a_file_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'deep' / 'er' / 'bot.db'}"
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            pragma = {
                name: conn.execute(text(f"PRAGMA {name}")).scalar()
                for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
            }
    finally:
        engine.dispose()
    assert pragma == {
        "journal_mode": "wal",
        "synchronous": 2,  # FULL
        "foreign_keys": 1,
        "busy_timeout": 5000,
    }
    assert (tmp_path / "deep" / "er" / "bot.db").exists()


def test_every_pooled_connection_gets_the_pragmas(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        with engine.connect() as one, engine.connect() as two:
            for conn in (one, two):
                assert conn.execute(text("PRAGMA synchronous")).scalar() == 2
                assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
    finally:
        engine.dispose()


def test_writes_begin_immediate_reads_deferred(url: str) -> None:
    with Journal.open(url) as journal:
        seen: list[str] = []

        def record(conn: object, cursor: object, statement: str, *args: object) -> None:
            seen.append(statement)

        event.listen(journal.engine, "before_cursor_execute", record)
        journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)
        assert "BEGIN IMMEDIATE" in seen
        seen.clear()
        journal.intents()
        assert "BEGIN DEFERRED" in seen and "BEGIN IMMEDIATE" not in seen


def test_foreign_keys_enforced(journal: Journal) -> None:
    from sqlalchemy.exc import IntegrityError

    with journal.engine.connect() as conn:
        try:
            conn.execute(
                text(
                    "INSERT INTO intent_transitions (intent_id, state, at) "
                    "VALUES (999, 'planned', 'x')"
                )
            )
            conn.commit()
        except IntegrityError:
            conn.rollback()
        else:  # pragma: no cover
            raise AssertionError("foreign key not enforced")


def test_in_memory_database_works_and_file_detection() -> None:
    assert sqlite_file("sqlite://") is None
    assert sqlite_file("sqlite:///:memory:") is None
    assert sqlite_file("sqlite:///data/bot.db") == Path("data/bot.db")
    assert sqlite_file("postgresql://u@h/db") is None
    with Journal.open("sqlite://") as journal:
        intent = journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)
        assert journal.intent(intent.id) == intent
