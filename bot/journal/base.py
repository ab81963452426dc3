"""`JournalBase`: the engine, the lifecycle and the two kinds of session of the store.

Every write runs in `_writing()`: one short transaction on the write engine (`BEGIN
IMMEDIATE`, see `bot.journal.db`), committed before the method returns and rolled back on
any error. A read-only journal may write only through `_writing(queue_only=True)` (the
command queue). Reads run in `_reading()`.

A journal is opened for one wallet (`wallet=`, or `bind_wallet` once it is known) or for
the whole database (None: the tools that read every wallet, `bot journal copy`,
`bot status --all`). For a wallet, every write of a wallet's row must name that wallet or
is stamped with it, and every read of a wallet's rows sees that wallet's only (docs/
journal.md, "Many wallets").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session

from bot.journal import canon
from bot.journal.db import write_engine
from bot.journal.errors import JournalError
from bot.journal.models import UNNAMED_WALLET

__all__ = ["JournalBase"]


class JournalBase:
    """Engine and sessions shared by the parts of `Journal` (never used on its own)."""

    def __init__(
        self, engine: Engine, *, readonly: bool = False, wallet: str | None = None
    ) -> None:
        """Wrap an engine whose database is already at `head` (prefer `Journal.open`)."""
        self._engine: Engine | None = engine
        self._writer = write_engine(engine)
        self.readonly = readonly
        self._wallet: str | None = None
        if wallet is not None:
            self.bind_wallet(wallet)

    @property
    def wallet(self) -> str | None:
        """The wallet this journal is opened for (canonical), or None: the whole database."""
        return self._wallet

    def bind_wallet(self, wallet: str) -> None:
        """Scope this journal to `wallet` (once; the same wallet again changes nothing).

        Raises:
            JournalError: a malformed address, or already opened for another wallet.
        """
        canonical = canon.wallet(wallet)
        if self._wallet is not None and self._wallet != canonical:
            raise JournalError(f"journal opened for {self._wallet}, not {canonical}")
        self._wallet = canonical

    def _owner(self) -> str:
        """The wallet stamped on strategy state and commands (`UNNAMED_WALLET`: none)."""
        return UNNAMED_WALLET if self._wallet is None else self._wallet

    def _scoped(self, column: Any) -> list[Any]:
        """The filter of a wallet's rows on `column`: none for the whole database."""
        return [] if self._wallet is None else [column == self._wallet]

    def _visible(self, wallet: str) -> bool:
        """True when a row of `wallet` belongs to this journal's scope."""
        return self._wallet is None or wallet == self._wallet

    def _require_own(self, wallet: str, what: str) -> str:
        """`wallet` (canonical) when this journal may write it, else `JournalError`."""
        canonical = canon.wallet(wallet)
        if not self._visible(canonical):
            raise JournalError(f"{what} of {canonical} in the journal of {self._wallet}")
        return canonical

    def close(self) -> None:
        """Release the database connections. Further calls raise `JournalError`."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def engine(self) -> Engine:
        """The underlying engine (tests and benchmarks; never write through it)."""
        if self._engine is None:
            raise JournalError("journal is closed")
        return self._engine

    @contextmanager
    def _reading(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    @contextmanager
    def _writing(self, *, queue_only: bool = False) -> Iterator[Session]:
        if self.readonly and not queue_only:
            raise JournalError("journal opened read-only: writes go through the command queue")
        self.engine  # noqa: B018 - raises when closed
        with Session(self._writer, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except SQLAlchemyError as exc:
                session.rollback()
                raise JournalError(f"journal write failed: {exc}") from exc
            except (OverflowError, UnicodeError) as exc:
                # The driver refuses a value it cannot store (an int beyond 64 bits, text
                # with a lone surrogate) before SQLAlchemy sees it: a refusal all the same.
                session.rollback()
                raise JournalError(f"journal write failed: {type(exc).__name__}: {exc}") from exc
            except BaseException:
                session.rollback()
                raise
