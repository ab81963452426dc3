"""Indexes for the queries the daemon runs on every tick.

Revision ID: 0002_state_indexes
Revises: 0001_initial
Create Date: 2026-01-02

`orders(status)`: the tracker's open orders; `intents(state)`: intents to reconcile at
start-up; `commands(state)`: the daemon's queue poll; `price_ticks(timestamp)`: pruning.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002_state_indexes"
down_revision: str | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEXES = (
    ("orders", "ix_orders_status", "status"),
    ("intents", "ix_intents_state", "state"),
    ("commands", "ix_commands_state", "state"),
    ("price_ticks", "ix_price_ticks_timestamp", "timestamp"),
)


def upgrade() -> None:
    """Add the four indexes."""
    for table, name, column in _INDEXES:
        with op.batch_alter_table(table) as batch:
            batch.create_index(name, [column], unique=False)


def downgrade() -> None:
    """Drop the four indexes."""
    for table, name, _column in reversed(_INDEXES):
        with op.batch_alter_table(table) as batch:
            batch.drop_index(name)
