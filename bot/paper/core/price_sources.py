"""The price series' optional `source` column: where each price came from.

`PRICE_SOURCES` is its vocabulary. Writing refuses any other value (`check_source`);
reading keeps whatever a file says (`read_source`: a row is never skipped for its
source), and a backtest credits the provider only under `provider` prices
(docs/backtesting.md). `add_source_column` gives a CSV file written before the column
existed the column, empty in its old rows.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Final

__all__ = ["PRICE_SOURCES", "add_source_column", "check_source", "read_source"]

PRICE_SOURCES: Final = ("provider", "paper", "synthetic", "import")
"""Where a row's price came from (the optional `source` column): `provider`, recorded
from the real provider (live mode); `paper`, recorded from a paper world (simulated);
`synthetic`, made by `bot series synth`; `import`, brought in by `bot series import`.
A row without one was written before the column existed (docs/price-series.md)."""


def check_source(value: str | None) -> str | None:
    """A source to write: one of `PRICE_SOURCES`, or None (unknown).

    Raises:
        ValueError: any other value.
    """
    if value is not None and value not in PRICE_SOURCES:
        raise ValueError(f"source {value!r}: must be one of {', '.join(PRICE_SOURCES)}")
    return value


def read_source(value: object) -> str | None:
    """A `source` cell as read: its trimmed text, None when absent or empty.

    Reading is tolerant: a value outside `PRICE_SOURCES` is kept as it is (and credited
    to nobody), never a reason to skip the row.
    """
    if value is None:
        return None
    return str(value).strip() or None


def add_source_column(path: Path, header: list[str]) -> list[str]:
    """Rewrite a CSV series with a `source` column, empty in its rows; the new header.

    For a file written before the column existed that now gets rows with a source: the
    old rows keep no source (the compatibility rule of docs/price-series.md), the new
    ones say theirs. Written beside the file, then atomically renamed over it.

    Raises:
        ValueError: the file cannot be read as CSV.
    """
    width = len(header)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with (
            path.open(newline="", encoding="utf-8-sig") as old,
            partial.open("w", newline="", encoding="utf-8") as new,
        ):
            reader = csv.reader(old)
            writer = csv.writer(new)
            next(reader, None)
            writer.writerow([*header, "source"])
            for cells in reader:
                if cells:  # (a blank line stays blank)
                    cells = [*cells[:width], *[""] * (width - len(cells)), "", *cells[width:]]
                writer.writerow(cells)
    except (csv.Error, UnicodeDecodeError) as exc:
        partial.unlink(missing_ok=True)
        raise ValueError(f"{path}: cannot add the source column: {exc}") from None
    os.replace(partial, path)
    return [*header, "source"]
