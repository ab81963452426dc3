"""`bot export trades`' application part: the journal's trades → one CSV file, atomically.

Reads the journal (the caller opens it read-only) through the report's loader
(`bot.app.report_load.load_trades`: the trades the accounting sees, and their price book),
keeps the window's trades, lays them out (`bot.accounting.exports`) and writes the file:
a temporary file in the target's directory, flushed and synced, then moved into place in
one step, so a reader never sees half a file. Without `force` an existing path (a
symbolic link too, even a dangling one) is refused, also when it appears while the file
is written; with `force` the path itself is replaced (a link is replaced, its target is
never written through). The file is created with mode 0600 (it lists the wallet's
trades). A window without trades writes nothing.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from bot.accounting import Trade
from bot.accounting.exports import APT_COIN_TYPE, ExportFormat, render, tool_rows, unnamed
from bot.app.errors import SetupError
from bot.app.report_load import load_trades

if TYPE_CHECKING:
    from bot.journal import Journal

__all__ = ["ExportRequest", "ExportResult", "export_trades", "symbol_names", "write_atomically"]


@dataclass(frozen=True)
class ExportRequest:
    """What to export: the layout, the file, the window [start, end], one strategy or all."""

    fmt: ExportFormat
    output: Path
    start: datetime | None = None
    end: datetime | None = None
    strategy: str | None = None
    force: bool = False


@dataclass(frozen=True)
class ExportResult:
    """What was written: trades and rows (0: nothing written), tokens named by identity."""

    trades: int
    rows: int
    unnamed: tuple[str, ...]


def symbol_names(tokens: Iterable[str], symbol_of: Callable[[str], str | None]) -> dict[str, str]:
    """Each token's symbol by `symbol_of` (None: unknown), as the exports name tokens.

    Unknown tokens and symbols that two of `tokens` share (a tax tool would merge them)
    are left out: the exports write those by their identity.
    """
    found = {token: symbol_of(token) for token in set(tokens)}
    counts = Counter(symbol for symbol in found.values() if symbol)
    return {t: s for t, s in sorted(found.items()) if s and counts[s] == 1}


def _check_output(output: Path, force: bool) -> None:
    if output.is_dir():
        raise SetupError(f"--output {output}: is a directory")
    if not output.parent.is_dir():
        raise SetupError(f"--output {output}: no directory {output.parent}")
    if not force and os.path.lexists(output):
        raise SetupError(f"--output {output}: exists (--force replaces it)")


def export_trades(
    journal: Journal,
    request: ExportRequest,
    configured: Iterable[str],
    symbol_of: Callable[[str], str | None],
) -> ExportResult:
    """Write the window's trades of `request.strategy` (None: all) to `request.output`.

    `configured`: the configuration's strategy names (with the journal's own, the names
    `request.strategy` may take). `symbol_of(token)`: its symbol, None when unknown.

    Raises:
        SetupError: an unknown strategy (named, with the known ones), a window whose start
            is after its end, or an output path that exists (without `force`), is a
            directory or is in no directory; an `OSError` writing it, as one line.
    """
    if request.start and request.end and request.start > request.end:
        raise SetupError(
            f"--from {request.start.isoformat()} is after --to {request.end.isoformat()}"
        )
    _check_output(request.output, request.force)
    orders = journal.orders()
    known = sorted({*configured, *(o.strategy for o in orders if o.strategy)})
    if request.strategy is not None and request.strategy not in known:
        listed = ", ".join(known) if known else "none"
        raise SetupError(f"unknown strategy {request.strategy!r} (known: {listed})")
    trades, book, _ = load_trades(journal, request.strategy, orders)
    chosen = [t for t in trades if _in_window(t, request.start, request.end)]
    if not chosen:
        return ExportResult(0, 0, ())
    tokens = {t for trade in chosen for t in (trade.sold_token, trade.bought_token)}
    tokens |= {fee.token for trade in chosen for fee in trade.fees}
    tokens |= {APT_COIN_TYPE} if any(trade.gas_octas for trade in chosen) else set()
    names = symbol_names(tokens, symbol_of)
    text = render(request.fmt, chosen, book, names)
    rows = len(chosen)
    if request.fmt is not ExportFormat.CSV:
        rows = sum(len(tool_rows(t, book)) for t in chosen)
    try:
        write_atomically(request.output, text.encode("utf-8"), replace=request.force)
    except FileExistsError:
        raise SetupError(f"--output {request.output}: exists (--force replaces it)") from None
    except OSError as exc:
        raise SetupError(f"--output {request.output}: {exc.strerror or exc}") from None
    return ExportResult(len(chosen), rows, tuple(unnamed(chosen, names)))


def _in_window(trade: Trade, start: datetime | None, end: datetime | None) -> bool:
    return (start is None or trade.time >= start) and (end is None or trade.time <= end)


def write_atomically(path: Path, data: bytes, *, replace: bool) -> None:
    """Write `data` to `path` all at once: a synced temporary file in its directory, moved.

    `replace`: an existing `path` (or a link there) is replaced; otherwise the move is a
    hard link that fails with `FileExistsError` when `path` exists, even if it appeared
    meanwhile (where the file system has no hard links: checked just before the move).
    """
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.replace(temporary, path)
            return
        try:
            os.link(temporary, path, follow_symlinks=False)
        except FileExistsError:
            raise
        except OSError:  # no hard links here: the check just before the move
            if os.path.lexists(path):
                raise FileExistsError(path) from None
            os.replace(temporary, path)
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)
