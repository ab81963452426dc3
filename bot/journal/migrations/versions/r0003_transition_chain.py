"""Order transitions: log every status change (drop the de-duplicating unique key).

Revision ID: 0003_transition_chain
Revises: 0002_state_indexes
Create Date: 2026-01-03

The unique key (order, from, to, raw hash) made a flip-flop (A→B→A→B with identical
records) log its second A→B nowhere, so the log stopped being a chain ending at the
order's current status. A repeated observation already logs nothing (its status did not
change), so the key only ever hid real changes. An index on the order keeps the log's
reads fast.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from bot.journal.migrations import order_transitions_unique

revision: str = "0003_transition_chain"
down_revision: str | None = "0002_state_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEX = "ix_order_transitions_order_row_id"


def upgrade() -> None:
    """Drop the unique key; index the order column."""
    with op.batch_alter_table("order_transitions") as batch:
        batch.drop_constraint(order_transitions_unique(op.get_bind().dialect.name), type_="unique")
        batch.create_index(_INDEX, ["order_row_id"], unique=False)


def downgrade() -> None:
    """Restore the unique key (fails if the log now holds a repeated change)."""
    with op.batch_alter_table("order_transitions") as batch:
        batch.drop_index(_INDEX)
        batch.create_unique_constraint(
            order_transitions_unique(op.get_bind().dialect.name),
            ["order_row_id", "from_status", "to_status", "raw_hash"],
        )
