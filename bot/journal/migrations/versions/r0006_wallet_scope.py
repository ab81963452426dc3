"""Every row scoped to its wallet; the `daemons` table of heartbeats.

Revision ID: 0006_wallet_scope
Revises: 0005_swap_fills
Create Date: 2026-11-25

* `strategy_state.wallet`, part of the primary key (strategy, key, wallet): two wallets'
  strategies of the same name on one database keep their own state.
* `commands.wallet`: the daemon of that wallet takes the command, no other
  (index `(wallet, state)` for its poll).
* `intents`: the idempotency key is unique per (wallet, strategy, key), not per
  (strategy, key).
* Indexes where reads filter by wallet: `orders (wallet, kind)` and `(wallet, id)` (a
  wallet's pages, newest first), `transactions (sender)`.
* `daemons`: one row per wallet, its daemon's last heartbeat (`bot status --all`).

Backfill, from the rows' own evidence: a strategy's state goes to the one wallet whose
intents or orders name that strategy (a pause, kept under `@daemon` as `paused:NAME`, to
NAME's); a strategy two wallets ran shared its state (a pause paused it for both), so
each of them gets its own copy. A command goes to the wallet of the strategy or the order
its payload names; a queued one naming a strategy several wallets ran, to each of them (a
copy each: before 0006 any of their daemons could take it). Without such evidence, the
journal's one wallet (when its intents, orders and transactions name exactly one), else
`''` (not named: the first daemon that opens the journal for its wallet claims them) —
except a pause, and a queued command naming a strategy, which go to every wallet of the
journal: before 0006 they held for whichever daemon ran that strategy, and a pause given
to the wrong wallet would let a strategy the user paused trade. Every row is kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_wallet_scope"
down_revision: str | None = "0005_swap_fills"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UNNAMED = ""
_PAUSE_OWNER = "@daemon"
_PAUSE_PREFIX = "paused:"


def _one(wallets: set[str]) -> str | None:
    return next(iter(wallets)) if len(wallets) == 1 else None


def _strategy_wallets(conn: sa.Connection) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    rows = conn.execute(
        sa.text(
            "SELECT strategy, wallet FROM intents UNION "
            "SELECT strategy, wallet FROM orders WHERE strategy IS NOT NULL"
        )
    )
    for strategy, wallet in rows:
        found.setdefault(strategy, set()).add(wallet)
    return found


class _Wallets:
    """The journal's wallets: by strategy (from intents and orders), and all of them."""

    def __init__(self, conn: sa.Connection) -> None:
        self.by_strategy = _strategy_wallets(conn)
        rows = conn.execute(
            sa.text(
                "SELECT wallet FROM intents UNION SELECT wallet FROM orders "
                "UNION SELECT sender FROM transactions"
            )
        )
        self.every = sorted({wallet for (wallet,) in rows})
        self.default = _one(set(self.every)) or _UNNAMED
        """Of a row without evidence: the journal's one wallet, else not named."""

    def of_strategy(self, strategy: str, *, to_all: bool) -> list[str]:
        """Every wallet that ran `strategy`; else every wallet (`to_all`) or the default."""
        found = sorted(self.by_strategy.get(strategy, set()))
        if found:
            return found
        return self.every if to_all and len(self.every) > 1 else [self.default]


def _state_wallets(strategy: str, key: str, wallets: _Wallets) -> list[str]:
    """The wallets a state row belongs to: every wallet that ran its strategy, else `default`.

    A strategy of one name run by several wallets shared this row before 0006 (its pause
    paused it for all of them, its progress was theirs): each of them gets its own copy. A
    pause without evidence goes to every wallet: a pause is never dropped from one.
    """
    if strategy == _PAUSE_OWNER and key.startswith(_PAUSE_PREFIX):
        return wallets.of_strategy(key[len(_PAUSE_PREFIX) :], to_all=True)
    return wallets.of_strategy(strategy, to_all=False)


def _command_wallets(
    conn: sa.Connection, payload_json: str, state: str, wallets: _Wallets
) -> list[str]:
    """The wallets a command goes to (a queued one naming a strategy: each that may run it)."""
    try:
        payload = json.loads(payload_json)
    except ValueError:
        return [wallets.default]
    if not isinstance(payload, dict):
        return [wallets.default]
    strategy, order_id = payload.get("strategy"), payload.get("order_id")
    if isinstance(strategy, str):
        if state == "queued":  # still to run: each wallet that may run the strategy
            return wallets.of_strategy(strategy, to_all=True)
        return [_one(wallets.by_strategy.get(strategy, set())) or wallets.default]
    if isinstance(order_id, str):
        query = sa.text("SELECT DISTINCT wallet FROM orders WHERE order_id = :o")
        return [_one({w for (w,) in conn.execute(query, {"o": order_id})}) or wallets.default]
    return [wallets.default]


def _backfill(conn: sa.Connection) -> list[tuple[str, str, str, str]]:
    """Give each row its wallet; the state rows still to copy to more wallets.

    Each copy: (strategy, key, the wallet given, another wallet).
    """
    wallets = _Wallets(conn)
    copies: list[tuple[str, str, str, str]] = []
    states = conn.execute(sa.text("SELECT strategy, key FROM strategy_state")).all()
    for strategy, key in states:
        first, *others = _state_wallets(strategy, key, wallets)
        conn.execute(
            sa.text("UPDATE strategy_state SET wallet = :w WHERE strategy = :s AND key = :k"),
            {"w": first, "s": strategy, "k": key},
        )
        copies += [(strategy, key, first, other) for other in others]
    # In id order: copies are appended in the order the queue had them (a pause then its
    # resume stay so in every wallet's queue).
    commands = conn.execute(
        sa.text("SELECT id, payload_json, state FROM commands ORDER BY id")
    ).all()
    for command_id, payload_json, state in commands:
        first, *others = _command_wallets(conn, payload_json, state, wallets)
        conn.execute(
            sa.text("UPDATE commands SET wallet = :w WHERE id = :i"),
            {"w": first, "i": command_id},
        )
        for other in others:
            conn.execute(
                sa.text(
                    "INSERT INTO commands (created_at, kind, payload_json, state, result,"
                    " updated_at, wallet) SELECT created_at, kind, payload_json, state, result,"
                    " updated_at, :o FROM commands WHERE id = :i"
                ),
                {"o": other, "i": command_id},
            )
    return copies


def _copy_states(conn: sa.Connection, copies: list[tuple[str, str, str, str]]) -> None:
    """Each shared state row copied to every other wallet that ran its strategy."""
    for strategy, key, first, other in copies:
        conn.execute(
            sa.text(
                "INSERT INTO strategy_state (strategy, key, value_json, updated_at, wallet) "
                "SELECT strategy, key, value_json, updated_at, :o FROM strategy_state "
                "WHERE strategy = :s AND key = :k AND wallet = :w"
            ),
            {"o": other, "s": strategy, "k": key, "w": first},
        )


def upgrade() -> None:
    """Add and backfill the wallet columns, change the keys, add `daemons`."""
    for table in ("strategy_state", "commands"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("wallet", sa.String(), nullable=True))
    copies = _backfill(op.get_bind())
    with op.batch_alter_table("strategy_state") as batch:
        batch.alter_column("wallet", existing_type=sa.String(), nullable=False)
        batch.drop_constraint("pk_strategy_state", type_="primary")
        batch.create_primary_key("pk_strategy_state", ["strategy", "key", "wallet"])
    _copy_states(op.get_bind(), copies)
    with op.batch_alter_table("commands") as batch:
        batch.alter_column("wallet", existing_type=sa.String(), nullable=False)
        batch.create_index("ix_commands_wallet_state", ["wallet", "state"], unique=False)
    with op.batch_alter_table("intents") as batch:
        batch.drop_constraint("uq_intents_strategy_idempotency_key", type_="unique")
        batch.create_unique_constraint(
            "uq_intents_wallet_strategy_idempotency_key", ["wallet", "strategy", "idempotency_key"]
        )
    with op.batch_alter_table("orders") as batch:
        batch.create_index("ix_orders_wallet_kind", ["wallet", "kind"], unique=False)
        batch.create_index("ix_orders_wallet_id", ["wallet", "id"], unique=False)
    with op.batch_alter_table("transactions") as batch:
        batch.create_index("ix_transactions_sender", ["sender"], unique=False)
    op.create_table(
        "daemons",
        sa.Column("wallet", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("health", sa.String(), nullable=False),
        sa.Column("version", sa.String(), nullable=False),
        sa.Column("strategies", sa.Integer(), nullable=False),
        sa.Column("heartbeat_seconds", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.Text(), nullable=False),
        sa.Column("beat_at", sa.Text(), nullable=False),
        sa.Column("last_tick_at", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("wallet", name="pk_daemons"),
    )


def downgrade() -> None:
    """Back to one state and one queue for the database.

    Fails where two wallets share a strategy's key: the older schema cannot hold both.
    """
    op.drop_table("daemons")
    with op.batch_alter_table("transactions") as batch:
        batch.drop_index("ix_transactions_sender")
    with op.batch_alter_table("orders") as batch:
        batch.drop_index("ix_orders_wallet_id")
        batch.drop_index("ix_orders_wallet_kind")
    with op.batch_alter_table("intents") as batch:
        batch.drop_constraint("uq_intents_wallet_strategy_idempotency_key", type_="unique")
        batch.create_unique_constraint(
            "uq_intents_strategy_idempotency_key", ["strategy", "idempotency_key"]
        )
    with op.batch_alter_table("commands") as batch:
        batch.drop_index("ix_commands_wallet_state")
        batch.drop_column("wallet")
    with op.batch_alter_table("strategy_state") as batch:
        batch.drop_constraint("pk_strategy_state", type_="primary")
        batch.create_primary_key("pk_strategy_state", ["strategy", "key"])
        batch.drop_column("wallet")
