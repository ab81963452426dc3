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

PostgreSQL (`postgresql+psycopg://…`, psycopg 3; `postgresql://` means the same) keeps the
same rules (docs/journal.md, "PostgreSQL"): readers run at REPEATABLE READ (one snapshot
per transaction, as a SQLite reader sees); a write transaction runs at READ COMMITTED and
first takes the transaction-scoped advisory lock `WRITER_LOCK_KEY`, the counterpart of
`BEGIN IMMEDIATE`: writers queue, one at a time, and every statement after the lock sees
all that was committed before it, so a read-then-write never fails half-way with a
serialization error and nothing needs to be retried. Any other engine is refused
(`JournalError`, one line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.pool import StaticPool

from bot.journal.errors import JournalError, JournalUnusable

__all__ = [
    "BUSY_TIMEOUT_MS",
    "SUPPORTED",
    "WRITER_LOCK_KEY",
    "check_url",
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


SUPPORTED: Final = "sqlite:///FILE or postgresql+psycopg://USER@HOST/DB"
"""The journal URLs this bot accepts, as the refusal names them."""
WRITER_LOCK_KEY: Final = 0x6A6F75726E616C  # "journal": one writer transaction at a time
_PG_DRIVERS: Final = {"", "psycopg"}


def check_url(url: str | URL) -> URL:
    """The parsed journal URL; `postgresql://` is taken as `postgresql+psycopg://`.

    Raises:
        JournalError: not a URL, or an engine or driver the journal does not support
            (one line; the password is never shown).
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise JournalError(f"journal URL is not a database URL (use {SUPPORTED})") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return parsed
    if backend == "postgresql" and parsed.drivername.partition("+")[2] in _PG_DRIVERS:
        return parsed.set(drivername="postgresql+psycopg")
    shown = parsed.render_as_string(hide_password=True)
    raise JournalError(
        f"journal URL {shown}: engine {parsed.drivername!r} is not supported (use {SUPPORTED})"
    )


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
    """An engine for `url`: SQLite or PostgreSQL, set up as the module docstring says.

    SQLite gets its parent folder created and the pragmas above; PostgreSQL its isolation
    levels and the writer lock.

    An in-memory SQLite URL (`sqlite://`) shares one connection (`StaticPool`), so every
    session sees the same database (tests only: no concurrency).

    Args:
        url: a SQLite or PostgreSQL URL, e.g. the default `sqlite:///data/bot.db`.
        kwargs: passed to `sqlalchemy.create_engine`.

    Raises:
        JournalError: another engine, or PostgreSQL without psycopg (`check_url`).
    """
    parsed = check_url(url)
    if parsed.get_backend_name() != "sqlite":
        return _postgresql_engine(parsed, **kwargs)
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


def _postgresql_engine(parsed: URL, **kwargs: Any) -> Engine:
    try:
        import psycopg  # noqa: F401 - only to name what is missing
    except ImportError:
        raise JournalError(
            f"journal at {journal_name(parsed)}: PostgreSQL needs psycopg 3 "
            "(pip install 'aptos-dca-bot[postgres]')"
        ) from None
    kwargs.setdefault("isolation_level", "REPEATABLE READ")
    kwargs.setdefault("pool_pre_ping", True)
    engine = create_engine(parsed, **kwargs)
    event.listen(engine, "begin", _on_pg_begin)
    return engine


def _on_pg_begin(conn: Connection) -> None:
    if conn.get_execution_options().get(_BEGIN_OPTION) == "IMMEDIATE":
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITER_LOCK_KEY})")


def write_engine(engine: Engine) -> Engine:
    """The same engine (same pool) for writing transactions.

    SQLite: `BEGIN IMMEDIATE`; PostgreSQL: READ COMMITTED after the writer lock
    (`WRITER_LOCK_KEY`, see the module docstring).
    """
    if engine.dialect.name == "sqlite":
        return engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
    return engine.execution_options(
        isolation_level="READ COMMITTED", **{_BEGIN_OPTION: "IMMEDIATE"}
    )
