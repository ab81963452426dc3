"""What the accounting needs: gas prices, chain balance changes, swap fills, provider USD.

Revision ID: 0005_swap_fills
Revises: 0004_price_source
Create Date: 2026-11-25

* `transactions.gas_unit_price` (octas per gas unit, as the committed transaction says):
  the gas fee is `gas_used × gas_unit_price`; `transactions.balance_changes` (canonical
  JSON: the sender's own balance changes as the node reported them, base units) and
  `transactions.committed_at` (the ledger's time of the commit). NULL in older rows and
  whenever the node did not give them.
* `fills.from_amount_usd`, `to_amount_usd`, `fee_amount_usd`: the provider's `…USD`
  values of a fill (untrusted: valuation display only). NULL in older rows.
* `swap_fills`: what one confirmed swap intent sold and received, one row per intent.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_swap_fills"
down_revision: str | None = "0004_price_source"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TX_COLUMNS = ("gas_unit_price", "balance_changes", "committed_at")
_TX_TYPES = {"gas_unit_price": sa.Text(), "balance_changes": sa.String(), "committed_at": sa.Text()}
_FILL_COLUMNS = ("from_amount_usd", "to_amount_usd", "fee_amount_usd")


def upgrade() -> None:
    """Add the nullable columns (NULL in every existing row) and the `swap_fills` table."""
    with op.batch_alter_table("transactions") as batch:
        for name in _TX_COLUMNS:
            batch.add_column(sa.Column(name, _TX_TYPES[name], nullable=True))
    with op.batch_alter_table("fills") as batch:
        for name in _FILL_COLUMNS:
            batch.add_column(sa.Column(name, sa.Text(), nullable=True))
    op.create_table(
        "swap_fills",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("intent_id", sa.Integer(), nullable=False),
        sa.Column("tx_hash", sa.String(), nullable=False),
        sa.Column("sold_token", sa.String(), nullable=False),
        sa.Column("sold_amount", sa.Text(), nullable=False),
        sa.Column("bought_token", sa.String(), nullable=False),
        sa.Column("bought_amount", sa.Text(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("time", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["intent_id"], ["intents.id"], name="fk_swap_fills_intent_id_intents"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_swap_fills"),
        sa.UniqueConstraint("intent_id", name="uq_swap_fills_intent_id"),
    )


def downgrade() -> None:
    """Drop `swap_fills` and the columns (what they held is lost)."""
    op.drop_table("swap_fills")
    with op.batch_alter_table("fills") as batch:
        for name in _FILL_COLUMNS:
            batch.drop_column(name)
    with op.batch_alter_table("transactions") as batch:
        for name in _TX_COLUMNS:
            batch.drop_column(name)
