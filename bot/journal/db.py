"""Engines for the journal: any SQLAlchemy URL; SQLite set up for durability.

For SQLite every new connection gets:

* `journal_mode=WAL`: readers (`bot orders` in another process) never block the writer;
* `synchronous=FULL`: a commit is on disk (WAL fsynced) before it returns, so an intent
  survives a power cut the moment `record_intent` returns;
* `foreign_keys=ON`;
* `busy_timeout=5000` ms: a short concurrent write or checkpoint makes others wait, not fail.

Transactions are begun by SQLAlchemy, not by the `sqlite3` module (whose legacy mode
starts them late and breaks repeatable reads): deferred `BEGIN` by default, `BEGIN
IMMEDIATE` on an engine from `write_engine` (the write lock is taken at the start, so
a read-then-write transaction can never fail half-way with "database is locked").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.pool import StaticPool

__all__ = [
    "BUSY_TIMEOUT_MS",
    "is_sqlite",
    "make_engine",
    "sqlite_file",
    "write_engine",
]

BUSY_TIMEOUT_MS: Final = 5000
_BEGIN_OPTION: Final = "journal_begin"


def is_sqlite(url: str | URL) -> bool:
    """True when the URL names a SQLite database (any driver)."""
    return make_url(url).get_backend_name() == "sqlite"


def sqlite_file(url: str | URL) -> Path | None:
    """The database file of a SQLite URL; None for in-memory databases and other backends."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in {"", ":memory:"} or database.startswith("file:"):
        return None
    return Path(database)


def _on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    # Let SQLAlchemy's "begin" event emit BEGIN (see the module docstring).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


def _on_begin(conn: Connection) -> None:
    mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


def make_engine(url: str | URL, **kwargs: Any) -> Engine:
    """An engine for `url`; SQLite gets its parent folder created and the pragmas above.

    An in-memory SQLite URL (`sqlite://`) shares one connection (`StaticPool`), so every
    session sees the same database (tests only: no concurrency).

    Args:
        url: any SQLAlchemy URL, e.g. the default `sqlite:///data/bot.db`.
        kwargs: passed to `sqlalchemy.create_engine`.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(parsed, **kwargs)
    path = sqlite_file(parsed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    connect_args = dict(kwargs.pop("connect_args", {}))
    connect_args.setdefault("check_same_thread", False)
    connect_args.setdefault("timeout", BUSY_TIMEOUT_MS / 1000)
    if path is None and "poolclass" not in kwargs:
        kwargs["poolclass"] = StaticPool
    engine = create_engine(parsed, connect_args=connect_args, **kwargs)
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def write_engine(engine: Engine) -> Engine:
    """The same engine (same pool) whose SQLite transactions start with `BEGIN IMMEDIATE`."""
    if engine.dialect.name != "sqlite":
        return engine
    return engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
