"""Alembic environment of the journal.

Run programmatically by `bot.journal.migrate`, which passes an open connection in
`config.attributes["connection"]`. Without one (the `alembic` command with a config that
sets `sqlalchemy.url`), an engine is made from that URL with the journal's SQLite set-up.
`render_as_batch=True` so that SQLite ALTERs are done by copy-and-move.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from bot.journal.db import make_engine
from bot.journal.models import journal_metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=journal_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    config = context.config
    if context.is_offline_mode():
        context.configure(
            url=config.get_main_option("sqlalchemy.url"),
            target_metadata=journal_metadata,
            render_as_batch=True,
            literal_binds=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if isinstance(connection, Connection):
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("journal migrations need a connection or sqlalchemy.url")
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


_main()
