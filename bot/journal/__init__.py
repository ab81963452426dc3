"""The journal: every order, intent, transaction and price the bot has seen, in SQLite.

`Journal` (in `bot.journal.store`) is the only writer. Amounts are stored as exact TEXT
(`bot.journal.types`), the schema is managed by alembic (`bot.journal.migrate`), and SQLite
runs in WAL mode with `synchronous=FULL` (`bot.journal.db`). See docs/journal.md.

Names are imported from their modules on first use (PEP 562): reading a view or the JSON
codec does not load SQLAlchemy, alembic and the ORM models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.journal.codec import decode_json, encode_json, raw_hash
    from bot.journal.errors import JournalError, JournalUnusable
    from bot.journal.intents import INTENT_KINDS, INTENT_STATES
    from bot.journal.migrate import current_revision, head_revision, upgrade
    from bot.journal.store import Journal
    from bot.journal.transactions import TX_STATES
    from bot.journal.views import (
        CommandView,
        DaemonView,
        FillRecord,
        FillView,
        IntentTransitionView,
        IntentView,
        OrderChange,
        OrderObservation,
        OrderSnapshot,
        OrderTransitionView,
        OrderView,
        PriceTickRow,
        SwapFillRecord,
        SwapFillView,
        TransactionView,
    )

_WHERE: dict[str, str] = {
    "decode_json": "bot.journal.codec",
    "encode_json": "bot.journal.codec",
    "raw_hash": "bot.journal.codec",
    "JournalError": "bot.journal.errors",
    "JournalUnusable": "bot.journal.errors",
    "INTENT_KINDS": "bot.journal.intents",
    "INTENT_STATES": "bot.journal.intents",
    "current_revision": "bot.journal.migrate",
    "head_revision": "bot.journal.migrate",
    "upgrade": "bot.journal.migrate",
    "Journal": "bot.journal.store",
    "TX_STATES": "bot.journal.transactions",
    "CommandView": "bot.journal.views",
    "DaemonView": "bot.journal.views",
    "FillRecord": "bot.journal.views",
    "FillView": "bot.journal.views",
    "IntentTransitionView": "bot.journal.views",
    "IntentView": "bot.journal.views",
    "OrderChange": "bot.journal.views",
    "OrderObservation": "bot.journal.views",
    "OrderSnapshot": "bot.journal.views",
    "OrderTransitionView": "bot.journal.views",
    "OrderView": "bot.journal.views",
    "PriceTickRow": "bot.journal.views",
    "SwapFillRecord": "bot.journal.views",
    "SwapFillView": "bot.journal.views",
    "TransactionView": "bot.journal.views",
}

__all__ = [
    "INTENT_KINDS",
    "INTENT_STATES",
    "TX_STATES",
    "CommandView",
    "DaemonView",
    "FillRecord",
    "FillView",
    "IntentTransitionView",
    "IntentView",
    "Journal",
    "JournalError",
    "JournalUnusable",
    "OrderChange",
    "OrderObservation",
    "OrderSnapshot",
    "OrderTransitionView",
    "OrderView",
    "PriceTickRow",
    "SwapFillRecord",
    "SwapFillView",
    "TransactionView",
    "current_revision",
    "decode_json",
    "encode_json",
    "head_revision",
    "raw_hash",
    "upgrade",
]


def __getattr__(name: str) -> Any:
    """Import `name` from its module the first time it is asked for."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'bot.journal' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
