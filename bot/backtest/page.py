"""`report.html`: the backtest as a page a user reads, and the files beside it.

One self-contained HTML file: a title (strategy, pair, window — each once), the warnings
about the prices, the summary table, the two pictures (embedded as base64 PNG data
URIs), the trade table (time, strategy, side, amounts with their token symbols, the
price with its unit in the `[display].price_quote` convention, e.g. `USDC per APT`, the
fee), strategy errors, links to the full
data (`report.json`: every order and fill, exact; `trades.csv`) and the provider's credit
line when the prices were recorded from it — else one line saying where they came from
(`Prices are simulated (recorded from a paper world)`). Every text from the run is
HTML-escaped.

A long run's trade table shows its first and last `TABLE_ROWS // 2` trades and says how
many are left out (all of them are in `trades.csv`).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from bot.backtest.charts import Charts, draw_charts, order_levels
from bot.backtest.metrics import Metrics
from bot.backtest.report import format_amount, format_price, report_title, summary_rows
from bot.backtest.result import BacktestResult
from bot.backtest.trades import TradeRow, trade_rows, write_trades_csv
from bot.price_view import PriceConvention

__all__ = [
    "STYLE",
    "TABLE_ROWS",
    "data_uri",
    "page",
    "report_page",
    "table",
    "trade_table",
    "warnings_box",
    "write_report_files",
    "write_run_report",
]

TABLE_ROWS: Final = 1000
"""Trades shown in the HTML table at most (the first and last halves)."""
STYLE: Final = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 76em; color: #1f2328;
       padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
p.sub { color: #59636e; margin-top: 0; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
th, td { text-align: left; padding: .25em .9em .25em 0; border-bottom: 1px solid #d1d9e0; }
th { font-weight: 600; white-space: nowrap; }
table.data th { position: sticky; top: 0; background: #f6f8fa; }
table.data th.num { text-align: right; }
table.data td.time, table.data td.order { white-space: nowrap; }
table.data td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.buy td.side { color: #1a7f37; font-weight: 600; }
tr.sell td.side { color: #cf222e; font-weight: 600; }
tr.skipped td { color: #6e7781; }
tr.best td { background: #dafbe1; }
tr.gap td { text-align: center; color: #59636e; font-style: italic; }
img { max-width: 100%; }
.warnings { background: #fff8c5; border: 1px solid #d4a72c; padding: .6em 1em; margin: 1em 0; }
.warnings li { margin: .2em 0; }
.credit { margin-top: 2em; color: #59636e; font-size: .9em; }
"""


def write_run_report(
    out_dir: Path,
    result: BacktestResult,
    metrics: Metrics,
    spec: Mapping[str, Any],
    convention: PriceConvention | None = None,
) -> list[Path]:
    """Every file of one run's report; returns the paths written.

    `report.json` (from `build_report`), then `write_report_files`' pictures, trades and
    page, their prices shown per `convention` (`bot.backtest.quoting.report_convention`;
    None: the default one).
    """
    from bot.backtest.report import build_report, write_json

    written = [write_json(out_dir / "report.json", build_report(result, metrics, spec))]
    return written + write_report_files(out_dir, result, metrics, convention=convention)


def write_report_files(
    out_dir: Path,
    result: BacktestResult,
    metrics: Metrics,
    report: Mapping[str, Any] | None = None,
    *,
    convention: PriceConvention | None = None,
) -> list[Path]:
    """Write `price.png`, `value.png`, `trades.csv` and `report.html` into `out_dir`.

    `report` (the `build_report` data) is written beside them by the caller as
    `report.json`; the page links to it. Prices are shown per `convention` (None: the
    default one). Returns the paths written.
    """
    del report  # the page shows the result itself; the JSON is its own file
    out_dir.mkdir(parents=True, exist_ok=True)
    charts = draw_charts(result, metrics, convention)
    price = out_dir / "price.png"
    value = out_dir / "value.png"
    price.write_bytes(charts.price_png)
    value.write_bytes(charts.value_png)
    rows = trade_rows(result, metrics, convention)
    trades = write_trades_csv(out_dir / "trades.csv", rows)
    html_file = out_dir / "report.html"
    page_text = report_page(result, metrics, charts, rows, convention=convention)
    html_file.write_text(page_text, encoding="utf-8")
    return [price, value, trades, html_file]


def report_page(
    result: BacktestResult,
    metrics: Metrics,
    charts: Charts,
    rows: Sequence[TradeRow] | None = None,
    *,
    convention: PriceConvention | None = None,
) -> str:
    """The whole `report.html` page as text (prices per `convention`; None: the default)."""
    esc = html.escape
    rows = trade_rows(result, metrics, convention) if rows is None else rows
    title = report_title(result, metrics)
    errors = "".join(f"<li>{esc(line)}</li>" for line in result.errors)
    levels = " and limit order levels" if order_levels(result, metrics, convention) else ""
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">Backtest on {esc(result.price_source or "-")}. A trade\'s price is '
        "its execution's own, fees included.</p>",
        warnings_box(result.warnings),
        '<h2 id="summary">Summary</h2>',
        table(None, summary_rows(result, metrics, convention), css="summary"),
        f'<h2 id="price">Price, trades{levels}</h2>',
        f'<img alt="price chart with trades and order levels" src="{data_uri(charts.price_png)}">',
        '<h2 id="value">Value, lump sum benchmark and drawdown</h2>',
        f'<img alt="position value, lump sum and drawdown" src="{data_uri(charts.value_png)}">',
        f'<h2 id="trades">Trades ({len(rows)})</h2>',
        trade_table(rows),
        f'<h2 id="errors">Strategy errors</h2><ul>{errors}</ul>' if errors else "",
        '<h2 id="data">Data</h2>',
        '<p><a href="report.json">report.json</a>: every order and fill, amounts exact; '
        '<a href="trades.csv">trades.csv</a>: the trade table, amounts exact.</p>',
    ]
    if result.credit:
        body.append(f'<footer class="credit">{esc(result.credit)}</footer>')
    elif result.price_origin:
        body.append(f'<footer class="credit">Prices are {esc(result.price_origin)}</footer>')
    return page(title, body)


def page(title: str, body: Sequence[str]) -> str:
    """An HTML document around `body` (already HTML); `title` is escaped here."""
    parts = "\n".join(part for part in body if part)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"{parts}\n</body>\n</html>\n"
    )


def warnings_box(warnings: Sequence[str]) -> str:
    """The warnings as a highlighted list; empty text when there are none."""
    if not warnings:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in warnings)
    return f'<div class="warnings"><strong>Warnings</strong><ul>{items}</ul></div>'


def table(
    header: Sequence[str] | None,
    rows: Sequence[Sequence[str]],
    *,
    css: str = "data",
    numeric: frozenset[int] = frozenset(),
    row_css: Sequence[str] | None = None,
) -> str:
    """An HTML table of text cells (escaped); `numeric`: columns aligned right.

    Without a header, each row's first cell is its label (`<th>`). Under a header, a row
    of one cell spans the whole table (a note between rows).
    """
    esc = html.escape
    lines = [f'<table class="{css}">']
    if header is not None:
        cells = "".join(
            f'<th class="num">{esc(h)}</th>' if i in numeric else f"<th>{esc(h)}</th>"
            for i, h in enumerate(header)
        )
        lines.append(f"<thead><tr>{cells}</tr></thead><tbody>")
    for index, row in enumerate(rows):
        cls = f' class="{row_css[index]}"' if row_css is not None and row_css[index] else ""
        if header is not None and len(row) == 1 < len(header):
            lines.append(f'<tr{cls}><td colspan="{len(header)}">{esc(row[0])}</td></tr>')
            continue
        cells = "".join(
            f"<th>{esc(cell)}</th>"
            if header is None and i == 0
            else f'<td class="{"num" if i in numeric else _column(header, i)}">{esc(cell)}</td>'
            for i, cell in enumerate(row)
        )
        lines.append(f"<tr{cls}>{cells}</tr>")
    lines.append("</tbody></table>" if header is not None else "</table>")
    return "\n".join(lines)


TRADE_HEADER: Final = (
    "time (UTC)",
    "strategy",
    "order",
    "side",
    "sold",
    "bought",
    "price",
    "fee",
)


def trade_table(rows: Sequence[TradeRow], limit: int = TABLE_ROWS) -> str:
    """The trade table: every row, or the first and last `limit // 2` of a long run."""
    if not rows:
        return "<p>No trades.</p>"
    shown: list[TradeRow | None] = list(rows)
    if len(rows) > limit:
        half = limit // 2
        shown = [*rows[:half], None, *rows[-half:]]
    cells: list[list[str]] = []
    classes: list[str] = []
    for row in shown:
        if row is None:
            left_out = len(rows) - 2 * (limit // 2)
            cells.append([f"… {left_out} more trades: all of them are in trades.csv"])
            classes.append("gap")
            continue
        cells.append(_trade_cells(row))
        classes.append(row.side)
    return table(TRADE_HEADER, cells, numeric=frozenset({4, 5, 6, 7}), row_css=classes)


def _trade_cells(row: TradeRow) -> list[str]:
    skipped = row.side == "skipped"
    price = "-" if row.price is None else f"{format_price(row.price)} {row.price_unit}"
    return [
        row.time.strftime("%Y-%m-%d %H:%M:%S"),
        row.strategy,
        f"{row.kind} {_short_id(row.order_id)}",
        row.side,
        "-" if skipped else f"{format_amount(row.sold)} {row.sold_token}",
        "-" if skipped else f"{format_amount(row.bought)} {row.bought_token}",
        price + (" (market)" if skipped else ""),
        "-" if skipped else f"{format_amount(row.fee)} {row.fee_token}",
    ]


def _short_id(order_id: str) -> str:
    """A long order id shortened for the table (`0x4dadda…e2fe8`); trades.csv has it whole."""
    return order_id if len(order_id) <= 16 else f"{order_id[:8]}…{order_id[-5:]}"


def _column(header: Sequence[str] | None, index: int) -> str:
    """A cell's class: its column's first word (`time`, `side`, ...)."""
    if header is None or index >= len(header):
        return ""
    return header[index].split()[0]


def data_uri(png: bytes) -> str:
    """A PNG as a `data:` URI for an `<img>` (the page stays one self-contained file)."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
