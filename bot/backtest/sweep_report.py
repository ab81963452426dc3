"""`--sweep … --report DIR`: the ranked runs as a table to read and to load, and the best runs.

Files written into DIR:

- `sweep.json`: the spec, the swept parameters, the ranking and every row (exact text);
- `sweep.csv`: one line per run in rank order — its parameters, return, the lump sum's
  return and the difference, PnL, invested, value at end, average entry, maximum
  drawdown (USD and percent), fills, skips, fees, strategy errors, or the run's error;
  amounts exact;
- `sweep.html`: the title (strategy, pair, window, ranking), the warnings about the
  prices, a chart of the best runs' PnL over time, the ranked table (rounded; the best
  runs link to their reports);
- `best-1/`, `best-2/`, …: the full report (`report.html`, charts, trades, JSON) of each
  of the best `BEST_RUNS` runs that succeeded, re-run in this process (a backtest is
  deterministic: the same figures as in the table).
"""

from __future__ import annotations

import csv
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bot.backtest.metrics import Metrics
from bot.backtest.report import format_usd, report_title, to_jsonable, write_json
from bot.backtest.result import BacktestResult
from bot.backtest.sweep import RANKINGS, SweepRow
from bot.money import format_decimal

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bot.price_view import PriceConvention

__all__ = [
    "BEST_RUNS",
    "BestRun",
    "best_runs_figure",
    "sweep_csv_rows",
    "sweep_warnings",
    "write_sweep_report",
]

BEST_RUNS: Final = 3
"""How many of the best runs get a full report of their own."""
_FIGURES: Final = (
    ("return_percent", "return %"),
    ("lump_sum_return_percent", "lump sum return %"),
    ("vs_lump_sum_pp", "vs lump sum pp"),
    ("pnl_usd", "PnL USD"),
    ("invested_usd", "invested USD"),
    ("value_at_end_usd", "value at end USD"),
    ("avg_entry_usd", "avg entry USD"),
    ("max_drawdown_usd", "max drawdown USD"),
    ("max_drawdown_percent", "max drawdown %"),
    ("fees_usd", "fees USD"),
)
_COLOURS: Final = ("#0969da", "#1a7f37", "#bc4c00", "#8250df", "#cf222e")


@dataclass(frozen=True)
class BestRun:
    """One of the best runs, re-run in full for its own report."""

    place: int  # 1 = best
    row: SweepRow
    result: BacktestResult
    metrics: Metrics

    @property
    def folder(self) -> str:
        """Its report's folder inside the sweep's."""
        return f"best-{self.place}"


def sweep_warnings(rows: Sequence[SweepRow]) -> list[str]:
    """Every distinct warning of the runs, in the order first met.

    A series shared by every run warns once, not once per run.
    """
    return list(dict.fromkeys(w for row in rows for w in row.warnings))


def sweep_csv_rows(rows: Sequence[SweepRow], names: Sequence[str]) -> list[list[str]]:
    """The ranked table as CSV cells (header first): exact decimal text, `` for none."""
    header = ["rank", *names, *(label for _, label in _FIGURES)]
    header += ["fills", "skips", "strategy errors", "error"]
    table = [header]
    for place, row in enumerate(rows, start=1):
        params = [_param(row.params.get(n)) for n in names]
        figures = [_exact(getattr(row, field)) for field, _ in _FIGURES]
        counts = [str(row.fills), str(row.skips), str(row.strategy_errors)]
        if row.error is not None:
            figures, counts = [""] * len(_FIGURES), ["", "", ""]
        table.append([str(place), *params, *figures, *counts, row.error or ""])
    return table


def write_sweep_report(
    out_dir: Path,
    rows: Sequence[SweepRow],
    names: Sequence[str],
    *,
    spec: Mapping[str, Any],
    by: str,
    best: Sequence[BestRun] = (),
    convention: PriceConvention | None = None,
) -> list[Path]:
    """Write the sweep's files (see the module docstring); returns the paths written.

    Args:
        out_dir: the folder (made if missing).
        rows: the ranked rows.
        names: the swept parameters, in grid order.
        spec: how the sweep was set up (plain data), stored in `sweep.json`.
        by: the ranking used (a `RANKINGS` name).
        best: the best runs, re-run in full (their reports go into `best-N/`).
        convention: how their reports show prices (None: the default convention).
    """
    from bot.backtest.page import write_run_report

    out_dir.mkdir(parents=True, exist_ok=True)
    data = {
        "spec": to_jsonable(spec),
        "swept": list(names),
        "rank_by": by,
        "rows": to_jsonable(rows),
    }
    written = [write_json(out_dir / "sweep.json", data)]
    csv_path = out_dir / "sweep.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(sweep_csv_rows(rows, names))
    written.append(csv_path)
    for run in best:
        written += write_run_report(
            out_dir / run.folder,
            run.result,
            run.metrics,
            {**spec, "params": run.result.params},
            convention,
        )
    page_path = out_dir / "sweep.html"
    page_path.write_text(_sweep_page(rows, names, by, best), encoding="utf-8")
    written.append(page_path)
    return written


def best_runs_figure(best: Sequence[BestRun]) -> Figure:
    """The best runs' PnL (value − invested so far, USD) over time, one line each."""
    from matplotlib.figure import Figure

    from bot.backtest.charts import date_number, finish_axes

    figure = Figure(figsize=(11, 4.2), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    for run, colour in zip(best, _COLOURS, strict=False):
        path = run.metrics.path
        x = [date_number(p.time) for p in path]
        y = [float(p.pnl_usd) for p in path]
        label = f"#{run.place} {_params_text(run.row.params)} ({_pct(run.row.return_percent)})"
        axes.plot(x, y, lw=1.2, color=colour, label=label)
    axes.axhline(0, color="#6e7781", lw=0.8)
    finish_axes(axes, "PnL over time of the best runs", "PnL (USD)")
    return figure


def _sweep_page(
    rows: Sequence[SweepRow], names: Sequence[str], by: str, best: Sequence[BestRun]
) -> str:
    from bot.backtest.page import page, warnings_box

    esc = html.escape
    order = "highest" if RANKINGS[by][1] else "lowest"
    title = "Sweep"
    if best:
        title = f"Sweep: {report_title(best[0].result, best[0].metrics)}"
    failed = sum(1 for r in rows if r.error is not None)
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">{len(rows)} runs over {esc(", ".join(names))}, ranked by '
        f"{esc(by)} ({order} first){f'; {failed} failed' if failed else ''}. Data: "
        '<a href="sweep.csv">sweep.csv</a>, <a href="sweep.json">sweep.json</a>.</p>',
        warnings_box(sweep_warnings(rows)),
        '<h2 id="ranking">Ranking</h2>',
        _ranking_table(rows, names, len(best)),
        _best_section(best),
    ]
    return page(title, body)


def _best_section(best: Sequence[BestRun]) -> str:
    """The best runs' PnL chart and the links to their reports; empty without a trade."""
    from bot.backtest.charts import png_bytes
    from bot.backtest.page import data_uri

    if not best or not any(run.metrics.path for run in best):
        return ""
    chart = png_bytes(best_runs_figure(best), best[0].result.credit)
    links = "; ".join(
        f'<a href="{run.folder}/report.html">#{run.place}: full report</a>' for run in best
    )
    return (
        f'<h2 id="best">The best runs</h2>\n<p>{links}</p>\n'
        f'<img alt="PnL over time of the best runs" src="{data_uri(chart)}">'
    )


def _ranking_table(rows: Sequence[SweepRow], names: Sequence[str], best: int) -> str:
    """The ranked rows as an HTML table (rounded); the first `best` rows highlighted."""
    from bot.backtest.page import table

    header = ["#", *names, "return", "vs lump sum", "PnL", "invested", "avg entry"]
    header += ["max drawdown", "fills", "skips", "fees", "errors"]
    cells = []
    for place, row in enumerate(rows, start=1):
        shown = [str(place), *(_param(row.params.get(n)) for n in names)]
        if row.error is not None:
            cells.append([*shown, f"failed: {row.error}", *[""] * (len(header) - len(shown) - 1)])
            continue
        drawdown = format_usd(row.max_drawdown_usd)
        if row.max_drawdown_percent is not None:
            drawdown += f" ({row.max_drawdown_percent:.2f}%)"
        cells.append(
            [
                *shown,
                _pct(row.return_percent),
                "-" if row.vs_lump_sum_pp is None else f"{row.vs_lump_sum_pp:+.2f} pp",
                format_usd(row.pnl_usd, sign=True),
                format_usd(row.invested_usd),
                "-" if row.avg_entry_usd is None else f"${row.avg_entry_usd:,.4f}",
                drawdown,
                str(row.fills),
                str(row.skips),
                format_usd(row.fees_usd),
                str(row.strategy_errors),
            ]
        )
    numeric = frozenset(range(len(names) + 1, len(header)))
    classes = ["best" if i < best else "" for i in range(len(rows))]
    return table(header, cells, numeric=numeric, row_css=classes)


def _param(value: Any) -> str:
    if value is None:
        return "null"
    return format_decimal(value) if isinstance(value, Decimal) else str(value)


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_param(v)}" for k, v in params.items())


def _exact(value: Decimal | None) -> str:
    return "" if value is None else format_decimal(value)


def _pct(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:+.2f}%"
