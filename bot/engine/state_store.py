"""Where the strategies' saved state lives: the journal, or a dry run's overlay on it.

A strategy reads its state from `Context.state` and saves with `Context.save`; the engine
loads the state before a tick and stores what was saved after it, through a `StateStore`.

* `JournalStateStore`: the journal's `strategy_state` table — live and paper runs (one of
  the live adapters, `bot.engine.live_ports`; the `StateStore` port: `bot.engine.ports`).
* `OverlayStateStore`: a dry run's. It reads the state underneath (the journal) updated
  by what the dry run saved, and writes only to memory: a dry-run daemon keeps its own
  continuity from tick to tick, while the journal — what the real run will read — is never
  touched. "Dry run, then go live" therefore starts the live run where the dry run started.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bot.engine.live_ports import JournalStateStore
from bot.engine.ports import StateStore
from bot.journal import canon
from bot.journal.codec import decode_json

__all__ = ["JournalStateStore", "OverlayStateStore", "StateStore"]


class OverlayStateStore:
    """A dry run's state: the store underneath, overlaid with what this process saved.

    Reads: the underlying values updated by the overlay. Writes: the overlay only, kept
    for the life of this object (one dry-run process). Values are held as the journal
    would store them (exact JSON text), so a value the journal would refuse is refused
    here too, and a strategy mutating what it read never changes what is stored.
    """

    def __init__(self, base: StateStore) -> None:
        self.base = base
        self._saved: dict[str, dict[str, str]] = {}

    def load(self, strategy: str) -> dict[str, Any]:
        """The underlying values of `strategy`, with this run's saved values on top."""
        values = self.base.load(strategy)
        for key, text in self._saved.get(strategy, {}).items():
            values[key] = decode_json(text)
        return dict(sorted(values.items()))

    def save(self, strategy: str, values: Mapping[str, Any], *, at: datetime) -> None:
        """Keep `values` in memory (checked as the journal checks them); nothing is written."""
        canon.aware(at)
        encoded = {k: canon.json_text(v, f"state {strategy}.{k}") for k, v in values.items()}
        self._saved.setdefault(strategy, {}).update(encoded)
