"""The journal: every order, intent, transaction and price the bot has seen, in SQLite.

`Journal` (in `bot.journal.store`) is the only writer. Amounts are stored as exact TEXT
(`bot.journal.types`), the schema is managed by alembic (`bot.journal.migrate`), and SQLite
runs in WAL mode with `synchronous=FULL` (`bot.journal.db`). See docs/journal.md.
"""

from bot.journal.codec import decode_json, encode_json, raw_hash
from bot.journal.errors import JournalError
from bot.journal.intents import INTENT_KINDS, INTENT_STATES
from bot.journal.migrate import current_revision, head_revision, upgrade
from bot.journal.store import Journal
from bot.journal.transactions import TX_STATES
from bot.journal.views import (
    CommandView,
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
    TransactionView,
)

__all__ = [
    "INTENT_KINDS",
    "INTENT_STATES",
    "TX_STATES",
    "CommandView",
    "FillRecord",
    "FillView",
    "IntentTransitionView",
    "IntentView",
    "Journal",
    "JournalError",
    "OrderChange",
    "OrderObservation",
    "OrderSnapshot",
    "OrderTransitionView",
    "OrderView",
    "PriceTickRow",
    "TransactionView",
    "current_revision",
    "decode_json",
    "encode_json",
    "head_revision",
    "raw_hash",
    "upgrade",
]
