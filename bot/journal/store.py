"""`Journal`: the only writer of the journal database.

Every write method runs one short transaction and commits before it returns: when
`record_intent` returns, the intent is on disk (SQLite: WAL, `synchronous=FULL`). Write
transactions start with `BEGIN IMMEDIATE`, so two writers queue on SQLite's lock (up to
the busy timeout) instead of failing half-way.

One writer: the daemon opens the journal as the writer. Another process (`bot orders`,
`bot journal export`) opens it with `readonly=True`: it may read everything and write
only to the command queue (`enqueue_command`), which the daemon polls (`take_command`).

Times are never read from a wall clock here: every write takes `at=` (aware UTC) from the
caller's clock. Addresses and tokens are stored in canonical text. Amounts are exact
(`bot.journal.types`) and never compared in SQL.

Callers get frozen dataclass views (`bot.journal.views`), never ORM objects.

`Journal` is composed of one part per table group, each in its own module and each
built on `JournalBase` (`bot.journal.base`): intents, orders (bulk application in
`bot.journal.observe`), transactions, swap fills, prices, strategy_state, commands, daemons
and export.
This module holds `Journal`; the package (`bot.journal`) exports the public names.
"""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from bot.journal import canon
from bot.journal.commands import CommandsMixin
from bot.journal.daemons import DaemonsMixin
from bot.journal.db import (
    check_url,
    driver_message,
    journal_name,
    make_engine,
    require_intact,
    sqlite_file,
)
from bot.journal.errors import JournalError
from bot.journal.export import ExportMixin
from bot.journal.intents import (
    IntentsMixin,
)
from bot.journal.migrate import (
    MigrationError,
    head_revision,
    require_known_revision,
    upgrade_engine,
)
from bot.journal.orders import OrdersMixin
from bot.journal.prices import PriceTicksMixin
from bot.journal.strategy_state import StrategyStateMixin
from bot.journal.swaps import SwapFillsMixin
from bot.journal.transactions import TransactionsMixin

__all__ = ["Journal"]


class Journal(
    IntentsMixin,
    OrdersMixin,
    TransactionsMixin,
    SwapFillsMixin,
    PriceTicksMixin,
    StrategyStateMixin,
    CommandsMixin,
    DaemonsMixin,
    ExportMixin,
):
    """The journal store. Open with `Journal.open(url)`; close with `close()` or `with`."""

    @classmethod
    def open(
        cls,
        url: str | URL,
        *,
        migrate: bool = True,
        readonly: bool = False,
        wallet: str | None = None,
    ) -> Journal:
        """Open the journal at `url`.

        Args:
            url: a SQLAlchemy URL (`[journal].url`, default `sqlite:///data/bot.db`).
            migrate: upgrade the schema to `head` first (the writer does; ignored when
                `readonly`).
            readonly: a second process (`bot orders`, export): reads, plus
                `enqueue_command`. The database must exist and be at `head`.
            wallet: the wallet this journal is for: its writes are stamped with it and its
                reads see that wallet's rows only (None: the whole database; see
                `bind_wallet` for a wallet known only later).

        Every page of a SQLite journal is checked first (`require_intact`): damage is
        found here, not half-way through a trade or a listing.

        Raises:
            JournalError: an engine other than SQLite or PostgreSQL (psycopg 3), or
                PostgreSQL without psycopg installed.
            JournalUnusable: not an intact SQLite database, or at a schema revision this
                code does not know (a newer bot's): nothing is written to it.
            JournalError: a malformed wallet; read-only and the database is missing or
                not at `head`, or not migrating and the schema is not at `head`, or it
                cannot be opened. Every
                message is one line naming the journal (never its password).
        """
        url = check_url(url)  # one line for an engine the journal does not support
        scope = None if wallet is None else canon.wallet(wallet)
        if readonly:
            path = sqlite_file(url)
            if path is not None and not path.exists():
                raise JournalError(f"no journal at {path} (run `bot journal migrate`)")
        try:
            engine = make_engine(url)  # creates the SQLite file's folder
        except OSError as exc:
            raise JournalError(
                f"journal at {journal_name(url)}: cannot create its folder: {exc.strerror or exc}"
            ) from exc
        try:
            require_intact(engine)
            if migrate and not readonly:
                upgrade_engine(engine)
            else:
                _require_head(engine)
        except JournalError:
            engine.dispose()
            raise
        except (SQLAlchemyError, MigrationError) as exc:
            engine.dispose()
            raise JournalError(
                f"journal at {journal_name(url)}: cannot open it: {driver_message(exc)}"
            ) from exc
        return cls(engine, readonly=readonly, wallet=scope)


def _require_head(engine: Engine) -> None:
    current = require_known_revision(engine)
    head = head_revision()
    if current != head:
        raise JournalError(
            f"journal at {journal_name(engine.url)} is at revision "
            f"{current or 'none (empty)'}, this bot needs {head}: run `bot journal migrate`"
        )
