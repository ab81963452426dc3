"""How accounting figures are shown: one strategy's table, its bucket rows, the JSON.

One formatter for every command that shows a `bot.accounting.Summary` (`bot report`, its
`--html` page, `bot backtest --accounting`). Display rounding is `bot.price_view`'s, as
in every other output (Telegram, the running bot's summary): USD to 2 decimal places,
prices to 6 significant digits, percents to 2 decimal places, all half to even, a zero
without a minus sign; token amounts are shown exactly, named by the `PriceConvention`'s
labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Final

from bot.accounting import Summary, ratio
from bot.accounting.locked import Locked
from bot.app.report import Report, holdings_value, summary_data
from bot.money import format_decimal
from bot.price_view import (
    PriceConvention,
    amounts_text,
    measured_price_text,
    percent_text,
    usd_text,
)

__all__ = [
    "BUCKET_HEADER",
    "ROUNDING_NOTE",
    "bucket_rows",
    "locked_data",
    "locked_text",
    "report_json",
    "summary_lines",
    "summary_rows",
    "summary_title",
]

BUCKET_HEADER: Final = (
    "bucket",
    "trades",
    "invested",
    "received",
    "traded",
    "fees",
    "realised P&L",
)
"""The columns of a bucket row."""
ROUNDING_NOTE: Final = (
    "USD rounded to 2 places, prices to 6 significant digits; token amounts exact; "
    "--json for exact figures"
)


def summary_lines(
    summary: Summary, prices: PriceConvention, locked: Sequence[Locked] = ()
) -> list[str]:
    """The console table of one strategy (and its buckets); `locked`: its open orders'."""
    rows = summary_rows(summary, prices, locked)
    width = max(len(name) for name, _ in rows)
    lines = [summary_title(summary)]
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    if summary.buckets:
        table = [BUCKET_HEADER, *bucket_rows(summary, prices)]
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        lines += [
            "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in table
        ]
    return lines


def summary_title(summary: Summary) -> str:
    """The first line of a strategy's table: its name, cost basis and valuation moment."""
    valued = summary.valued_at.isoformat()
    return f"strategy {summary.name} (cost basis {summary.method.upper()}, valued at {valued})"


def summary_rows(
    summary: Summary, prices: PriceConvention, locked: Sequence[Locked] = ()
) -> list[tuple[str, str]]:
    """One strategy's figures as (name, shown value) rows, rounded for display.

    `locked`: what the strategy's open orders still hold (a row when there is any).
    """
    totals = summary.totals
    rows: list[tuple[str, str]] = [
        ("trades", str(totals.trades)),
        ("invested", amounts_text(totals.invested, prices)),
        ("received", amounts_text(totals.received, prices)),
        (
            "traded",
            usd_text(totals.traded_usd) + (" (valued trades only)" if summary.unvalued else ""),
        ),
    ]
    position = summary.position
    if position is not None:
        unit = f"{prices.label(position.pair.quote)} per {prices.label(position.pair.base)}"
        entry = position.average_entry
        rows.append(
            (
                "average entry",
                "n/a (nothing bought)" if entry is None else f"{measured_price_text(entry)} {unit}",
            )
        )
        if position.sold > 0:
            exit_price = ratio(position.proceeds, position.sold)
            rows.append(("average exit", f"{measured_price_text(exit_price)} {unit}"))
        versus = position.entry_vs_market_percent
        against = "" if versus is None else f" (entry {percent_text(versus)})"
        mean = position.market_mean
        shown = (
            "n/a (no recorded prices)"
            if mean is None
            else f"{measured_price_text(mean)} {unit}{against}"
        )
        rows.append(("market mean (time-weighted)", shown))
    held = ", ".join(
        f"{format_decimal(h.quantity)} {prices.label(h.token)}" for h in summary.holdings
    )
    rows.append(
        ("position value", f"{usd_text(holdings_value(summary))} ({held or 'nothing held'})")
    )
    if locked:
        rows.append(("in open orders", locked_text(locked, prices)))
    rows.append((f"realised P&L ({summary.method.upper()})", usd_text(totals.realised_usd)))
    rows.append(("unrealised P&L", usd_text(summary.unrealised_usd)))
    incomplete = " (incomplete: unvalued trades below)" if summary.unvalued else ""
    rows.append(("total P&L", usd_text(summary.pnl_usd) + incomplete))
    fees = "; ".join(f"{kind} {amounts_text(by, prices)}" for kind, by in totals.fees.items())
    rows.append(("fees", f"{fees or 'none'} ({usd_text(totals.fees_usd)})"))
    gas = format_decimal(Decimal(totals.gas_octas).scaleb(-8))
    rows.append(("gas", f"{gas} APT ({usd_text(totals.gas_usd)})"))
    if summary.uncovered:
        beyond = amounts_text(summary.uncovered, prices)
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
    return rows


def locked_text(locked: Sequence[Locked], prices: PriceConvention) -> str:
    """What open orders hold, e.g. `75 USDC in 2 orders (74.99 USD)`, token by token."""
    parts = []
    for held in locked:
        orders = f"{held.orders} order{'s' if held.orders != 1 else ''}"
        value = "" if held.usd is None else f" ({usd_text(held.usd)})"
        parts.append(f"{format_decimal(held.amount)} {prices.label(held.token)} in {orders}{value}")
    return "; ".join(parts)


def locked_data(locked: Sequence[Locked]) -> list[dict[str, object]]:
    """What open orders hold as JSON-ready data (exact strings)."""
    return [
        {
            "token": held.token,
            "amount": format_decimal(held.amount),
            "orders": held.orders,
            "usd": None if held.usd is None else format_decimal(held.usd),
        }
        for held in locked
    ]


def bucket_rows(summary: Summary, prices: PriceConvention) -> list[tuple[str, ...]]:
    """One row per bucket, in the columns of `BUCKET_HEADER`, rounded for display."""
    table: list[tuple[str, ...]] = []
    for bucket in summary.buckets:
        f = bucket.figures
        table.append(
            (
                bucket.label,
                str(f.trades),
                amounts_text(f.invested, prices),
                amounts_text(f.received, prices),
                usd_text(f.traded_usd),
                usd_text(f.fees_usd),
                usd_text(f.realised_usd),
            )
        )
    return table


def report_json(result: Report) -> dict[str, object]:
    """A report as JSON-ready data: its request, when it was valued, each strategy exact."""
    request = result.request
    return {
        "from": None if request.start is None else request.start.isoformat(),
        "to": None if request.end is None else request.end.isoformat(),
        "by": None if request.period is None else str(request.period),
        "time_zone": request.zone,
        "cost_basis": str(request.method),
        "valued_at": None if result.valued_at is None else result.valued_at.isoformat(),
        "strategies": [
            {**summary_data(s), "in_open_orders": locked_data(result.locked.get(name, ()))}
            for name, s in result.summaries.items()
        ],
        "gas_unknown": list(result.gas_unknown),
    }
