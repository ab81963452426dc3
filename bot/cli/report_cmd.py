"""`bot report [--strategy S] [--from ISO] [--to ISO] [--by day|week|month] [--json|--html DIR]`.

`--paper` with no config file reads the paper demo's journal (`reading_settings`).

Parses and prints; the figures come from `bot.app.report` (journal read-only), the table
from `bot.app.accounting_view` (display rounding `bot.price_view`'s: USD to 2 decimal
places, prices to 6 significant digits, percents to 2 decimal places, all half to even;
token amounts exact). `--json` gives the exact figures, decimals as strings. `--html DIR`
writes `DIR/index.html` (`bot.app.report_page`: the same figures with SVG charts); an
existing one is replaced only with `--force`.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.accounting import BucketPeriod, CostMethod
from bot.app.accounting_view import ROUNDING_NOTE, report_json, summary_lines
from bot.app.report import Report, ReportRequest, build_report
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

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.price_view import PriceConvention

__all__ = ["PAGE_NAME", "report", "summary_lines"]

PAGE_NAME = "index.html"
"""The file `--html DIR` writes."""


def _time(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_utc(text)
    except ValueError:
        fail(f"{option}: not an ISO 8601 time: {text!r}", EXIT_USAGE)


def report(
    ctx: typer.Context,
    strategy: Annotated[
        str | None, typer.Option(help="Only this strategy. Default: every strategy.")
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(
            "--from", help="Window start (ISO 8601; no offset: UTC). Default: the first record."
        ),
    ] = None,
    end: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="Window end (ISO 8601; no offset: UTC). "
            "Default: the latest record (a trade or a price).",
        ),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option("--by", help="One row per day, week or month. Default: totals only."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (exact).")] = False,
    html_dir: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="DIR",
            help="Write DIR/index.html: the report with charts. Default: none.",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="With --html: replace an existing index.html.")
    ] = False,
    paper: Annotated[bool, typer.Option("--paper", help=PAPER_READ_HELP)] = False,
) -> None:
    """Per strategy: invested and received, average entry vs the market, value, P&L, fees, gas.

    Buckets follow `[accounting].time_zone`; P&L the `[accounting].cost_basis`.
    """
    if by is not None and by not in {p.value for p in BucketPeriod}:
        fail(f"--by must be day, week or month, got {by!r}", EXIT_USAGE)
    window = (_time(start, "--from"), _time(end, "--to"))
    if window[0] and window[1] and window[0] > window[1]:
        fail(f"--from {start} is after --to {end}", EXIT_USAGE)
    if html_dir is not None:
        _check_target(html_dir, force=force, as_json=as_json)
    elif force:
        fail("--force applies to --html only", EXIT_USAGE)
    settings = reading_settings(ctx, paper=paper)
    request = ReportRequest(
        strategy=strategy,
        start=window[0],
        end=window[1],
        period=BucketPeriod(by) if by is not None else None,
        zone=settings.accounting.time_zone,
        method=CostMethod(settings.accounting.cost_basis),
    )
    prices = convention(settings)
    configured = [s.name for s in settings.strategies]
    if html_dir is not None:
        _write_page(html_dir, settings, request, prices, configured)
        return
    from bot.app.report_workers import processors

    with open_journal(settings.journal.url, readonly=True, wallet=own_wallet(settings)) as journal:
        result = build_report(journal, request, configured, prices.quote_of, processes=processors())
    if as_json:
        typer.echo(json.dumps(report_json(result), indent=2))
        return
    if result.empty:
        typer.echo(f"no trades {_window(result)}")
        return
    for name, summary in result.summaries.items():
        for line in summary_lines(summary, prices, result.locked.get(name, ())):
            typer.echo(line)
        typer.echo("")
    if result.gas_unknown:
        count = len(result.gas_unknown)
        typer.echo(
            f"gas of {count} transaction{'s' if count != 1 else ''} unknown "
            "(recorded before the journal kept gas prices): not counted"
        )
    typer.echo(ROUNDING_NOTE)


def _check_target(folder: Path, *, force: bool, as_json: bool) -> None:
    """Refuse (exit 2) `--html` with `--json`, a file as folder, or an existing page."""
    if as_json:
        fail("--html and --json: choose one", EXIT_USAGE)
    if folder.exists() and not folder.is_dir():
        fail(f"--html {str(folder)!r}: not a folder", EXIT_USAGE)
    target = folder / PAGE_NAME
    if target.exists() and not force:
        fail(f"--html {str(folder)!r}: {target} exists (--force replaces it)", EXIT_USAGE)


def _write_page(
    folder: Path,
    settings: Settings,
    request: ReportRequest,
    prices: PriceConvention,
    configured: list[str],
) -> None:
    """Build the page (buckets: `--by`, else by the window's length) and write it.

    Written beside and renamed into place: a reader never sees half a page.
    """
    from bot.accounting import zone_of
    from bot.app.report_load import load_records
    from bot.app.report_page import default_period, report_page

    with open_journal(settings.journal.url, readonly=True, wallet=own_wallet(settings)) as journal:
        loaded = load_records(journal, request.strategy)
        trades, book, latest = loaded.trades, loaded.book, loaded.latest
        period = request.period
        if period is None:
            counted = [t.time for t in trades if request.start is None or t.time >= request.start]
            first = request.start or min(counted, default=latest)
            last = request.end or latest
            period = (
                default_period(first, last)
                if first is not None and last is not None
                else BucketPeriod.DAY
            )
        request = replace(request, period=period)
        result = build_report(journal, request, configured, prices.quote_of, loaded)
    text = report_page(result, trades, book, prices, period, zone_of(request.zone))
    target = folder / PAGE_NAME
    partial = folder / f".{PAGE_NAME}.partial"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        fail(f"--html {str(folder)!r}: {exc.strerror or exc}", EXIT_USAGE)
    note = "" if not result.empty else f" (no trades {_window(result)})"
    typer.echo(f"report written to {target}{note}")


def _window(result: Report) -> str:
    request = result.request
    parts = []
    if request.strategy:
        parts.append(f"for strategy {request.strategy}")
    if request.start:
        parts.append(f"from {request.start.isoformat()}")
    if request.end:
        parts.append(f"to {request.end.isoformat()}")
    return " ".join(parts) if parts else "in the journal"
