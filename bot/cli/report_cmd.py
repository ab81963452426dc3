"""`bot report [--strategy S] [--from ISO] [--to ISO] [--by day|week|month] [--json]`.

Parses and prints; the figures come from `bot.app.report` (journal read-only). Display
rounding (only here): USD to 2 decimal places, prices to 6 significant digits, percents to
2 decimal places, all half to even; token amounts are shown exactly. `--json` gives the
exact figures, decimals as strings.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Annotated, Final

import typer

from bot.accounting import BucketPeriod, CostMethod, Summary, ratio
from bot.app.report import Report, ReportRequest, build_report, holdings_value, summary_data
from bot.cli.common import EXIT_USAGE, fail, load_or_exit, open_journal
from bot.cli.orders_view import convention
from bot.clock import parse_utc
from bot.money import format_decimal
from bot.price_view import PriceConvention, round_significant

__all__ = ["report"]

USD_PLACES: Final = 2
"""Shown USD figures are rounded to this many decimal places (half to even)."""
PRICE_DIGITS: Final = 6
"""Shown prices (average entry, market mean) have at most this many significant digits."""
ROUNDING_NOTE: Final = (
    "USD rounded to 2 places, prices to 6 significant digits; token amounts exact; "
    "--json for exact figures"
)


def _time(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_utc(text)
    except ValueError:
        fail(f"{option}: not an ISO 8601 time: {text!r}", EXIT_USAGE)


def report(
    ctx: typer.Context,
    strategy: Annotated[str | None, typer.Option(help="Only this strategy.")] = None,
    start: Annotated[
        str | None, typer.Option("--from", help="Window start (ISO 8601; no offset: UTC).")
    ] = None,
    end: Annotated[
        str | None, typer.Option("--to", help="Window end (ISO 8601; no offset: UTC).")
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="One row per day, week or month.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (exact).")] = False,
) -> None:
    """Per strategy: invested and received, average entry vs the market, value, P&L, fees, gas.

    Buckets follow `[accounting].time_zone`; P&L the `[accounting].cost_basis`.
    """
    if by is not None and by not in {p.value for p in BucketPeriod}:
        fail(f"--by must be day, week or month, got {by!r}", EXIT_USAGE)
    window = (_time(start, "--from"), _time(end, "--to"))
    if window[0] and window[1] and window[0] > window[1]:
        fail(f"--from {start} is after --to {end}", EXIT_USAGE)
    settings = load_or_exit(ctx)
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
    with open_journal(settings.journal.url, readonly=True) as journal:
        result = build_report(journal, request, configured, prices.quote_of)
    if as_json:
        typer.echo(json.dumps(_json(result), indent=2))
        return
    if result.empty:
        typer.echo(f"no trades {_window(result)}")
        return
    for summary in result.summaries.values():
        for line in summary_lines(summary, prices):
            typer.echo(line)
        typer.echo("")
    typer.echo(ROUNDING_NOTE)


def _json(result: Report) -> dict[str, object]:
    request = result.request
    return {
        "from": None if request.start is None else request.start.isoformat(),
        "to": None if request.end is None else request.end.isoformat(),
        "by": None if request.period is None else str(request.period),
        "time_zone": request.zone,
        "cost_basis": str(request.method),
        "valued_at": None if result.valued_at is None else result.valued_at.isoformat(),
        "strategies": [summary_data(s) for s in result.summaries.values()],
    }


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


def usd(value: Decimal | None) -> str:
    """A USD figure for display: 2 places, half to even (`n/a` when unknown)."""
    if value is None:
        return "n/a"
    shown = value.quantize(Decimal(1).scaleb(-USD_PLACES), rounding=ROUND_HALF_EVEN)
    return f"{shown:,.{USD_PLACES}f} USD"


def _amounts(sums: dict[str, Decimal], prices: PriceConvention) -> str:
    if not sums:
        return "-"
    return ", ".join(f"{format_decimal(a)} {prices.label(t)}" for t, a in sums.items())


def _price(value: Decimal | None) -> str:
    return "n/a" if value is None else format_decimal(round_significant(value, PRICE_DIGITS))


def summary_lines(summary: Summary, prices: PriceConvention) -> list[str]:
    """The console table of one strategy (and its buckets)."""
    totals = summary.totals
    rows: list[tuple[str, str]] = [
        ("trades", str(totals.trades)),
        ("invested", _amounts(totals.invested, prices)),
        ("received", _amounts(totals.received, prices)),
        ("traded", usd(totals.traded_usd) + (" (valued trades only)" if summary.unvalued else "")),
    ]
    position = summary.position
    if position is not None:
        unit = f"{prices.label(position.pair.quote)} per {prices.label(position.pair.base)}"
        entry = position.average_entry
        rows.append(
            (
                "average entry",
                "n/a (nothing bought)" if entry is None else f"{_price(entry)} {unit}",
            )
        )
        if position.sold > 0:
            exit_price = ratio(position.proceeds, position.sold)
            rows.append(("average exit", f"{_price(exit_price)} {unit}"))
        versus = position.entry_vs_market_percent
        against = (
            ""
            if versus is None
            else f" (entry {versus.quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN):+} %)"
        )
        mean = position.market_mean
        shown = "n/a (no recorded prices)" if mean is None else f"{_price(mean)} {unit}{against}"
        rows.append(("market mean (time-weighted)", shown))
    held = ", ".join(
        f"{format_decimal(h.quantity)} {prices.label(h.token)}" for h in summary.holdings
    )
    rows.append(("position value", f"{usd(holdings_value(summary))} ({held or 'nothing held'})"))
    rows.append((f"realised P&L ({summary.method.upper()})", usd(totals.realised_usd)))
    rows.append(("unrealised P&L", usd(summary.unrealised_usd)))
    rows.append(("total P&L", usd(summary.pnl_usd)))
    fees = "; ".join(f"{kind} {_amounts(by, prices)}" for kind, by in totals.fees.items())
    rows.append(("fees", f"{fees or 'none'} ({usd(totals.fees_usd)})"))
    gas = format_decimal(Decimal(totals.gas_octas).scaleb(-8))
    rows.append(("gas", f"{gas} APT ({usd(totals.gas_usd)})"))
    if summary.uncovered:
        beyond = _amounts(summary.uncovered, prices)
        rows.append(
            ("from earlier holdings", f"{beyond} (held before the records: no gain or loss)")
        )
    if summary.unvalued:
        shown = ", ".join(summary.unvalued[:3]) + (", …" if len(summary.unvalued) > 3 else "")
        rows.append(
            (
                "unvalued trades",
                f"{len(summary.unvalued)} without a USD price (record prices): {shown}",
            )
        )
    width = max(len(name) for name, _ in rows)
    valued = summary.valued_at.isoformat()
    lines = [f"strategy {summary.name} (cost basis {summary.method.upper()}, valued at {valued})"]
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    if summary.buckets:
        lines += _bucket_lines(summary, prices)
    return lines


def _bucket_lines(summary: Summary, prices: PriceConvention) -> list[str]:
    table = [("bucket", "trades", "invested", "received", "traded", "fees", "realised P&L")]
    for bucket in summary.buckets:
        f = bucket.figures
        table.append(
            (
                bucket.label,
                str(f.trades),
                _amounts(f.invested, prices),
                _amounts(f.received, prices),
                usd(f.traded_usd),
                usd(f.fees_usd),
                usd(f.realised_usd),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
