"""SIGHUP: what a changed config means for the running daemon.

`plan_reload(running, new)` compares the settings the daemon runs with against the file
read again, and sorts every difference into what can change live and what needs a restart:

* live: `[[strategies]]` (added → built and scheduled, removed → `on_stop` and
  unscheduled, changed params/schedule/budget/plugin → rebuilt; unchanged ones keep their
  counters and schedule), `[risk]` (the engine's checker and the signer's policy are
  rebuilt), `[alerts]` (the alerter is restarted), `[daemon]` except `status_file`,
  `[scheduler].strategy_dirs` (every strategy is rebuilt from the folders),
  `[scheduler].strategy_timeout_seconds` and `[scheduler].allow_no_strategies`;
* restart needed (logged, not applied): `mode`, `[api]`, `[chain]`, `[wallet]`,
  `[journal]`, `[paper]`, `[log]`, `[record]`, the other `[scheduler]` keys and
  `[daemon].status_file` — they are wired into clients, the signer, open files and the
  scheduler's own jobs at start-up.

A file without any `[[strategies]]` while strategies run is refused (`ReloadRefused`,
nothing changes) unless it sets `[scheduler].allow_no_strategies = true`: an editor that
emptied the file, or a copy cut short at a line end, must not stop all trading. A file
cut short mid-line does not parse and is refused by `load_settings` before this.

`ReloadGate` keeps a reload from changing the strategy set under a running job: jobs hold
it shared, a reload holds it exclusively.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final

from bot.config import Settings, StrategyEntry

__all__ = ["RESTART_SECTIONS", "ReloadGate", "ReloadPlan", "ReloadRefused", "plan_reload"]

RESTART_SECTIONS: Final = (
    "mode",
    "api",
    "chain",
    "wallet",
    "journal",
    "paper",
    "log",
    "record",
    "console",
    "display",
)
_LIVE_SCHEDULER_KEYS: Final = frozenset(
    {"strategy_dirs", "strategy_timeout_seconds", "allow_no_strategies"}
)


class ReloadRefused(ValueError):
    """The new file must not be applied; the message is the one line to log."""


@dataclass(frozen=True)
class ReloadPlan:
    """What a reload changes, and the settings the daemon runs with afterwards."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    rebuilt: tuple[str, ...]
    unchanged: tuple[str, ...]
    restart_needed: tuple[str, ...]
    """Changed keys not applied, as `[api]` or `[scheduler].tracker_interval_seconds`."""
    applied: tuple[str, ...]
    """Changed keys applied live besides the strategies, as `[risk]` or `[daemon]`."""
    settings: Settings
    """The new file's live parts on the running settings' restart-only parts."""

    @property
    def entries(self) -> dict[str, StrategyEntry]:
        """The enabled strategy entries after the reload, by name."""
        return _enabled(self.settings)

    @property
    def risk_changed(self) -> bool:
        """`[risk]` changed: the risk checker and the signer's policy are rebuilt."""
        return "[risk]" in self.applied

    @property
    def alerts_changed(self) -> bool:
        """`[alerts]` changed: the alerter is restarted."""
        return "[alerts]" in self.applied

    def summary(self) -> str:
        """One line: `added a, b; removed c; rebuilt d; 2 unchanged; applied [risk]`."""
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("added", self.added),
                ("removed", self.removed),
                ("rebuilt", self.rebuilt),
            )
            if names
        ]
        parts.append(f"{len(self.unchanged)} unchanged")
        if self.applied:
            parts.append(f"applied {', '.join(self.applied)}")
        return "; ".join(parts)


def _enabled(settings: Settings) -> dict[str, StrategyEntry]:
    return {e.name: e for e in settings.strategies if e.enabled}


def _restart_needed(running: Settings, new: Settings) -> list[str]:
    needed = [
        f"[{name}]" if name != "mode" else "mode"
        for name in RESTART_SECTIONS
        if getattr(running, name) != getattr(new, name)
    ]
    for key in type(running.scheduler).model_fields:
        if key not in _LIVE_SCHEDULER_KEYS and getattr(running.scheduler, key) != getattr(
            new.scheduler, key
        ):
            needed.append(f"[scheduler].{key}")
    if running.daemon.status_file != new.daemon.status_file:
        needed.append("[daemon].status_file")
    return needed


def _applied(running: Settings, effective: Settings) -> list[str]:
    applied = [
        f"[{name}]"
        for name in ("risk", "alerts", "daemon")
        if getattr(running, name) != getattr(effective, name)
    ]
    applied += [
        f"[scheduler].{key}"
        for key in sorted(_LIVE_SCHEDULER_KEYS)
        if getattr(running.scheduler, key) != getattr(effective.scheduler, key)
    ]
    return applied


def plan_reload(running: Settings, new: Settings) -> ReloadPlan:
    """Sort the differences between `running` and `new` (see the module docstring).

    Raises:
        ReloadRefused: `new` has no `[[strategies]]` at all while `running` has enabled
            ones, and does not set `[scheduler].allow_no_strategies`.
    """
    before, after = _enabled(running), _enabled(new)
    if before and not new.strategies and not new.scheduler.allow_no_strategies:
        raise ReloadRefused(
            f"the new config has no [[strategies]] (an emptied or truncated file?); "
            f"{len(before)} running strateg{'y' if len(before) == 1 else 'ies'} kept; "
            "set [scheduler].allow_no_strategies = true to remove them all"
        )
    dirs_changed = running.scheduler.strategy_dirs != new.scheduler.strategy_dirs
    kept = [n for n in after if n in before]
    rebuilt = [n for n in kept if dirs_changed or before[n] != after[n]]
    scheduler = running.scheduler.model_copy(
        update={k: getattr(new.scheduler, k) for k in _LIVE_SCHEDULER_KEYS}
    )
    daemon = new.daemon.model_copy(update={"status_file": running.daemon.status_file})
    effective = running.model_copy(
        update={
            "strategies": new.strategies,
            "risk": new.risk,
            "alerts": new.alerts,
            "daemon": daemon,
            "scheduler": scheduler,
        }
    )
    return ReloadPlan(
        added=tuple(n for n in after if n not in before),
        removed=tuple(n for n in before if n not in after),
        rebuilt=tuple(rebuilt),
        unchanged=tuple(n for n in kept if n not in rebuilt),
        restart_needed=tuple(_restart_needed(running, new)),
        applied=tuple(_applied(running, effective)),
        settings=effective,
    )


class ReloadGate:
    """Many jobs at once, or one reload alone (a reader–writer lock, writers first)."""

    def __init__(self) -> None:
        self._condition = asyncio.Condition()
        self._jobs = 0
        self._reloading = False

    @asynccontextmanager
    async def job(self) -> AsyncIterator[None]:
        """Hold the gate shared for one job run (waits while a reload is applied)."""
        async with self._condition:
            await self._condition.wait_for(lambda: not self._reloading)
            self._jobs += 1
        try:
            yield
        finally:
            async with self._condition:
                self._jobs -= 1
                self._condition.notify_all()

    @asynccontextmanager
    async def reload(self) -> AsyncIterator[None]:
        """Hold the gate alone: new jobs wait, running ones are waited for."""
        async with self._condition:
            await self._condition.wait_for(lambda: not self._reloading)
            self._reloading = True
            await self._condition.wait_for(lambda: self._jobs == 0)
        try:
            yield
        finally:
            async with self._condition:
                self._reloading = False
                self._condition.notify_all()
