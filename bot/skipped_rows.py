"""Rows of a user's file that were not used, said in one line (issue 21, item 5).

Every reader of a user's file (price series, imports) that skips a bad row keeps a
`SkippedRows`: how many rows it read, how many it skipped, and where and why for the
first few. `line()` is the one summary the CLI prints (stderr) and the daemon or the
backtest logs:

    prices.csv: skipped 3 of 1,204 rows (line 7: price 'abc' is not a number; line 9:
    time 'noon' is not ISO 8601 or epoch seconds; line 12: duplicate time)

A file with no usable row at all is not a summary but an error: the reader (or its
caller) raises one line instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = ["SHOWN", "SkippedRows", "shown_value"]

SHOWN: Final = 3
"""How many skipped rows the line names (the others are counted)."""
_VALUE_CHARS: Final = 40


def shown_value(value: object) -> str:
    """A cell as a reason quotes it: `repr`, cut to a readable length."""
    text = repr(value if isinstance(value, str) else str(value))
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 2] + "…'"


@dataclass
class SkippedRows:
    """The skipped rows of one file: counts, and where and why for the first `SHOWN`.

    Attributes:
        name: the file as the user named it.
        unit: what a position counts (`line` in a text file, `row` in Parquet).
        rows: data rows read (skipped ones included).
        skipped: rows not used.
        examples: (position, reason) of the first `SHOWN` skipped rows, by position.
    """

    name: str
    unit: str = "line"
    rows: int = 0
    skipped: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)

    def skip(self, position: int, reason: str) -> None:
        """Count one skipped row at `position` (line or row number, from 1)."""
        self.skipped += 1
        if len(self.examples) < SHOWN or position < self.examples[-1][0]:
            # the first rows of the file, whatever order they were found in (a repeated
            # time is found after the whole file is read)
            self.examples.append((position, reason))
            self.examples.sort(key=lambda example: example[0])
            del self.examples[SHOWN:]

    def line(self) -> str | None:
        """The one-line summary, or None when no row was skipped."""
        if not self.skipped:
            return None
        where = "; ".join(f"{self.unit} {at}: {why}" for at, why in self.examples)
        more = self.skipped - len(self.examples)
        if more > 0:
            where += f"; {more:,} more"
        noun = "row" if self.rows == 1 else "rows"
        return f"{self.name}: skipped {self.skipped:,} of {self.rows:,} {noun} ({where})"
