"""Engines for the journal: any SQLAlchemy URL; SQLite set up for durability.

For SQLite every new connection gets:

* `journal_mode=WAL`: readers (`bot orders` in another process) never block the writer;
* `synchronous=FULL`: a commit is on disk (WAL fsynced) before it returns, so an intent
  survives a power cut the moment `record_intent` returns;
* `foreign_keys=ON`;
* `busy_timeout=5000` ms: a short concurrent write or checkpoint makes others wait, not fail.

A file that is not a SQLite database, or a damaged one, is `JournalUnusable`
(`unusable_error`), named as `journal_name` shows it (never with a password). Every open
also checks each page (`require_intact`, SQLite's `quick_check`, a fraction of a second
for 100 MB): damage in a table the first reads do not touch is found before anything is
traded or listed from it.

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
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import StaticPool

from bot.journal.errors import JournalUnusable

__all__ = [
    "BUSY_TIMEOUT_MS",
    "driver_message",
    "is_sqlite",
    "journal_name",
    "make_engine",
    "require_intact",
    "sqlite_file",
    "unusable_error",
    "write_engine",
]

BUSY_TIMEOUT_MS: Final = 5000
_BEGIN_OPTION: Final = "journal_begin"
_RESTORE: Final = "restore it from a backup"
# SQLite's own names for "this is not a database" and "this database is damaged".
_UNUSABLE: Final = {
    "SQLITE_NOTADB": "not a SQLite database file",
    "SQLITE_CORRUPT": "the database file is damaged",
}


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


def journal_name(url: str | URL) -> str:
    """The journal as people see it: its SQLite file, or the URL with the password hidden."""
    path = sqlite_file(url)
    if path is not None:
        return str(path)
    return make_url(url).render_as_string(hide_password=True)


def driver_message(exc: BaseException) -> str:
    """The database driver's own one-line message (no SQL, no SQLAlchemy help link)."""
    cause = exc.orig if isinstance(exc, DBAPIError) else exc
    lines = str(cause).strip().splitlines()
    return lines[0] if lines else type(cause).__name__


def unusable_error(url: str | URL, exc: BaseException) -> JournalUnusable | None:
    """`JournalUnusable` when `exc` says the file is no (intact) SQLite database, else None."""
    cause = exc.orig if isinstance(exc, DBAPIError) else exc
    meaning = _UNUSABLE.get(getattr(cause, "sqlite_errorname", ""))
    if meaning is None:
        return None
    return JournalUnusable(
        f"journal at {journal_name(url)}: {meaning} ({driver_message(exc)}); {_RESTORE}"
    )


def require_intact(engine: Engine) -> None:
    """Refuse a damaged SQLite database (`PRAGMA quick_check`: reads every page once).

    Raises:
        JournalUnusable: the check found damage, or could not even read the file.
    """
    if engine.dialect.name != "sqlite":
        return
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("PRAGMA quick_check").fetchall()
    except DBAPIError as exc:
        unusable = unusable_error(engine.url, exc)
        if unusable is not None:
            raise unusable from exc
        raise
    problems = [str(row[0]) for row in rows if row[0] != "ok"]
    if problems:
        raise JournalUnusable(
            f"journal at {journal_name(engine.url)}: {_UNUSABLE['SQLITE_CORRUPT']} "
            f"({problems[0].splitlines()[0]}); {_RESTORE}"
        )


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
