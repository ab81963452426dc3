"""Strategy state: small JSON values a strategy keeps between runs, per (strategy, key).

Per wallet: a journal opened for a wallet reads and writes that wallet's values only; one
opened for no wallet those of `UNNAMED_WALLET` (claimed by the first daemon that opens
the journal for its wallet, `claim_unnamed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlmodel import col
from sqlmodel import select as sm_select

from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.codec import decode_json
from bot.journal.models import UNNAMED_WALLET, Command, StrategyState

__all__ = ["StrategyStateMixin"]


class StrategyStateMixin(JournalBase):
    """Reading and writing a strategy's stored values."""

    def get_state(self, strategy: str, key: str, default: Any = None) -> Any:
        """A strategy's stored value (Decimals and datetimes come back as such), or default."""
        with self._reading() as session:
            row = session.get(StrategyState, (strategy, key, self._owner()))
            return default if row is None else decode_json(row.value_json)

    def set_state(self, strategy: str, key: str, value: Any, *, at: datetime) -> None:
        """Store a JSON value for (strategy, key).

        `Decimal`s are stored tagged (`{"$decimal": "1.5"}`) and read back exactly; floats
        are refused (see `bot.journal.codec`).
        """
        self.set_states(strategy, {key: value}, at=at)

    def set_states(self, strategy: str, values: Mapping[str, Any], *, at: datetime) -> None:
        """Store several values of one strategy in one transaction (all or none)."""
        if not values:
            return
        encoded = {k: canon.json_text(v, f"state {strategy}.{k}") for k, v in values.items()}
        moment = canon.aware(at)
        owner = self._owner()
        with self._writing() as session:
            for key, value_json in encoded.items():
                row = session.get(StrategyState, (strategy, key, owner))
                if row is None:
                    row = StrategyState(
                        strategy=strategy,
                        key=key,
                        value_json=value_json,
                        updated_at=moment,
                        wallet=owner,
                    )
                else:
                    row.value_json = value_json
                    row.updated_at = moment
                session.add(row)

    def states(self, strategy: str) -> dict[str, Any]:
        """Every stored value of a strategy, by key (sorted), in one query."""
        query = (
            sm_select(StrategyState)
            .where(StrategyState.strategy == strategy, StrategyState.wallet == self._owner())
            .order_by(col(StrategyState.key))
        )
        with self._reading() as session:
            return {r.key: decode_json(r.value_json) for r in session.exec(query)}

    def delete_state(self, strategy: str, key: str) -> bool:
        """Forget one key; True when it existed."""
        with self._writing() as session:
            row = session.get(StrategyState, (strategy, key, self._owner()))
            if row is None:
                return False
            session.delete(row)
            return True

    def state_keys(self, strategy: str) -> list[str]:
        """The keys a strategy has stored, sorted."""
        query = (
            sm_select(StrategyState)
            .where(StrategyState.strategy == strategy, StrategyState.wallet == self._owner())
            .order_by(col(StrategyState.key))
        )
        with self._reading() as session:
            return [r.key for r in session.exec(query)]

    def claim_unnamed(self) -> int:
        """Take the strategy state and queued commands no wallet was named for.

        For the daemon that holds its wallet's lock, at start: rows written before `0006`
        without evidence of their wallet, or by a journal opened for no wallet (a tool of
        before), become this wallet's. A key this wallet already holds keeps its value.
        Returns how many rows were claimed (0 for a journal opened for no wallet).
        """
        if self.wallet is None:
            return 0
        wallet = self.wallet
        with self._writing() as session:
            held = {
                (r.strategy, r.key)
                for r in session.exec(
                    sm_select(StrategyState).where(StrategyState.wallet == wallet)
                )
            }
            claimed = 0
            unnamed = sm_select(StrategyState).where(StrategyState.wallet == UNNAMED_WALLET)
            for row in list(session.exec(unnamed)):
                if (row.strategy, row.key) in held:
                    continue
                session.add(
                    StrategyState(
                        strategy=row.strategy,
                        key=row.key,
                        value_json=row.value_json,
                        updated_at=row.updated_at,
                        wallet=wallet,
                    )
                )
                session.delete(row)
                claimed += 1
            queued = sm_select(Command).where(
                Command.wallet == UNNAMED_WALLET, Command.state == "queued"
            )
            for command in list(session.exec(queued)):
                command.wallet = wallet
                session.add(command)
                claimed += 1
            return claimed
