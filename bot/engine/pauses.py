"""Strategies the user paused (`bot strategies pause NAME`), kept in the journal.

A pause outlives the daemon: it is stored in the journal's key/value table under an owner
no strategy can be called (`@daemon`: strategy names are `[A-Za-z0-9_.-]+`), one key per
paused strategy. The running daemon learns of a pause or resume through its command queue
(`bot.engine.commands`), so the process holding the wallet is the one that changes what
runs; without a daemon the command line writes the journal itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from bot.engine.engine import Engine

__all__ = ["PAUSE_OWNER", "PauseStore", "apply_pause", "paused_strategies", "store_pause"]

PAUSE_OWNER: Final = "@daemon"
"""The journal's strategy-state owner of the pause flags (never a strategy's name)."""
_PREFIX: Final = "paused:"


class PauseStore(Protocol):
    """Where pauses are kept: the journal's strategy-state table (`bot.journal.Journal`)."""

    def states(self, strategy: str) -> dict[str, Any]:
        """Every stored value of an owner, by key."""
        ...

    def get_state(self, strategy: str, key: str, default: Any = None) -> Any:
        """One stored value, or `default`."""
        ...

    def set_state(self, strategy: str, key: str, value: Any, *, at: datetime) -> None:
        """Store one JSON value."""
        ...

    def delete_state(self, strategy: str, key: str) -> bool:
        """Forget one key; True when it existed."""
        ...


def paused_strategies(journal: PauseStore) -> dict[str, datetime | None]:
    """The paused strategies and since when (None: time not recorded)."""
    found: dict[str, datetime | None] = {}
    for key, value in journal.states(PAUSE_OWNER).items():
        if key.startswith(_PREFIX):
            since = value.get("since") if isinstance(value, dict) else None
            found[key[len(_PREFIX) :]] = since if isinstance(since, datetime) else None
    return found


def store_pause(journal: PauseStore, name: str, paused: bool, *, at: datetime) -> bool:
    """Record a pause (or its end); False when it was already so."""
    key = _PREFIX + name
    if not paused:
        return journal.delete_state(PAUSE_OWNER, key)
    if journal.get_state(PAUSE_OWNER, key) is not None:
        return False
    journal.set_state(PAUSE_OWNER, key, {"since": at}, at=at)
    return True


def apply_pause(
    engine: Engine, journal: PauseStore, name: str, paused: bool, *, at: datetime
) -> str:
    """Pause or resume a running strategy, in the journal and the engine; one line.

    Raises:
        ValueError: no strategy of that name runs.
    """
    if name not in engine.strategies and (paused or name not in engine.paused):
        if not paused and store_pause(journal, name, False, at=at):
            return f"{name} resumed (it does not run in this daemon)"
        running = ", ".join(sorted(engine.strategies)) or "none"
        raise ValueError(f"no strategy {name!r} runs (running: {running})")
    changed = store_pause(journal, name, paused, at=at)
    engine.reconfigure(paused=engine.paused | {name} if paused else engine.paused - {name})
    verb = "paused" if paused else "resumed"
    return f"{name} {verb}" if changed else f"{name} was already {verb}"
