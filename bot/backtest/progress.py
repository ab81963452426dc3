"""Progress of long backtests and sweeps, on stderr.

One run: the runner calls the bar with the simulated time it has reached; the bar shows
how far that is through the window. It draws nothing when the stream is not a terminal
(piped output, CI, tests) and nothing during the first `delay` seconds, so short runs
stay quiet, and it redraws at most every `interval` seconds, so it costs next to nothing.

A sweep (`SweepProgress`): on a terminal one refreshed line (`sweep: 3/8 done`); piped, a
plain line per finished run — or, past `PER_RUN_LINES` runs, one each time another tenth
of the grid is done — so a log or CI output shows how far it got, without carriage
returns. Wall time is read through an injectable `monotonic` (display only; simulated
time is the runner's).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime
from typing import TextIO

__all__ = ["PER_RUN_LINES", "ProgressBar", "SweepProgress", "progress_for"]

PER_RUN_LINES = 20
"""A piped sweep of up to this many runs prints a line per run; a larger one per 10 %."""


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


class SweepProgress:
    """`progress(row)` as each sweep run finishes: a refreshed line or plain lines."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty is not None and isatty())
        self.monotonic = monotonic
        self.began = monotonic()
        self.done = 0
        self.failed = 0

    def start(self, workers: int) -> None:
        """Say what is about to run (piped output only: a terminal shows the counter)."""
        if not self.terminal:
            runs = f"{self.total} run{'s' if self.total != 1 else ''}"
            self._line(f"sweep: {runs} on {workers} worker process(es)")

    def __call__(self, row: object) -> None:
        """One more run finished (`row`: its `SweepRow`; an error counts as failed)."""
        self.done += 1
        self.failed += getattr(row, "error", None) is not None
        failed = f", {self.failed} failed" if self.failed else ""
        if self.terminal:
            end = "\n" if self.done == self.total else ""
            text = f"\rsweep: {self.done}/{self.total} done{failed}"
            print(text, end=end, file=self.stream, flush=True)
            return
        if self.total > PER_RUN_LINES:
            tenth = self.done * 10 // self.total
            if tenth == (self.done - 1) * 10 // self.total and self.done != self.total:
                return  # not yet another tenth
        elapsed = self.monotonic() - self.began
        percent = self.done * 100 // self.total
        self._line(
            f"sweep: {self.done}/{self.total} runs done ({percent}%){failed}, {elapsed:.1f} s"
        )

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)
