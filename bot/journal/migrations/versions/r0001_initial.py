"""Initial journal schema: orders, transitions, fills, intents, transactions, prices, state.

Revision ID: 0001_initial
Revises:
Create Date: 2026-01-01

Amount, base-unit and time columns are TEXT (`bot.journal.types` decorates them in the
models; the DDL is plain TEXT, so this file does not depend on those classes).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from bot.journal.migrations import order_transitions_unique

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(name: str, *, nullable: bool = False) -> sa.Column[str]:
    """A TEXT column (amounts, big integers, UTC times)."""
    return sa.Column(name, sa.Text(), nullable=nullable)


def _str(name: str, *, nullable: bool = False) -> sa.Column[str]:
    """A plain string column (names, ids, statuses)."""
    return sa.Column(name, sa.String(), nullable=nullable)


def upgrade() -> None:
    """Create every table of the first journal version."""
    op.create_table(
        "intents",
        sa.Column("id", sa.Integer(), nullable=False),
        _str("strategy"),
        _str("wallet"),
        _str("kind"),
        _str("idempotency_key"),
        _str("action_json"),
        _text("created_at"),
        _str("state"),
        _text("updated_at"),
        _str("order_id", nullable=True),
        _str("tx_hash", nullable=True),
        _str("error", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_intents"),
        sa.UniqueConstraint(
            "strategy", "idempotency_key", name="uq_intents_strategy_idempotency_key"
        ),
    )
    op.create_table(
        "intent_transitions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("intent_id", sa.Integer(), nullable=False),
        _str("from_state", nullable=True),
        _str("state"),
        _text("at"),
        _str("detail", nullable=True),
        sa.ForeignKeyConstraint(
            ["intent_id"], ["intents.id"], name="fk_intent_transitions_intent_id_intents"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_intent_transitions"),
    )
    op.create_index(
        "ix_intent_transitions_intent_id", "intent_transitions", ["intent_id"], unique=False
    )
    op.create_table(
        "orders",
        sa.Column("id", sa.Integer(), nullable=False),
        _str("kind"),
        _str("order_id"),
        sa.Column("intent_id", sa.Integer(), nullable=True),
        _str("strategy", nullable=True),
        _str("wallet"),
        _str("from_token"),
        _str("to_token"),
        _text("amount_total"),
        _text("amount_spent", nullable=True),
        _text("amount_balance", nullable=True),
        _text("to_amount_received", nullable=True),
        _text("rate", nullable=True),
        _text("min_rate", nullable=True),
        _text("max_rate", nullable=True),
        sa.Column("interval_value", sa.Integer(), nullable=True),
        _str("interval_period", nullable=True),
        sa.Column("orders_total", sa.Integer(), nullable=True),
        sa.Column("orders_completed", sa.Integer(), nullable=True),
        _text("expire_at", nullable=True),
        _str("status"),
        _text("provider_created_at", nullable=True),
        _text("created_at"),
        _text("updated_at"),
        _text("last_seen_at"),
        _str("last_raw_hash", nullable=True),
        sa.ForeignKeyConstraint(["intent_id"], ["intents.id"], name="fk_orders_intent_id_intents"),
        sa.PrimaryKeyConstraint("id", name="pk_orders"),
        sa.UniqueConstraint("kind", "order_id", name="uq_orders_kind_order_id"),
    )
    op.create_index("ix_orders_strategy", "orders", ["strategy"], unique=False)
    op.create_table(
        "order_transitions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("order_row_id", sa.Integer(), nullable=False),
        _str("from_status", nullable=True),
        _str("to_status"),
        _text("observed_at"),
        _str("source"),
        _str("raw_hash", nullable=True),
        sa.ForeignKeyConstraint(
            ["order_row_id"], ["orders.id"], name="fk_order_transitions_order_row_id_orders"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_order_transitions"),
        sa.UniqueConstraint(
            "order_row_id",
            "from_status",
            "to_status",
            "raw_hash",
            name=order_transitions_unique(op.get_bind().dialect.name),
        ),
    )
    op.create_table(
        "fills",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("order_row_id", sa.Integer(), nullable=False),
        _str("tx_id"),
        sa.Column("tx_number", sa.Integer(), nullable=True),
        _str("type"),
        _text("from_amount", nullable=True),
        _text("to_amount", nullable=True),
        _text("fee_amount", nullable=True),
        _text("time", nullable=True),
        _str("keeper", nullable=True),
        _text("price_to_per_from", nullable=True),
        _text("recorded_at"),
        sa.ForeignKeyConstraint(
            ["order_row_id"], ["orders.id"], name="fk_fills_order_row_id_orders"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_fills"),
        sa.UniqueConstraint(
            "order_row_id", "tx_id", "tx_number", name="uq_fills_order_row_id_tx_id_tx_number"
        ),
    )
    op.create_table(
        "transactions",
        sa.Column("id", sa.Integer(), nullable=False),
        _str("hash"),
        sa.Column("intent_id", sa.Integer(), nullable=True),
        _str("sender"),
        _text("sequence_number"),
        _str("payload_summary"),
        _str("state"),
        _text("gas_used", nullable=True),
        _str("vm_status", nullable=True),
        _text("created_at"),
        _text("updated_at"),
        sa.ForeignKeyConstraint(
            ["intent_id"], ["intents.id"], name="fk_transactions_intent_id_intents"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_transactions"),
        sa.UniqueConstraint("hash", name="uq_transactions_hash"),
    )
    op.create_index("ix_transactions_intent_id", "transactions", ["intent_id"], unique=False)
    op.create_table(
        "price_ticks",
        sa.Column("id", sa.Integer(), nullable=False),
        _text("timestamp"),
        _str("token"),
        _str("symbol", nullable=True),
        _text("usd_price"),
        _text("native_price", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_price_ticks"),
        sa.UniqueConstraint("token", "timestamp", name="uq_price_ticks_token_timestamp"),
    )
    op.create_table(
        "strategy_state",
        _str("strategy"),
        _str("key"),
        _str("value_json"),
        _text("updated_at"),
        sa.PrimaryKeyConstraint("strategy", "key", name="pk_strategy_state"),
    )
    op.create_table(
        "commands",
        sa.Column("id", sa.Integer(), nullable=False),
        _text("created_at"),
        _str("kind"),
        _str("payload_json"),
        _str("state"),
        _str("result", nullable=True),
        _text("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_commands"),
    )


def downgrade() -> None:
    """Drop every table (children first)."""
    op.drop_table("commands")
    op.drop_table("strategy_state")
    op.drop_table("price_ticks")
    op.drop_index("ix_transactions_intent_id", table_name="transactions")
    op.drop_table("transactions")
    op.drop_table("fills")
    op.drop_table("order_transitions")
    op.drop_index("ix_orders_strategy", table_name="orders")
    op.drop_table("orders")
    op.drop_index("ix_intent_transitions_intent_id", table_name="intent_transitions")
    op.drop_table("intent_transitions")
    op.drop_table("intents")
