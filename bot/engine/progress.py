"""Is a strategy getting anywhere? Its ticks judged by what became of their actions.

A daemon whose strategies tick on time can still trade nothing: every action refused by a
cap, every attempt failing, or a key held by an intent whose outcome is unknown (never
blindly retried, so that strategy proposes the same key for nothing until the intent is
settled). `ProgressTracker` follows each strategy's ticks and says which are stuck:

* `stuck_after` ticks in a row that failed (raised, timed out) make the strategy *stuck*
  (the daemon then reads `degraded`); a tick that runs ends that spell;
* so do `stuck_after` proposing ticks in a row whose every fresh action was refused,
  failed or left unknown; a tick with an action carried out now (or a dry run's) ends
  that spell, while a tick that proposes nothing, or only keys already done, leaves the
  count alone (a ladder resting on its placed orders is neither stuck nor progressing);
* a key *blocked* by an intent still `sent`/`unknown` makes the strategy stuck at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from bot.engine.actions import describe
from bot.price_view import PriceConvention

if TYPE_CHECKING:
    from bot.engine.engine import TickReport

__all__ = ["BLOCKING_STATES", "ProgressTracker", "StrategyProgress"]

BLOCKING_STATES: Final = frozenset({"planned", "sent", "unknown"})
"""Intent states that hold their key: the outcome is not known, so nothing is resent."""
_DONE_STATES: Final = frozenset({"confirmed", "reconciled", "dry-run"})


@dataclass
class StrategyProgress:
    """One strategy's spell without progress, as the last ticks left it."""

    ticks_without_progress: int = 0
    """Ticks in a row whose proposed actions were all refused, failed or left unknown."""
    reason: str | None = None
    """The last such tick's reason."""
    failed_ticks: int = 0
    """Ticks in a row that failed (raised, timed out); any tick that ran ends the spell."""
    failure: str | None = None
    blocked: str | None = None
    """Why one of its keys is held (an intent whose outcome is unknown), or None."""


class ProgressTracker:
    """Counts each strategy's ticks without progress; names the stuck ones."""

    def __init__(self, stuck_after: int, convention: PriceConvention | None = None) -> None:
        self.stuck_after = stuck_after
        self.convention = convention
        self._progress: dict[str, StrategyProgress] = {}

    def of(self, name: str) -> StrategyProgress:
        """The strategy's record (created empty)."""
        return self._progress.setdefault(name, StrategyProgress())

    def forget(self, name: str) -> None:
        """The strategy was removed (or rebuilt: a new instance starts afresh)."""
        self._progress.pop(name, None)

    def record(self, report: TickReport) -> None:
        """Count one tick of `report.strategy`."""
        progress = self.of(report.strategy)
        if not report.ok:
            progress.failed_ticks += 1
            progress.failure = f"failed: {report.error or 'unknown error'}"
            return
        progress.failed_ticks = 0  # the tick itself ran: a spell of failing ticks is over
        progress.blocked = _blocked(report, self.convention)
        proposed = len(report.outcomes) + len(report.refusals)
        if proposed == 0:
            return
        # Only a fresh result is progress: a key already done, re-proposed (a plugin
        # returning its whole desired set every tick), says nothing about the others.
        if any(
            outcome.state in _DONE_STATES and not outcome.duplicate
            for _, outcome in report.outcomes
        ):
            progress.ticks_without_progress = 0
            progress.reason = None
            return
        if all(outcome.duplicate for _, outcome in report.outcomes) and not report.refusals:
            return  # only keys already done (or held: `blocked` says so): nothing tried
        progress.ticks_without_progress += 1
        progress.reason = _why_not(report)

    def stuck(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """The stuck strategies (of `names`, default all) and why, in name order."""
        found: dict[str, str] = {}
        for name in sorted(self._progress if names is None else names):
            progress = self._progress.get(name)
            if progress is None:
                continue
            if progress.blocked is not None:
                found[name] = progress.blocked
            elif progress.failed_ticks >= self.stuck_after:
                count = progress.failed_ticks
                found[name] = f"its last {count} ticks failed ({progress.failure})"
            elif progress.ticks_without_progress >= self.stuck_after:
                count = progress.ticks_without_progress
                found[name] = f"no progress for {count} ticks in a row ({progress.reason})"
        return found


def _blocked(report: TickReport, convention: PriceConvention | None) -> str | None:
    for action, outcome in report.outcomes:
        if outcome.duplicate and outcome.state in BLOCKING_STATES:
            return (
                f"key {action.key!r} held by an intent still {outcome.state} "
                f"({describe(action, convention)}); settle it with bot reconcile"
            )
    return None


def _why_not(report: TickReport) -> str:
    for _action, refusal in report.refusals:
        return f"refused: {refusal}"
    for _action, outcome in report.outcomes:
        if outcome.state == "failed":
            return f"failed: {outcome.detail or 'no detail'}"
    states = sorted({outcome.state for _, outcome in report.outcomes})
    return f"outcome {', '.join(states)}"
