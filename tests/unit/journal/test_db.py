from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import event, text

from bot.journal import Journal, JournalError
from bot.journal.db import WRITER_LOCK_KEY, is_sqlite, make_engine, sqlite_file, write_engine

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
        # PostgreSQL: the writer's advisory lock is a write transaction's first statement.
        writer_lock = f"SELECT pg_advisory_xact_lock({WRITER_LOCK_KEY})"
        immediate = "BEGIN IMMEDIATE" if is_sqlite(url) else writer_lock
        if is_sqlite(url):
            assert immediate in seen
        else:
            assert seen[0] == immediate
        seen.clear()
        journal.intents()
        assert immediate not in seen
        if is_sqlite(url):
            assert "BEGIN DEFERRED" in seen


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


def test_isolation_levels_per_engine(url: str) -> None:
    """PostgreSQL: readers see one snapshot (REPEATABLE READ); writers READ COMMITTED
    behind the writer lock. SQLite has only serializable transactions."""
    with Journal.open(url) as journal:
        if is_sqlite(url):
            return
        with journal.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW transaction_isolation").scalar() == (
                "repeatable read"
            )
        with write_engine(journal.engine).connect() as conn:
            assert conn.exec_driver_sql("SHOW transaction_isolation").scalar() == ("read committed")


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("mysql://u:secret@host/db", "engine 'mysql' is not supported"),
        ("postgresql+psycopg2://u:secret@host/db", "'postgresql+psycopg2' is not supported"),
        ("not a url", "is not a database URL"),
    ],
)
def test_an_unsupported_url_is_one_line(bad: str, says: str) -> None:
    with pytest.raises(JournalError, match=re.escape(says)) as caught:
        Journal.open(bad)
    assert "\n" not in str(caught.value) and "secret" not in str(caught.value)


def test_an_unreachable_postgresql_is_one_line() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    pytest.importorskip("psycopg")
    with pytest.raises(JournalError, match="cannot open it") as caught:
        Journal.open(f"postgresql+psycopg://u:secret@127.0.0.1:{port}/db")
    message = str(caught.value)
    assert "\n" not in message and "secret" not in message and f":{port}/db" in message


def test_every_amount_and_time_column_is_text_on_both_engines(url: str) -> None:
    """Money and times are exact TEXT (never NUMERIC, REAL or a native timestamp)."""
    from sqlalchemy import inspect
    from sqlalchemy.types import Text

    from bot.journal.models import journal_metadata
    from bot.journal.types import BigIntText, DecimalText, UtcDateTime

    with Journal.open(url) as journal:
        reflected = inspect(journal.engine)
        exact = 0
        for table in journal_metadata.sorted_tables:
            stored = {c["name"]: c["type"] for c in reflected.get_columns(table.name)}
            for column in table.columns:
                if isinstance(column.type, DecimalText | BigIntText | UtcDateTime):
                    exact += 1
                    assert isinstance(stored[column.name], Text), (table.name, column.name)
        assert exact > 40


def test_concurrent_writers_queue_and_never_fail_half_way(url: str) -> None:
    """Two writers (two engines, as two daemons of one database) record the same keys at
    once: every key is recorded exactly once, and no write fails (SQLite: `BEGIN
    IMMEDIATE`; PostgreSQL: the writer lock before a READ COMMITTED transaction)."""
    from concurrent.futures import ThreadPoolExecutor

    keys = [f"k{n}" for n in range(40)]
    with Journal.open(url) as first, Journal.open(url) as second:

        def record(journal: Journal) -> list[bool]:
            return [journal.record_intent("s", WALLET, "swap", k, {}, at=T0).existing for k in keys]

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(record, [first, second]))
        intents = first.intents()
    assert sorted(i.idempotency_key for i in intents) == sorted(keys)
    # Each key was new for exactly one of the two writers.
    assert [a + b for a, b in zip(*results, strict=True)] == [1] * len(keys)
