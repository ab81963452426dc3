"""Price ticks say where they came from: a nullable `source` column.

Revision ID: 0004_price_source
Revises: 0003_transition_chain
Create Date: 2026-01-04

`provider` (recorded from the real provider in live mode), `paper` (recorded from a
paper world: simulated), `synthetic`, `import` — the price-series format's `source`. A
backtest credits the provider only under `provider` ticks. Ticks recorded before this
revision keep NULL: the compatibility rule (docs/backtesting.md) treats them as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_price_source"
down_revision: str | None = "0003_transition_chain"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add `price_ticks.source` (NULL in every existing tick)."""
    with op.batch_alter_table("price_ticks") as batch:
        batch.add_column(sa.Column("source", sa.String(), nullable=True))


def downgrade() -> None:
    """Drop `price_ticks.source` (what the ticks said of their source is lost)."""
    with op.batch_alter_table("price_ticks") as batch:
        batch.drop_column("source")
