"""`bot export trades`: every trade in a window as a CSV file, ours or a tax tool's.

`bot export trades --format csv|koinly|cointracking [--from ISO] [--to ISO] [--strategy S]
--output FILE [--force]`.

Parses and prints; the trades come from the journal (read-only) through `bot.app.export`,
the layouts from `bot.accounting.exports` (docs/accounting.md, "bot export trades").
Tokens are named by their symbol in the packaged token list (the names `bot report`
shows); a token it does not know is written by its full identity, and said so.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from bot.accounting.exports import ExportFormat
from bot.app.export import ExportRequest, export_trades
from bot.aptos.tokens import TokenLookupError, token_key
from bot.cli.common import (
    EXIT_USAGE,
    PAPER_READ_HELP,
    fail,
    open_journal,
    own_wallet,
    reading_settings,
)
from bot.cli.orders_view import convention
from bot.clock import parse_utc
from bot.price_view import PriceConvention

__all__ = ["app", "trades"]

app = typer.Typer(help="Exports: every trade, for a tax tool.", no_args_is_help=True)


def _time(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_utc(text)
    except ValueError:
        fail(f"{option}: not an ISO 8601 time: {text!r}", EXIT_USAGE)


def _symbol_of(names: PriceConvention) -> Callable[[str], str | None]:
    def symbol(token: str) -> str | None:
        label = names.label(token)
        try:
            return None if label == token_key(token) else label
        except TokenLookupError:  # a symbol already (tests, hand-made records)
            return label

    return symbol


@app.command("trades")
def trades(
    ctx: typer.Context,
    fmt: Annotated[
        str, typer.Option("--format", help="csv (every field), koinly or cointracking.")
    ] = "csv",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="The file to write (required).")
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(
            "--from", help="Window start (ISO 8601; no offset: UTC). Default: the first trade."
        ),
    ] = None,
    end: Annotated[
        str | None,
        typer.Option("--to", help="Window end (ISO 8601; no offset: UTC). Default: now."),
    ] = None,
    strategy: Annotated[
        str | None, typer.Option(help="Only this strategy. Default: every strategy.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    paper: Annotated[bool, typer.Option("--paper", help=PAPER_READ_HELP)] = False,
) -> None:
    """Every trade in the window, with fees, gas and USD values, as a CSV file.

    Amounts are exact (never rounded); times UTC. An existing file is kept unless --force.
    """
    if fmt not in {f.value for f in ExportFormat}:
        fail(f"--format must be csv, koinly or cointracking, got {fmt!r}", EXIT_USAGE)
    if output is None:
        fail("--output FILE is required", EXIT_USAGE)
    window = (_time(start, "--from"), _time(end, "--to"))
    if window[0] and window[1] and window[0] > window[1]:
        fail(f"--from {start} is after --to {end}", EXIT_USAGE)
    settings = reading_settings(ctx, paper=paper)
    shown = convention(settings)
    request = ExportRequest(ExportFormat(fmt), output, window[0], window[1], strategy, force)
    configured = [s.name for s in settings.strategies]
    names = PriceConvention(shown.quotes, shown.book)  # full identities for unknown tokens
    with open_journal(settings.journal.url, readonly=True, wallet=own_wallet(settings)) as journal:
        result = export_trades(journal, request, configured, _symbol_of(names))
    if result.trades == 0:
        typer.echo(f"no trades {_window(request)}: nothing written")
        return
    rows = "" if result.rows == result.trades else f", {result.rows} rows"
    typer.echo(f"wrote {result.trades} trades{rows} to {output} ({fmt})")
    if result.unnamed:
        typer.echo(
            f"note: {len(result.unnamed)} token(s) without a unique symbol in the token list, "
            f"written by their identity: {', '.join(result.unnamed)}",
            err=True,
        )
    if request.fmt is ExportFormat.COINTRACKING:
        typer.echo("note: the value columns are USD (your CoinTracking account currency)", err=True)


def _window(request: ExportRequest) -> str:
    parts = []
    if request.strategy:
        parts.append(f"for strategy {request.strategy}")
    if request.start:
        parts.append(f"from {request.start.isoformat()}")
    if request.end:
        parts.append(f"to {request.end.isoformat()}")
    return " ".join(parts) if parts else "in the journal"
