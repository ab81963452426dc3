"""Alembic migrations of the journal (run through `bot.journal.migrate`, no alembic.ini)."""

from __future__ import annotations

__all__ = ["ORDER_TRANSITIONS_UNIQUE", "order_transitions_unique"]

ORDER_TRANSITIONS_UNIQUE = "uq_order_transitions_order_row_id_from_status_to_status_raw_hash"
"""The name 0001 gave the (dropped in 0003) unique key of `order_transitions` on SQLite."""


def order_transitions_unique(dialect: str) -> str:
    """That key's name on `dialect`: PostgreSQL allows 63 characters, SQLite keeps its own."""
    return ORDER_TRANSITIONS_UNIQUE if dialect == "sqlite" else "uq_order_transitions_observation"
