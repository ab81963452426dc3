"""Schema migrations of the journal, run in code (no alembic.ini).

`upgrade(url)` brings any database (empty, or at any earlier revision) to `head`. A
database at a revision this code does not know (written by a newer bot) is never touched:
`JournalUnusable`, as is a file that is not an intact SQLite database.
On SQLite, foreign-key enforcement is switched off on the migrating connection while the
revisions run (batch migrations copy tables, which must not cascade or fail half-way) and
`PRAGMA foreign_key_check` must come back empty before the migration is committed.

Creating a new revision (developers)::

    python -c "from alembic import command; from bot.journal.migrate import alembic_config; \
command.revision(alembic_config('sqlite:///data/dev.db'), 'what changed', autogenerate=True)"

then clean the generated file: TEXT for amount/time columns (`sa.Text()`), named
constraints, `batch_alter_table` for changes on SQLite.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sqlalchemy import Engine, text
from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import DBAPIError

from bot.journal.db import (
    journal_name,
    make_engine,
    require_intact,
    unusable_error,
    write_engine,
)
from bot.journal.errors import JournalUnusable

if TYPE_CHECKING:  # alembic is imported when a migration runs, not with the journal
    from alembic.config import Config
    from alembic.script import ScriptDirectory

__all__ = [
    "MIGRATIONS_DIR",
    "MigrationError",
    "alembic_config",
    "current_revision",
    "downgrade",
    "downgrade_engine",
    "engine_revision",
    "head_revision",
    "require_known_revision",
    "revisions",
    "unknown_revision",
    "upgrade",
    "upgrade_engine",
]

MIGRATIONS_DIR: Final = Path(__file__).resolve().parent / "migrations"


class MigrationError(RuntimeError):
    """A migration left the database inconsistent (it was rolled back)."""


def alembic_config(url: str | URL | None = None) -> Config:
    """An alembic `Config` built in code: this package's scripts, batch mode for SQLite."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        rendered = url if isinstance(url, str) else url.render_as_string(hide_password=False)
        # configparser interpolation: a literal % must be doubled.
        config.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return config


@contextmanager
def _quiet_alembic() -> Iterator[None]:
    """Alembic logs every context set-up at INFO; the callers report what changed."""
    logger = logging.getLogger("alembic")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    """The newest revision this code knows (`0002_state_indexes`, …)."""
    head = _scripts().get_current_head()
    if head is None:  # pragma: no cover - the package always ships revisions
        raise MigrationError("no journal migrations found")
    return head


def revisions() -> list[str]:
    """Every revision id, oldest first."""
    return [script.revision for script in reversed(list(_scripts().walk_revisions()))]


def engine_revision(engine: Engine) -> str | None:
    """The revision of the database behind `engine`; None when never migrated.

    Raises:
        JournalUnusable: the file is not an intact SQLite database (the first read of
            every open comes here, so this is where a damaged file is found).
    """
    from alembic.runtime.migration import MigrationContext

    try:
        with _quiet_alembic(), engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except DBAPIError as exc:
        unusable = unusable_error(engine.url, exc)
        if unusable is not None:
            raise unusable from exc
        raise


def require_known_revision(engine: Engine) -> str | None:
    """The database's revision, refused when this code does not know it.

    Raises:
        JournalUnusable: a revision from a newer bot (or a foreign alembic history):
            neither upgrading nor reading it can be trusted.
    """
    current = engine_revision(engine)
    problem = unknown_revision(journal_name(engine.url), current)
    if problem is not None:
        raise JournalUnusable(problem)
    return current


def unknown_revision(name: str, revision: str | None) -> str | None:
    """The one-line problem when `revision` is not one of this code's (None: it is, or empty)."""
    if revision is None or revision in revisions():
        return None
    return (
        f"journal at {name}: schema revision {revision!r} is not one this bot knows (its "
        f"newest is {head_revision()}): it was written by a newer version; run that "
        "version, or restore a backup"
    )


def current_revision(url: str | URL) -> str | None:
    """The revision the database at `url` is at; None for an empty (never migrated) one."""
    engine = make_engine(url)
    try:
        return engine_revision(engine)
    finally:
        engine.dispose()


def _set_foreign_keys(conn: Connection, on: bool) -> None:
    # Outside any transaction: SQLite ignores this pragma inside one.
    raw = conn.connection.dbapi_connection
    if raw is None:  # pragma: no cover - a connection just opened always has one
        raise MigrationError("the migrating connection has no database connection")
    raw.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def _run(engine: Engine, verb: str, revision: str) -> None:
    from alembic import command

    config = alembic_config()
    sqlite = engine.dialect.name == "sqlite"
    with _quiet_alembic(), write_engine(engine).connect() as conn:
        if sqlite:
            _set_foreign_keys(conn, on=False)
        try:
            # One transaction for every revision and the check: alembic sees an external
            # transaction and leaves committing to us.
            transaction = conn.begin()
            try:
                config.attributes["connection"] = conn
                if verb == "upgrade":
                    command.upgrade(config, revision)
                else:
                    command.downgrade(config, revision)
                if sqlite:
                    problems = conn.execute(text("PRAGMA foreign_key_check")).fetchall()
                    if problems:
                        raise MigrationError(
                            f"foreign key check failed after {verb} to {revision}: "
                            f"{[tuple(row) for row in problems[:5]]}"
                        )
            except BaseException:
                transaction.rollback()
                raise
            transaction.commit()
        finally:
            if sqlite:
                _set_foreign_keys(conn, on=True)


def upgrade_engine(engine: Engine, revision: str = "head") -> tuple[str | None, str | None]:
    """Upgrade the database behind `engine`; returns (revision before, revision after)."""
    before = require_known_revision(engine)
    _run(engine, "upgrade", revision)
    return before, engine_revision(engine)


def downgrade_engine(engine: Engine, revision: str) -> tuple[str | None, str | None]:
    """Downgrade to `revision` (`base` drops everything); returns (before, after)."""
    before = require_known_revision(engine)
    _run(engine, "downgrade", revision)
    return before, engine_revision(engine)


def upgrade(url: str | URL, revision: str = "head") -> tuple[str | None, str | None]:
    """Upgrade the database at `url` (created if missing) to `revision`.

    Returns:
        (revision before, revision after); before is None for a new database.
    """
    engine = make_engine(url)
    try:
        require_intact(engine)
        return upgrade_engine(engine, revision)
    finally:
        engine.dispose()


def downgrade(url: str | URL, revision: str) -> tuple[str | None, str | None]:
    """Downgrade the database at `url` to `revision`; returns (before, after)."""
    engine = make_engine(url)
    try:
        return downgrade_engine(engine, revision)
    finally:
        engine.dispose()
