"""A progress bar for long backtests, on a terminal only.

The runner calls the bar with the simulated time it has reached; the bar shows how far
that is through the window. It draws nothing when the stream is not a terminal (piped
output, CI, tests) and nothing during the first `delay` seconds, so short runs stay
quiet, and it redraws at most every `interval` seconds, so it costs next to nothing.
Wall time is read through an injectable `monotonic` (display only; simulated time is the
runner's).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime
from typing import TextIO

__all__ = ["ProgressBar", "progress_for"]


class ProgressBar:
    """`bar(moment)`: draw `[#####-----]  42%  2026-05-01` on one refreshed line."""

    def __init__(
        self,
        start: datetime,
        end: datetime,
        stream: TextIO,
        *,
        width: int = 30,
        delay: float = 0.5,
        interval: float = 0.1,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.start = start
        self.span = max((end - start).total_seconds(), 1e-9)
        self.stream = stream
        self.width = width
        self.interval = interval
        self.monotonic = monotonic
        self._shown_after = monotonic() + delay
        self._next_draw = self._shown_after
        self._drawn = False

    def __call__(self, moment: datetime) -> None:
        """Note that the backtest reached `moment`; redraw if it is time to."""
        now = self.monotonic()
        if now < self._next_draw:
            return
        self._next_draw = now + self.interval
        self.draw(moment)

    def draw(self, moment: datetime) -> None:
        """Draw the bar for `moment` at once."""
        fraction = min(max((moment - self.start).total_seconds() / self.span, 0.0), 1.0)
        filled = int(fraction * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {fraction:4.0%}  {moment:%Y-%m-%d %H:%M}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the line if anything was drawn (so the next output starts clean)."""
        if self._drawn:
            self.stream.write("\r" + " " * (self.width + 26) + "\r")
            self.stream.flush()
            self._drawn = False


def progress_for(
    start: datetime, end: datetime, stream: TextIO | None = None
) -> ProgressBar | None:
    """A bar on `stream` (default stderr) when it is a terminal; None otherwise."""
    target = stream if stream is not None else sys.stderr
    isatty = getattr(target, "isatty", None)
    if isatty is None or not isatty():
        return None
    return ProgressBar(start, end, target)
