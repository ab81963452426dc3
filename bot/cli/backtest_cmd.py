"""`bot backtest`: replay recorded prices through a strategy, report what it would have done.

`--strategy` names a configured `[[strategies]]` entry (its plugin, schedule and params;
`--params` overrides single keys) or a plugin (then `--schedule`, default once a day).
The run itself is `bot.backtest.runner`; this module checks the options (one line naming
the option, exit 2), runs it (twice when the strategy has rate bounds: the second run
without them is the "no bounds" comparison), and prints the summary table or JSON;
`--report DIR` adds report.json, price.png, value.png, trades.csv and report.html;
`--accounting` adds `bot report`'s summary of the run (`bot.cli.backtest_accounting`);
`--sweep` runs a parameter grid on every core and prints the ranking (`--rank-by`), and
with `--report` writes sweep.csv, sweep.html and the best runs' reports. Warnings about
the prices (a window past the data's end, skipped rows) are one line each on stderr.

Start-up stays light: matplotlib, the process pool and the engine are imported only by
the runs that use them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import typer

from bot.backtest.spec import parse_funding, parse_schedule
from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, load_or_exit

if TYPE_CHECKING:
    from collections.abc import Callable

    from bot.backtest.feed import Feed
    from bot.backtest.metrics import Metrics
    from bot.backtest.result import BacktestResult
    from bot.backtest.runner import Progress
    from bot.backtest.spec import BacktestSpec
    from bot.backtest.sweep import SweepRow
    from bot.config import RiskSettings, Settings, StrategyEntry

__all__ = ["BacktestOptions", "backtest", "check_options", "parse_schedule", "run_combination"]

T = TypeVar("T")
DEFAULT_SCHEDULE: Final = "1 day"
"""A plugin run without `--schedule` ticks daily, as the examples and benchmarks do."""
HELP: Final = {
    "strategy": "A configured [[strategies]] name, or a plugin name (e.g. recurring_dca). "
    "Required.",
    "params": 'Parameters: a JSON object, or k=v,k=v (values as text; "null" unsets). '
    "Overrides the configured ones key by key. Default: none (the configured params, else "
    "the plugin's defaults).",
    "schedule": 'When the strategy ticks: "1h", "15m", "1 day", or a cron line in UTC. '
    "Default: the configured strategy's own schedule; for a plugin name, once a day.",
    "from": "Start, ISO-8601 (UTC if no offset). Required.",
    "to": "End, ISO-8601. Required.",
    "prices": 'A price-series file (CSV or Parquet), or "journal" for recorded price ticks. '
    "Required.",
    "fee_bps": "Pool fee in basis points (default 25).",
    "slippage": "Execution slippage in percent, 0 to below 100 (default 0).",
    "depth": "Pool depth per side in USD (default 2000000).",
    "funding": "Start balances, token=amount,... (e.g. USDC=1000); others start at 0. "
    "Default: 1,000,000 USD worth of each token the strategies name.",
    "report": "Write report.json, report.html and PNG charts into this folder. Default: none.",
    "sweep": "param=v1,v2,... (repeatable): run the grid on every core and rank it. "
    "Default: one run.",
    "rank_by": "Rank a sweep by: return, pnl, vs-lump-sum (highest first), drawdown, entry, "
    "fees (lowest first).",
    "json": "Print the report as JSON instead of a table.",
    "accounting": "Also show the accounting summary of bot report (cost basis, P&L) for the run.",
    "verbose": "Log the strategy's decisions (info level).",
}


@dataclass(frozen=True)
class BacktestOptions:
    """The checked options of one `bot backtest` (exact values, aware UTC times)."""

    entry: StrategyEntry
    strategy_dirs: tuple[Path, ...]
    start: datetime
    end: datetime
    prices: Path | None  # None: the journal's price_ticks
    journal_url: str
    risk: RiskSettings
    timeout_seconds: float
    price_quote: tuple[str, ...]  # [display].price_quote: how the report shows prices
    fee_bps: int | None = None
    slippage: Decimal | None = None
    depth_usd: Decimal | None = None
    companions: tuple[StrategyEntry, ...] = ()  # configured strategies it reads orders of
    funding: dict[str, Decimal] | None = None  # None: the automatic funding

    def describe(self) -> dict[str, Any]:
        """The options as plain data, for the report's `spec`."""
        extra: dict[str, Any] = {}
        if self.companions:
            extra["companions"] = [entry.name for entry in self.companions]
        if self.funding is not None:
            extra["funding"] = self.funding
        return {
            "strategy": self.entry.name,
            "plugin": self.entry.plugin,
            "schedule": self.entry.schedule.model_dump(exclude_none=True),
            "params": self.entry.params,
            "from": self.start,
            "to": self.end,
            "prices": str(self.prices) if self.prices is not None else "journal",
            "fee_bps": self.fee_bps,
            "slippage": self.slippage,
            "depth_usd": self.depth_usd,
            **extra,
        }


def backtest(
    ctx: typer.Context,
    strategy: Annotated[str | None, typer.Option(help=HELP["strategy"])] = None,
    params: Annotated[str | None, typer.Option(help=HELP["params"])] = None,
    schedule: Annotated[str | None, typer.Option(help=HELP["schedule"])] = None,
    start: Annotated[str | None, typer.Option("--from", help=HELP["from"])] = None,
    end: Annotated[str | None, typer.Option("--to", help=HELP["to"])] = None,
    prices: Annotated[str | None, typer.Option(help=HELP["prices"])] = None,
    fee_bps: Annotated[str | None, typer.Option(help=HELP["fee_bps"])] = None,
    slippage: Annotated[str | None, typer.Option(help=HELP["slippage"])] = None,
    depth: Annotated[str | None, typer.Option(help=HELP["depth"])] = None,
    funding: Annotated[str | None, typer.Option(help=HELP["funding"])] = None,
    report: Annotated[Path | None, typer.Option(help=HELP["report"])] = None,
    sweep: Annotated[list[str] | None, typer.Option(help=HELP["sweep"])] = None,
    rank_by: Annotated[str, typer.Option(help=HELP["rank_by"])] = "return",
    as_json: Annotated[bool, typer.Option("--json", help=HELP["json"])] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=HELP["verbose"])] = False,
    accounting: Annotated[bool, typer.Option("--accounting", help=HELP["accounting"])] = False,
) -> None:
    """Backtest one strategy on recorded prices: fills, PnL, drawdown, comparisons."""
    if accounting and sweep:
        fail("--accounting shows one run: it does not combine with --sweep", EXIT_USAGE)
    settings = load_or_exit(ctx)
    if not verbose and settings.log.level in ("debug", "info"):
        _quiet_logs(ctx, settings)
    options = check_options(
        settings,
        strategy=strategy,
        params=params,
        schedule=schedule,
        start=start,
        end=end,
        prices=prices,
        fee_bps=fee_bps,
        slippage=slippage,
        depth=depth,
        funding=funding,
    )
    if options.companions and options.funding is None:
        names = ", ".join(e.name for e in options.companions)
        print(
            f"bot: note: with {names}, the wallet starts with 1,000,000 USD of each token "
            "they name (--funding sets the start balances)",
            file=sys.stderr,
        )
    from bot.backtest.metrics import compute_metrics, with_no_bounds

    free, removed = (None, []) if sweep else _without_bounds(options)
    # Read a series file once when it serves several runs; one run reads it itself.
    feed = _preload(options) if sweep or free is not None else None
    if sweep:
        _run_sweep(options, feed, sweep, (report, rank_by), as_json)
        return
    result = _run_with_bar(options, feed)
    metrics = compute_metrics(result)
    if free is not None:
        unbounded = compute_metrics(_run_with_bar(free, feed))
        metrics = with_no_bounds(metrics, unbounded, removed)
    _output(options, result, metrics, report, as_json, settings if accounting else None)


def check_options(
    settings: Settings,
    *,
    strategy: str | None,
    params: str | None,
    schedule: str | None,
    start: str | None,
    end: str | None,
    prices: str | None,
    fee_bps: str | None,
    slippage: str | None,
    depth: str | None,
    funding: str | None = None,
) -> BacktestOptions:
    """Check every option; the first problem ends the command (one line, exit 2).

    A configured strategy brings its companions: the configured strategies whose orders
    it reads (`order_sources()`, `bot.backtest.companions`); one not configured is exit 2.
    """
    from bot.config import StrategyEntry
    from bot.engine.plugins import PluginError, build_strategy

    if not strategy:
        fail("--strategy is required (a configured strategy or a plugin name)", EXIT_USAGE)
    configured = next((e for e in settings.strategies if e.name == strategy), None)
    from bot.backtest.sweep import parse_params

    overrides = _or_usage("--params", parse_params, params) if params else {}
    dirs = tuple(settings.scheduler.strategy_dirs)
    if configured is not None:
        merged = {**configured.params, **overrides}
        when = _or_usage("--schedule", parse_schedule, schedule) if schedule else None
        entry = configured.model_copy(
            update={"params": merged, **({"schedule": when} if when else {})}
        )
    else:
        when = _or_usage("--schedule", parse_schedule, schedule or DEFAULT_SCHEDULE)
        try:
            entry = StrategyEntry(name=strategy, plugin=strategy, schedule=when, params=overrides)
        except ValueError:
            fail(f"--strategy {strategy!r}: not a valid strategy name", EXIT_USAGE)
    try:
        build_strategy(entry, dirs)
    except PluginError as exc:
        configured_names = ", ".join(e.name for e in settings.strategies) or "none"
        hint = f" (configured strategies: {configured_names})" if configured is None else ""
        fail(exc.problems[0] + hint, EXIT_USAGE)
    companions = _companions(entry, settings) if configured is not None else ()
    begin = _or_usage("--from", _parse_time, start) if start else None
    finish = _or_usage("--to", _parse_time, end) if end else None
    if begin is None or finish is None:
        fail(f"{'--from' if begin is None else '--to'} is required (ISO-8601 time)", EXIT_USAGE)
    if finish <= begin:
        fail(f"--to {end!r}: must be after --from {start!r}", EXIT_USAGE)
    if not prices:
        fail('--prices is required: a series file, or "journal"', EXIT_USAGE)
    source = None if prices == "journal" else Path(prices)
    if source is not None and not source.is_file():
        fail(f"--prices {prices!r}: no such file", EXIT_USAGE)
    if source is None:
        from bot.journal.db import sqlite_file  # SQLAlchemy: only for journal prices

        journal_file = sqlite_file(settings.journal.url)
        if journal_file is not None and not journal_file.is_file():
            fail(f"--prices journal: no journal at {journal_file} (see [journal].url)", EXIT_USAGE)
    return BacktestOptions(
        entry=entry,
        strategy_dirs=dirs,
        start=begin,
        end=finish,
        prices=source,
        journal_url=settings.journal.url,
        risk=settings.risk,
        timeout_seconds=settings.scheduler.strategy_timeout_seconds,
        price_quote=tuple(settings.display.price_quote),
        fee_bps=_bps(fee_bps) if fee_bps is not None else None,
        slippage=_slippage(slippage) if slippage is not None else None,
        depth_usd=_depth(depth) if depth is not None else None,
        companions=companions,
        funding=_or_usage("--funding", parse_funding, funding) if funding is not None else None,
    )


def _companions(entry: StrategyEntry, settings: Settings) -> tuple[StrategyEntry, ...]:
    """The configured strategies run beside `entry`; one that cannot run is exit 2."""
    from bot.backtest.companions import CompanionError, companions_of

    try:
        return companions_of(entry, settings.strategies, settings.scheduler.strategy_dirs)
    except CompanionError as exc:
        fail(str(exc), EXIT_USAGE)


def _or_usage(option: str, parse: Any, text: str) -> Any:
    try:
        return parse(text)
    except ValueError as exc:
        fail(f"{option} {text!r}: {exc}", EXIT_USAGE)


def _parse_time(text: str) -> datetime:
    from bot.clock import parse_utc

    try:
        return parse_utc(text)
    except ValueError:
        raise ValueError("not an ISO-8601 time (e.g. 2026-01-01T00:00:00Z)") from None


def _bps(text: str) -> int:
    if not text.strip().isdigit() or not 0 <= int(text) < 10_000:
        fail(f"--fee-bps {text!r}: expected a whole number from 0 to 9999", EXIT_USAGE)
    return int(text)


def _decimal(option: str, text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        fail(f"{option} {text!r}: not a number", EXIT_USAGE)
    if not value.is_finite():
        fail(f"{option} {text!r}: not a finite number", EXIT_USAGE)
    return value


def _slippage(text: str) -> Decimal:
    value = _decimal("--slippage", text)
    if not Decimal(0) <= value < Decimal(100):
        fail(f"--slippage {text!r}: expected a percent from 0 to below 100", EXIT_USAGE)
    return value


def _depth(text: str) -> Decimal:
    value = _decimal("--depth", text)
    if value <= 0:
        fail(f"--depth {text!r}: expected a positive USD amount", EXIT_USAGE)
    return value


def _spec(options: BacktestOptions) -> BacktestSpec:
    """The runner's spec for these options (unset options keep the spec's defaults)."""
    from bot.backtest.spec import JOURNAL, BacktestSpec

    given: dict[str, Any] = {
        "fee_bps": options.fee_bps,
        "slippage": options.slippage,
        "depth_usd": options.depth_usd,
    }
    return BacktestSpec(
        strategy=options.entry,
        start=options.start,
        end=options.end,
        prices=options.prices if options.prices is not None else JOURNAL,
        journal_url=options.journal_url,
        strategy_dirs=options.strategy_dirs,
        risk=options.risk,
        timeout_seconds=options.timeout_seconds,
        companions=options.companions,
        funding=options.funding,
        **{k: v for k, v in given.items() if v is not None},
    )


def run_options(
    options: BacktestOptions, feed: Feed | None = None, progress: Progress | None = None
) -> BacktestResult:
    """Run one backtest of `options` (also in sweep workers); `feed`: prices already read."""
    from bot.backtest.runner import run_backtest

    return run_backtest(_spec(options), progress=progress, feed=feed)


def run_combination(
    options: BacktestOptions, feed: Feed | None, overrides: dict[str, Any]
) -> BacktestResult:
    """One sweep combination: `options` with some parameters replaced (picklable task)."""
    entry = options.entry.model_copy(update={"params": {**options.entry.params, **overrides}})
    return run_options(replace(options, entry=entry), feed)


def _preload(options: BacktestOptions) -> Feed | None:
    """Read a series file once for every run of this command (the journal: each run reads).

    The same reader and token keys as the runner's own loading; a file it cannot read is
    one line and exit 2.
    """
    path = options.prices
    if path is None:
        return None
    from bot.backtest.feed import load_feed
    from bot.paper.core.registry import PaperTokens

    key_of = PaperTokens.from_token_list().key_of
    return _guarded(lambda: load_feed(path, key_of=key_of), (ValueError, OSError))


def _quiet_logs(ctx: typer.Context, settings: Settings) -> None:
    """Warnings and errors only: a year of ticks would bury the summary in info lines."""
    from bot.cli.common import state
    from bot.logging import configure_logging

    fmt = state(ctx).log_format or settings.log.format
    configure_logging(fmt="json" if fmt == "json" else "console", level="warning")


def _run_with_bar(options: BacktestOptions, feed: Feed | None) -> BacktestResult:
    """One run, with a progress bar when stderr is a terminal."""
    from bot.backtest.progress import progress_for
    from bot.backtest.runner import BacktestError

    bar = progress_for(options.start, options.end)
    try:
        # BacktestError: a token without prices, bad funding; OSError: the journal.
        return _guarded(lambda: run_options(options, feed, bar), (BacktestError, OSError))
    finally:
        if bar is not None:
            bar.close()


def _guarded(run: Callable[[], T], usage: tuple[type[Exception], ...]) -> T:
    """Run; a problem of the inputs (`usage`) is one line and exit 2, anything else exit 1."""
    try:
        return run()
    except usage as exc:
        fail(f"backtest: {_one_line(exc)}", EXIT_USAGE)
    except Exception as exc:
        fail(f"backtest failed: {type(exc).__name__}: {_one_line(exc)}", EXIT_FAILURE)


def _without_bounds(options: BacktestOptions) -> tuple[BacktestOptions | None, list[str]]:
    """The options of the "no bounds" run and the bounds it removes; None without bounds.

    Removed parameters fall back to their defaults; when the plugin then refuses the
    parameters (a required bound), there is no comparison (a note on stderr says why).
    """
    from bot.backtest.metrics import bound_params
    from bot.engine.plugins import PluginError, build_strategy, load_plugin

    plugin = load_plugin(options.entry.plugin, options.strategy_dirs)
    strategy = build_strategy(options.entry, options.strategy_dirs)
    removed = bound_params(plugin, strategy.params)
    if not removed:
        return None, []
    free_params = {k: v for k, v in options.entry.params.items() if k not in removed}
    free = replace(options, entry=options.entry.model_copy(update={"params": free_params}))
    try:
        build_strategy(free.entry, free.strategy_dirs)
    except PluginError as exc:
        print(f"no-bounds comparison skipped: {exc.problems[0]}", file=sys.stderr)
        return None, []
    return free, removed


def _output(
    options: BacktestOptions,
    result: BacktestResult,
    metrics: Metrics,
    report_dir: Path | None,
    as_json: bool,
    accounting: Settings | None = None,
) -> None:
    from bot.backtest.quoting import report_convention
    from bot.backtest.report import build_report, summary_table

    convention = report_convention(options.price_quote)
    _warn(result.warnings)
    block = None
    if accounting is not None:  # bot report's summary of the run: only when asked
        from bot.cli.backtest_accounting import accounting_block

        block = accounting_block(result, accounting.accounting, convention)
    if as_json:
        import json

        data = build_report(result, metrics, options.describe())
        if block is not None:
            data["accounting"] = block.data()
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        typer.echo(summary_table(result, metrics, convention))
        if block is not None:
            typer.echo("\n" + "\n".join(block.lines()))
    if report_dir is not None:
        from bot.backtest.page import write_run_report

        began = _monotonic()
        spec = options.describe()
        written = _writing(
            report_dir, lambda: write_run_report(report_dir, result, metrics, spec, convention)
        )
        names = ", ".join(p.name for p in written)
        took = _monotonic() - began
        print(f"report written to {report_dir} in {took:.1f} s: {names}", file=sys.stderr)


def _warn(warnings: list[str]) -> None:
    for line in warnings:
        print(f"bot: warning: {line}", file=sys.stderr)


def _monotonic() -> float:
    import time

    return time.monotonic()


def _writing(report_dir: Path, write: Callable[[], T]) -> T:
    """Write report files; a folder that cannot be written is one line, exit 2."""
    try:
        return write()
    except OSError as exc:
        fail(f"--report {str(report_dir)!r}: {exc.strerror or exc}", EXIT_USAGE)


def _run_sweep(
    options: BacktestOptions,
    feed: Feed | None,
    sweep: list[str],
    report: tuple[Path | None, str],
    as_json: bool,
) -> None:
    import functools

    from bot.backtest.progress import SweepProgress
    from bot.backtest.sweep import (
        RANKINGS,
        SweepError,
        grid,
        parse_sweep,
        ranking_table,
        run_sweep,
        worker_count,
    )
    from bot.backtest.sweep_report import sweep_warnings
    from bot.engine.plugins import load_plugin

    report_dir, by = report
    if by not in RANKINGS:
        fail(f"--rank-by {by!r}: expected one of {', '.join(RANKINGS)}", EXIT_USAGE)
    try:
        axes = parse_sweep(sweep)
    except SweepError as exc:
        fail(str(exc), EXIT_USAGE)
    known = load_plugin(options.entry.plugin, options.strategy_dirs).Params.model_fields
    for axis in axes:
        if axis.name not in known:
            fail(
                f"--sweep {axis.name}: not a parameter of {options.entry.plugin} "
                f"(parameters: {', '.join(known)})",
                EXIT_USAGE,
            )
    combinations = grid(axes)
    progress = SweepProgress(len(combinations))
    progress.start(worker_count(len(combinations)))
    task = functools.partial(run_combination, options, feed)
    rows = run_sweep(task, combinations, on_done=progress, by=by)
    _warn(sweep_warnings(rows))
    names = [a.name for a in axes]
    if as_json:
        import json

        from bot.backtest.report import to_jsonable

        typer.echo(json.dumps(to_jsonable(rows), indent=2, ensure_ascii=False))
    else:
        typer.echo(ranking_table(rows, names))
    if report_dir is not None:
        _sweep_files(options, feed, report_dir, rows, names, by)
    if all(row.error is not None for row in rows):
        raise typer.Exit(EXIT_FAILURE)


def _sweep_files(
    options: BacktestOptions,
    feed: Feed | None,
    report_dir: Path,
    rows: list[SweepRow],
    names: list[str],
    by: str,
) -> None:
    """sweep.json, sweep.csv, sweep.html and the best runs' reports (re-run here)."""
    import functools

    from bot.backtest.metrics import compute_metrics
    from bot.backtest.quoting import report_convention
    from bot.backtest.sweep_report import BEST_RUNS, BestRun, write_sweep_report

    began = _monotonic()
    best = []
    for place, row in enumerate([r for r in rows if r.error is None][:BEST_RUNS], start=1):
        rerun = functools.partial(run_combination, options, feed, row.params)
        result = _guarded(rerun, ())
        best.append(BestRun(place, row, result, compute_metrics(result)))
    spec = {**options.describe(), "swept": names}
    quoted = report_convention(options.price_quote)
    write = functools.partial(write_sweep_report, spec=spec, by=by, best=best, convention=quoted)
    written = _writing(report_dir, lambda: write(report_dir, rows, names))
    top = [p.name for p in written if p.parent == report_dir]
    took = _monotonic() - began
    print(
        f"sweep report written to {report_dir} in {took:.1f} s: {', '.join(top)}"
        + (f" and the best {len(best)} runs' reports (best-1/…)" if best else ""),
        file=sys.stderr,
    )


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
