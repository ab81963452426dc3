"""A stand-in for the daemon's alerter: it records what would have been sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.clock import SteppedClock

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class Emitted:
    """One alert: its kind, text and fields."""

    kind: str
    text: str
    fields: dict[str, object]


@dataclass
class FakeAlerter:
    """Records emits; `wanted` None means every kind."""

    clock: SteppedClock = field(default_factory=lambda: SteppedClock(START))
    wanted: set[str] | None = None
    emitted: list[Emitted] = field(default_factory=list)

    def wants(self, kind: str) -> bool:
        """True when alerts of `kind` are wanted."""
        return self.wanted is None or kind in self.wanted

    def emit(self, kind: str, text: str, **fields: object) -> None:
        """Record one alert."""
        self.emitted.append(Emitted(kind, text, fields))

    def kinds(self) -> list[str]:
        """The kinds emitted, in order."""
        return [e.kind for e in self.emitted]
