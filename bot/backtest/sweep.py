"""`--sweep param=v1,v2,…`: the same backtest over a grid of parameters, on every core.

Parameters given as text (`--params`, `--sweep`) are read here too: values stay text for
the plugin's own validation, `null` unsets a key, a JSON object keeps its numbers exact.

The grid is the cartesian product of the `--sweep` options, in the order given (the last
option varies fastest). Each combination runs in a worker process of a
`ProcessPoolExecutor` (one per core): the task (with the series the command read, if it
did) is handed to each worker once, when it starts — a forked worker inherits it, nothing
is copied — and each combination sends only its parameters; the worker runs the
backtest, computes the metrics and sends back one small `SweepRow`. A combination that
fails is a row with a one-line error, never a crash of the sweep. Rows are ranked by the
chosen figure (`RANKINGS`: return by default; higher first, or lower first for drawdown,
entry price and fees), then return, then PnL; ties keep grid order; rows without the
figure follow, failed rows come last.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import product
from typing import TYPE_CHECKING, Any

from bot.backtest.result import BacktestResult

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = [
    "RANKINGS",
    "SweepAxis",
    "SweepError",
    "SweepRow",
    "SweepTask",
    "grid",
    "parse_param_value",
    "parse_params",
    "parse_sweep",
    "rank",
    "ranking_table",
    "run_sweep",
    "worker_count",
]

RANKINGS: dict[str, tuple[str, bool]] = {
    "return": ("return_percent", True),
    "pnl": ("pnl_usd", True),
    "vs-lump-sum": ("vs_lump_sum_pp", True),
    "drawdown": ("max_drawdown_percent", False),
    "entry": ("avg_entry_usd", False),
    "fees": ("fees_usd", False),
}
"""`--rank-by` choices: the `SweepRow` field ranked on, and whether higher is better."""

SweepTask = Callable[[dict[str, Any]], BacktestResult]
"""Runs one combination (parameter overrides → result). It must pickle: a module-level
function or a `functools.partial` of one."""


class SweepError(ValueError):
    """A `--sweep` option that cannot be used; the message names it."""


@dataclass(frozen=True)
class SweepAxis:
    """One swept parameter and its values, in the order given."""

    name: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class SweepRow:
    """One combination's outcome: the headline figures, or the error."""

    index: int  # position in the grid
    params: dict[str, Any]
    return_percent: Decimal | None = None
    pnl_usd: Decimal | None = None
    invested_usd: Decimal | None = None
    value_at_end_usd: Decimal | None = None
    avg_entry_usd: Decimal | None = None
    max_drawdown_usd: Decimal | None = None
    max_drawdown_percent: Decimal | None = None
    lump_sum_return_percent: Decimal | None = None
    fills: int = 0
    skips: int = 0
    fees_usd: Decimal | None = None
    strategy_errors: int = 0
    error: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def vs_lump_sum_pp(self) -> Decimal | None:
        """Return minus the lump sum's return, in percentage points."""
        if self.return_percent is None or self.lump_sum_return_percent is None:
            return None
        return self.return_percent - self.lump_sum_return_percent


def parse_param_value(text: str) -> Any:
    """A `k=v` value: the text as given (parameters validate it), or None for `null`."""
    stripped = text.strip()
    return None if stripped.lower() == "null" else stripped


def parse_params(text: str) -> dict[str, Any]:
    """`--params`: a JSON object (numbers exact) or `k=v,k=v` (values as text).

    Raises:
        ValueError: not an object, or a `k=v` item without `=` or name.
    """
    from bot.money import loads_exact

    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = loads_exact(stripped)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        return data
    parsed: dict[str, Any] = {}
    for item in stripped.split(","):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{item.strip()!r} is not k=v")
        parsed[name.strip()] = parse_param_value(value)
    return parsed


def parse_sweep(options: Sequence[str]) -> list[SweepAxis]:
    """`["amount_per_order=10,20", "interval=1 hour,1 day"]` → the grid's axes.

    Raises:
        SweepError: no `=`, an empty name or value, or a parameter swept twice.
    """
    axes: list[SweepAxis] = []
    for option in options:
        name, sep, values = option.partition("=")
        name = name.strip()
        if not sep or not name:
            raise SweepError(f"--sweep {option!r}: expected param=v1,v2,…")
        items = values.split(",")
        if any(not v.strip() for v in items):
            raise SweepError(f"--sweep {option!r}: an empty value")
        if any(axis.name == name for axis in axes):
            raise SweepError(f"--sweep {option!r}: {name} is swept twice")
        axes.append(SweepAxis(name, tuple(parse_param_value(v) for v in items)))
    return axes


def grid(axes: Sequence[SweepAxis]) -> list[dict[str, Any]]:
    """Every combination of the axes' values (the last axis varies fastest)."""
    return [
        dict(zip([a.name for a in axes], values, strict=True))
        for values in product(*(a.values for a in axes))
    ]


def run_sweep(
    task: SweepTask,
    combinations: Sequence[Mapping[str, Any]],
    *,
    workers: int | None = None,
    on_done: Callable[[SweepRow], None] | None = None,
    by: str = "return",
) -> list[SweepRow]:
    """Run `task` for every combination in worker processes; returns the ranked rows.

    Args:
        task: runs one combination (must pickle).
        combinations: parameter overrides, one dict per run.
        workers: processes (default: every core, at most one per combination).
        on_done: called in this process as each row arrives (progress).
        by: the ranking (a `RANKINGS` name).
    """
    # Here, not at the top: a single backtest imports this module for `parse_params`
    # and needs no process pool (multiprocessing is a few milliseconds of start-up).
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    if not combinations:
        return []
    count = worker_count(len(combinations), workers)
    rows: list[SweepRow] = []
    with ProcessPoolExecutor(
        max_workers=count, mp_context=_context(), initializer=_install, initargs=(task,)
    ) as pool:
        futures: list[Future[SweepRow]] = [
            pool.submit(_run_installed, i, dict(c)) for i, c in enumerate(combinations)
        ]
        for index, future in enumerate(futures):
            try:
                row = future.result()
            except BrokenProcessPool:
                row = SweepRow(index, dict(combinations[index]), error="worker process died")
            except Exception as exc:  # unpicklable results and the like: one line, go on
                row = SweepRow(index, dict(combinations[index]), error=_one_line(exc))
            rows.append(row)
            if on_done is not None:
                on_done(row)
    return rank(rows, by)


def worker_count(runs: int, workers: int | None = None) -> int:
    """Worker processes for `runs` combinations (`workers`, else every core; at most `runs`)."""
    return max(1, min(workers or os.cpu_count() or 1, runs))


_installed: list[SweepTask] = []
"""In a worker process: the sweep's task, set once when the worker starts."""


def _install(task: SweepTask) -> None:
    _installed[:] = [task]


def _run_installed(index: int, params: dict[str, Any]) -> SweepRow:
    """Run one combination with the task the worker was started with."""
    return run_one(_installed[0], index, params)


def run_one(task: SweepTask, index: int, params: dict[str, Any]) -> SweepRow:
    """Run one combination and reduce it to a row (in a worker process)."""
    from bot.backtest.metrics import compute_metrics

    try:
        result = task(params)
        metrics = compute_metrics(result)
    except Exception as exc:
        return SweepRow(index, params, error=_one_line(exc))
    return SweepRow(
        index=index,
        params=params,
        return_percent=metrics.return_percent,
        pnl_usd=metrics.pnl_usd,
        invested_usd=metrics.invested_usd,
        value_at_end_usd=metrics.value_at_end_usd,
        avg_entry_usd=metrics.avg_entry_usd,
        max_drawdown_usd=metrics.max_drawdown_usd,
        max_drawdown_percent=metrics.max_drawdown_percent,
        lump_sum_return_percent=(
            metrics.lump_sum.return_percent if metrics.lump_sum is not None else None
        ),
        fills=metrics.fills,
        skips=metrics.skips,
        fees_usd=metrics.fees_usd,
        strategy_errors=len(result.errors),
        warnings=tuple(result.warnings),
    )


def rank(rows: Sequence[SweepRow], by: str = "return") -> list[SweepRow]:
    """Best first by the `RANKINGS` figure `by`, then return, then PnL; ties by grid order.

    Rows without the figure follow the others (no drawdown counts as a drawdown of 0);
    failed rows come last.

    Raises:
        ValueError: `by` is not a ranking.
    """
    if by not in RANKINGS:
        raise ValueError(f"unknown ranking {by!r} (rankings: {', '.join(RANKINGS)})")
    name, higher = RANKINGS[by]
    zero = Decimal(0)

    def key(row: SweepRow) -> tuple[int, Decimal, Decimal, Decimal, int]:
        if row.error is not None:
            return (2, zero, zero, zero, row.index)
        value: Decimal | None = getattr(row, name)
        if value is None and name == "max_drawdown_percent" and row.return_percent is not None:
            value = zero  # traded, never fell
        tail = (-(row.return_percent or zero), -(row.pnl_usd or zero), row.index)
        if value is None:
            return (1, zero, *tail)
        return (0, -value if higher else value, *tail)

    return sorted(rows, key=key)


def ranking_table(rows: Sequence[SweepRow], names: Sequence[str]) -> str:
    """The ranked rows as an aligned text table (swept parameters first)."""
    header = [
        "#",
        *names,
        "return",
        "vs lump",
        "PnL",
        "invested",
        "avg entry",
        "max DD",
        "max DD %",
        "fills",
        "skips",
        "fees",
    ]
    table = [header]
    for place, row in enumerate(rows, start=1):
        shown = [str(place), *(_text(row.params.get(n)) for n in names)]
        if row.error is not None:
            table.append([*shown, f"error: {row.error}"])
            continue
        table.append(
            [
                *shown,
                _percent(row.return_percent),
                _points(row.vs_lump_sum_pp),
                _money(row.pnl_usd),
                _money(row.invested_usd),
                _money(row.avg_entry_usd, places=4),
                _money(row.max_drawdown_usd),
                "-" if row.max_drawdown_percent is None else f"{row.max_drawdown_percent:.2f}%",
                str(row.fills),
                str(row.skips),
                _money(row.fees_usd),
            ]
        )
    full = [r for r in table if len(r) == len(header)]
    widths = [max(len(r[i]) for r in full) for i in range(len(header))]
    lines = []
    for r in table:
        cells = [
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=False))
        ]
        if len(r) < len(header):  # an error row: its message runs on past the columns
            cells[-1] = r[-1]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _context() -> Any:
    """Fork where the platform has it: workers start at once with the modules loaded."""
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _text(value: Any) -> str:
    return "null" if value is None else str(value)


def _money(value: Decimal | None, places: int = 2) -> str:
    return "-" if value is None else f"{value:,.{places}f}"


def _percent(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:+.2f}%"


def _points(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:+.2f} pp"
