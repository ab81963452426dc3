"""The backtest report in words and data: a console summary table and `report.json`.

JSON carries every amount as exact decimal text (never a JSON number, so no reader turns
it into a float), times as ISO-8601 UTC with `Z`. The table rounds for reading only:
USD to cents, prices to 6 significant digits, percents to 2 decimals. A price between
two tokens is written in the user's `[display].price_quote` convention
(`bot.backtest.quoting`); the JSON keeps the metrics as computed (quote per asset).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from enum import Enum
from pathlib import Path
from typing import Any

from bot.backtest.metrics import Benchmark, Metrics
from bot.backtest.quoting import position_view
from bot.backtest.result import BacktestResult
from bot.money import format_decimal
from bot.price_view import PriceConvention

__all__ = [
    "REPORT_VERSION",
    "build_report",
    "format_amount",
    "format_price",
    "format_usd",
    "load_report",
    "report_title",
    "strategy_label",
    "summary_rows",
    "summary_table",
    "symbol_of",
    "to_jsonable",
    "window_text",
    "write_json",
]

REPORT_VERSION = 1
CENT = Decimal("0.01")


def to_jsonable(value: Any) -> Any:
    """Plain JSON data: Decimals as exact text, times as UTC `Z` text, dataclasses as dicts.

    Floats are refused: a float here means an inexact number reached the report.
    """
    return _Jsonable()(value)


class _Jsonable:
    """`to_jsonable`, with one text per distinct amount (a report repeats many of them)."""

    def __init__(self) -> None:
        self.texts: dict[Decimal, str] = {}

    def __call__(self, value: Any) -> Any:
        """`value` as plain JSON data."""
        if value is None or isinstance(value, bool | int | str):
            return value
        if isinstance(value, Decimal):
            if not value.is_finite():
                return format_decimal(value)
            text = self.texts.get(value)  # equal values have equal texts
            if text is None:
                text = self.texts[value] = format_decimal(value)
            return text
        if isinstance(value, float):
            raise TypeError("a float reached the backtest report (use Decimal)")
        if isinstance(value, datetime):
            return _iso(value)
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, Enum):
            return self(value.value)
        if is_dataclass(value) and not isinstance(value, type):
            return {f.name: self(getattr(value, f.name)) for f in fields(value)}
        if hasattr(value, "model_dump"):
            return self(value.model_dump())
        if isinstance(value, Mapping):
            return {str(k): self(v) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self(v) for v in value]
        raise TypeError(f"cannot put a {type(value).__name__} in the backtest report")


def build_report(
    result: BacktestResult, metrics: Metrics, spec: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The whole report as JSON data: spec, window, metrics, counts, orders and fills.

    Args:
        result: the backtest's result.
        metrics: its metrics (`compute_metrics`, with the comparisons attached).
        spec: how the run was set up (options, as plain data), shown as given.
    """
    jsonable = _Jsonable()  # one for the whole report: repeated amounts share a text
    metric_data = jsonable({f.name: getattr(metrics, f.name) for f in _metric_fields()})
    return {
        "version": REPORT_VERSION,
        "strategy": result.strategy,
        "plugin": result.plugin,
        "params": jsonable(result.params),
        "spec": jsonable(dict(spec or {})),
        "start": _iso(result.start),
        "end": _iso(result.end),
        "price_source": result.price_source,
        "credit": result.credit,
        "price_origin": result.price_origin,
        "tokens": {
            key: {"symbol": info.symbol, "decimals": info.decimals}
            for key, info in result.tokens.items()
        },
        "metrics": metric_data,
        "counts": {
            "ticks": result.ticks,
            "events": result.events,
            "actions": result.actions,
            "refused": result.refused,
        },
        "companions": _companions(result),
        "errors": list(result.errors),
        "warnings": list(result.warnings),
        "balances": {
            "start": jsonable(result.start_balances),
            "end": jsonable(result.end_balances),
            "locked_at_end": jsonable(result.locked_at_end),
        },
        "wall_seconds": format_decimal(
            Decimal(repr(result.wall_seconds)).quantize(Decimal("0.001"))
        ),
        "orders": jsonable(result.orders),
        "fills": jsonable(result.fills),
    }


def _companions(result: BacktestResult) -> list[dict[str, Any]]:
    """The strategies run beside the backtested one: counts and their orders' ids."""
    return [
        {
            "name": run.name,
            "plugin": run.plugin,
            "ticks": run.ticks,
            "actions": run.actions,
            "refused": run.refused,
            "errors": run.errors,
            "order_ids": [oid for oid, who in result.owners.items() if who == run.name],
        }
        for run in result.companions
    ]


def write_json(path: Path, report: Mapping[str, Any]) -> Path:
    """Write `report` as indented UTF-8 JSON; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_report(path: Path) -> dict[str, Any]:
    """Read a `report.json` back (amounts stay text: `Decimal(text)` restores them exactly)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def summary_rows(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> list[tuple[str, str]]:
    """The summary as (label, value) rows, rounded for reading.

    `convention`: how the average entry's price is written (None: the default one).
    """
    quote = _symbol(result, metrics.quote)
    asset = _symbol(result, metrics.asset)
    rows = [
        ("strategy", strategy_label(result)),
        *_companion_rows(result),
        ("period", f"{_iso(result.start)} → {_iso(result.end)}"),
        ("prices", result.price_source or "-"),
    ]
    if metrics.asset is None:
        rows.append(("trades", "none: the strategy never traded"))
    else:
        rows += [
            ("invested", f"{_amount(metrics.invested)} {quote} ({_usd(metrics.invested_usd)})"),
            ("received", f"{_amount(metrics.received)} {asset}"),
            (
                "average entry",
                f"{_price(metrics.avg_entry_usd)} per {asset} "
                f"({_entry_price(result, metrics, convention)})",
            ),
            (
                "mean price",
                f"{_price(metrics.mean_price_usd)} "
                f"(entry {_percent(metrics.entry_vs_mean_percent)} vs mean)",
            ),
        ]
        if metrics.sold_back:
            rows.append(
                (
                    "sold back",
                    f"{_amount(metrics.sold_back)} {asset} for {_amount(metrics.proceeds)} "
                    f"{quote} ({_usd(metrics.proceeds_usd)})",
                )
            )
        rows += [
            (
                "value at end",
                f"{_usd(metrics.value_at_end_usd)} ({_amount(metrics.held_at_end)} {asset} "
                f"at {_price(metrics.end_price_usd)})",
            ),
            ("PnL", f"{_usd(metrics.pnl_usd, sign=True)} ({_percent(metrics.return_percent)})"),
            (
                "max drawdown",
                f"{_usd(metrics.max_drawdown_usd)} ({_unsigned(metrics.max_drawdown_percent)}; "
                f"{metrics.drawdown_points} points)",
            ),
        ]
    statuses = ", ".join(f"{k} {v}" for k, v in metrics.orders_by_status.items())
    rows += [
        (
            "orders / fills / skips",
            f"{metrics.orders} / {metrics.fills} / {metrics.skips}"
            + (f" ({statuses})" if statuses else "")
            + (f"; {metrics.swaps} swaps" if metrics.swaps else ""),
        ),
        ("fees paid", f"{_token_amounts(result, metrics.fees)} ({_usd(metrics.fees_usd)})"),
    ]
    if metrics.refunded:
        rows.append(("refunded", _token_amounts(result, metrics.refunded)))
    if metrics.locked_at_end:
        rows.append(("locked at end", _token_amounts(result, metrics.locked_at_end)))
    if metrics.other_pair_fills:
        rows.append(("other fills", f"{metrics.other_pair_fills} outside {quote}→{asset}"))
    for bench in (metrics.lump_sum, metrics.no_bounds):
        if bench is not None:
            rows.append((f"vs {bench.name}", _benchmark(bench, metrics)))
    rows.append(
        (
            "ticks / actions / refused",
            f"{result.ticks} / {result.actions} / {result.refused}"
            + (f"; {len(result.errors)} strategy errors" if result.errors else ""),
        )
    )
    if result.credit:
        rows.append(("prices by", result.credit))
    elif result.price_origin:  # never the provider's credit under prices not its own
        rows.append(("prices are", result.price_origin))
    return rows


def _companion_rows(result: BacktestResult) -> list[tuple[str, str]]:
    """One row naming the companions that ran, with their ticks / actions / refused."""
    if not result.companions:
        return []
    runs = "; ".join(
        f"{_label(run.name, run.plugin)} {run.ticks} / {run.actions} / {run.refused}"
        for run in result.companions
    )
    return [("with companions", f"{runs} (ticks / actions / refused; fills in the figures)")]


def summary_table(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> str:
    """The summary as an aligned two-column text table (prices per `convention`)."""
    rows = summary_rows(result, metrics, convention)
    width = max(len(label) for label, _ in rows)
    rule = "─" * min(100, width + 2 + max(len(value) for _, value in rows))
    lines = [rule, *(f"{label:<{width}}  {value}" for label, value in rows), rule]
    lines += [f"error: {line}" for line in result.errors[:5]]
    if len(result.errors) > 5:
        lines.append(f"… and {len(result.errors) - 5} more errors (see report.json)")
    return "\n".join(lines)


def strategy_label(result: BacktestResult) -> str:
    """`weekly-apt (recurring_dca)`, or the plugin's name once when the two are the same."""
    return _label(result.strategy, result.plugin)


def _label(name: str, plugin: str) -> str:
    return name if name == plugin else f"{name} ({plugin})"


def window_text(start: datetime, end: datetime) -> str:
    """The window for a title: dates alone when both are midnight UTC, else to the minute."""
    moments = [m.astimezone(UTC) for m in (start, end)]
    midnight = all(m.hour == m.minute == m.second == m.microsecond == 0 for m in moments)
    shape = "%Y-%m-%d" if midnight else "%Y-%m-%d %H:%M"
    return " → ".join(m.strftime(shape) for m in moments) + ("" if midnight else " UTC")


def report_title(result: BacktestResult, metrics: Metrics) -> str:
    """One title for the report: strategy, pair (quote → asset) and window, each once."""
    parts = [strategy_label(result)]
    if metrics.quote is not None and metrics.asset is not None:
        parts.append(f"{symbol_of(result, metrics.quote)} → {symbol_of(result, metrics.asset)}")
    parts.append(window_text(result.start, result.end))
    return " · ".join(parts)


def symbol_of(result: BacktestResult, key: str | None) -> str:
    """A token's symbol for display (its key when the result does not know it)."""
    return _symbol(result, key)


def format_amount(value: Decimal) -> str:
    """An amount as exact plain text, trailing zeros dropped (`12.5`, never `1.25E+1`)."""
    return _amount(value)


def format_usd(value: Decimal | None, *, sign: bool = False) -> str:
    """USD rounded to cents for reading: `$1,234.50`, `-$3.00`, `+$2.00` with `sign`."""
    return _usd(value, sign=sign)


def format_price(value: Decimal | None) -> str:
    """A price rounded to 6 significant digits for reading (`5.67100`, `0.000123400`)."""
    return _plain_price(value)


def _entry_price(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None
) -> str:
    """The average entry in the convention's unit: `5.33333 USDC per APT`.

    From the invested and received amounts themselves (exact), not from a rounded
    average; `-` before anything was received.
    """
    view = position_view(result, metrics, convention)
    if view is None or metrics.quote is None:
        return "-"
    price = view.exchange(metrics.quote, metrics.invested, metrics.received)
    return f"{_plain_price(price if metrics.received else None)} {view.unit}"


def _metric_fields() -> list[Any]:
    return [f for f in fields(Metrics) if f.name != "path"]


def _benchmark(bench: Benchmark, metrics: Metrics) -> str:
    text = (
        f"{_usd(bench.value_at_end_usd)} at end, {_usd(bench.pnl_usd, sign=True)} "
        f"({_percent(bench.return_percent)})"
    )
    if bench.return_percent is not None and metrics.return_percent is not None:
        diff = metrics.return_percent - bench.return_percent
        text += f"; strategy {_signed(diff)} pp"
    return text + (f" [{bench.note}]" if bench.note else "")


def _symbol(result: BacktestResult, key: str | None) -> str:
    if key is None:
        return "-"
    info = result.tokens.get(key)
    return info.symbol if info is not None else key


def _token_amounts(result: BacktestResult, amounts: Mapping[str, Decimal]) -> str:
    if not amounts:
        return "0"
    return ", ".join(f"{_amount(v)} {_symbol(result, k)}" for k, v in amounts.items())


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _amount(value: Decimal) -> str:
    return format_decimal(value.normalize()) if value else "0"


def _usd(value: Decimal | None, *, sign: bool = False) -> str:
    if value is None:
        return "-"
    rounded = value.quantize(CENT, rounding=ROUND_HALF_EVEN)
    text = f"${abs(rounded):,.2f}"
    if rounded < 0:
        return "-" + text
    return ("+" + text) if sign and rounded > 0 else text


def _plain_price(value: Decimal | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    digits = max(0, 6 - value.adjusted() - 1)
    return f"{value:,.{digits}f}"


def _price(value: Decimal | None) -> str:
    return "-" if value is None else "$" + _plain_price(value)


def _signed(value: Decimal) -> str:
    rounded = value.quantize(CENT, rounding=ROUND_HALF_EVEN)
    return f"{'+' if rounded > 0 else ''}{rounded:.2f}"


def _unsigned(value: Decimal | None) -> str:
    return "-" if value is None else f"{value.quantize(CENT, rounding=ROUND_HALF_EVEN):.2f}%"


def _percent(value: Decimal | None) -> str:
    return "-" if value is None else f"{_signed(value)}%"
