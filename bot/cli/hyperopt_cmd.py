"""`bot hyperopt`: search a strategy's parameters on Optuna, every trial a backtest.

The options are checked first (one line naming the problem, exit 2): the space
(`bot.backtest.search_space`) against the strategy's parameters model, the objective,
the window and the prices (a series file, read once and shared by every trial and
worker). `bot backtest`'s own checks and runs are reused (`check_options`,
`run_combination`). The search is `bot.backtest.hyperopt`; with `--jobs N` it runs in N
worker processes forked after the prices are read, all on the one study. Ctrl-C stops
after the running trials; the same command resumes the study. Optuna is imported only
here, when the verb runs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import signal
import sys
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, load_or_exit

if TYPE_CHECKING:
    import optuna

    from bot.backtest.feed import Feed
    from bot.backtest.hyperopt import Objective, SearchPlan, Snapshot
    from bot.backtest.search_space import Dimension
    from bot.cli.backtest_cmd import BacktestOptions

__all__ = ["hyperopt"]

HOLDOUT_TOP: Final = 5
HELP: Final = {
    "strategy": "A configured [[strategies]] name, or a plugin name (e.g. limit_ladder). Required.",
    "space": "What to search: name=a..b[:step] (int, or decimal if a bound has a point), "
    "name=a~b (log scale), name=[x,y,z] (choices); comma-separated. Required.",
    "objective": "return, entry_vs_mean (lower is better), pnl_per_drawdown, or "
    "module.path:function (called with the result and its metrics).",
    "direction": "maximize (default) or minimize: for a module.path:function objective.",
    "trials": "Trials in the study in all (a resumed study counts those it holds).",
    "params": "Fixed parameters, as bot backtest's --params (default: none).",
    "schedule": "When the strategy ticks (default: the configured one, else once a day).",
    "sampler": "tpe (default), random or cmaes.",
    "seed": "Seed of the sampler (a reproducible search; default: a fresh random one).",
    "storage": "An SQLAlchemy URL of the study's storage, e.g. "
    "postgresql+psycopg://… (default: sqlite:///OUT/study.db).",
    "study": "The study's name (joins it if it exists; default: from the search).",
    "holdout": "Keep the end of the window out of the search, e.g. 20%; the top 5 trials "
    "are re-run on it (default: none, the whole window is searched).",
    "jobs": "Worker processes on this machine (default 1).",
    "out": "Folder for study.db, best.toml and the plots (default ./hyperopt).",
}


def hyperopt(
    ctx: typer.Context,
    strategy: Annotated[str | None, typer.Option(help=HELP["strategy"])] = None,
    space: Annotated[str | None, typer.Option(help=HELP["space"])] = None,
    objective: Annotated[str, typer.Option(help=HELP["objective"])] = "return",
    direction: Annotated[str | None, typer.Option(help=HELP["direction"])] = None,
    trials: Annotated[int, typer.Option(help=HELP["trials"], min=1)] = 100,
    start: Annotated[str | None, typer.Option("--from", help="Start, ISO-8601. Required.")] = None,
    end: Annotated[str | None, typer.Option("--to", help="End, ISO-8601. Required.")] = None,
    prices: Annotated[str | None, typer.Option(help="A price-series file. Required.")] = None,
    params: Annotated[str | None, typer.Option(help=HELP["params"])] = None,
    schedule: Annotated[str | None, typer.Option(help=HELP["schedule"])] = None,
    sampler: Annotated[str, typer.Option(help=HELP["sampler"])] = "tpe",
    seed: Annotated[int | None, typer.Option(help=HELP["seed"])] = None,
    storage: Annotated[str | None, typer.Option(help=HELP["storage"])] = None,
    study: Annotated[str | None, typer.Option(help=HELP["study"])] = None,
    holdout: Annotated[str | None, typer.Option(help=HELP["holdout"])] = None,
    jobs: Annotated[int, typer.Option(help=HELP["jobs"], min=1)] = 1,
    out: Annotated[Path, typer.Option(help=HELP["out"])] = Path("hyperopt"),
) -> None:
    """Search a strategy's parameters (Optuna): every trial a backtest; rank, best TOML."""
    try:
        import optuna  # noqa: F401  (the `search` extra)
    except ImportError:
        fail("bot hyperopt needs Optuna: pip install 'aptos-dca-bot[search]'", EXIT_USAGE)
    from bot.backtest.hyperopt import SAMPLERS, SearchError, SearchPlan, resolve_objective
    from bot.backtest.search_space import SpaceError, parse_space

    settings = load_or_exit(ctx)
    _quiet(ctx, settings)
    if not space:
        fail("--space is required, e.g. 'spacing_percent=0.5..5,rungs=1..10'", EXIT_USAGE)
    if sampler not in SAMPLERS:
        fail(f"--sampler {sampler!r}: expected one of {', '.join(SAMPLERS)}", EXIT_USAGE)
    try:
        dimensions = parse_space(space)
        goal = resolve_objective(objective, direction)
    except (SpaceError, SearchError) as exc:
        fail(str(exc), EXIT_USAGE)
    if prices == "journal":
        fail("--prices: hyperopt reads a series file (CSV or Parquet)", EXIT_USAGE)
    options = _checked(settings, strategy, params, schedule, dimensions, (start, end, prices))
    search, held = _windows(options, holdout)
    feed = _load(options)
    for window in (search, held):
        if window is not None:
            _has_prices(feed, window, prices or "")
    tags = {
        "strategy": f"{options.entry.plugin} {json.dumps(options.entry.params, default=str)}",
        "space": ",".join(d.describe() for d in dimensions),
        "objective": goal.name,
        "window": f"{search.start.isoformat()}..{search.end.isoformat()}",
    }
    digest = hashlib.sha256(json.dumps(tags, sort_keys=True).encode()).hexdigest()[:8]
    url = storage or f"sqlite:///{(out / 'study.db').resolve()}"
    if storage is None:
        _folder(out)
    plan = SearchPlan(
        dimensions=tuple(dimensions),
        objective=goal,
        trials=trials,
        storage=url,
        study=study or f"{options.entry.name}-{goal.name.replace(':', '.')}-{digest}",
        sampler=sampler,
        seed=seed,
        tags=tags,
    )
    run = functools.partial(_run_point, search, feed)
    stopped = _search(plan, run, jobs)
    _report(plan, search, feed, held, out, stopped)  # search: the entry, in-sample window


def _checked(
    settings: Any,
    strategy: str | None,
    params: str | None,
    schedule: str | None,
    dimensions: list[Dimension],
    window: tuple[str | None, str | None, str | None],
) -> BacktestOptions:
    """`bot backtest`'s checks, with the space validated against the plugin's model."""
    from bot.backtest.search_space import SpaceError, base_point, validate_space
    from bot.backtest.sweep import parse_params
    from bot.cli.backtest_cmd import check_options
    from bot.engine.plugins import PluginError, load_plugin

    try:
        fixed = parse_params(params) if params else {}
    except ValueError as exc:
        fail(f"--params {params!r}: {exc}", EXIT_USAGE)
    configured = next((e for e in settings.strategies if e.name == strategy), None)
    both = [d.name for d in dimensions if d.name in fixed]
    if both:
        fail(f"--space {both[0]}: also fixed by --params (give it in one)", EXIT_USAGE)
    if strategy:
        try:
            plugin = load_plugin(
                configured.plugin if configured else strategy, settings.scheduler.strategy_dirs
            )
        except PluginError:
            plugin = None  # check_options names the problem
        if plugin is not None:
            known = {**(configured.params if configured else {}), **fixed}
            try:
                validate_space(dimensions, known, plugin.Params)
            except SpaceError as exc:
                fail(str(exc), EXIT_USAGE)
    point = {**fixed, **base_point(dimensions)}
    start, end, prices = window
    return check_options(
        settings,
        strategy=strategy,
        params=json.dumps(point, default=str),
        schedule=schedule,
        start=start,
        end=end,
        prices=prices,
        fee_bps=None,
        slippage=None,
        depth=None,
    )


def _windows(
    options: BacktestOptions, holdout: str | None
) -> tuple[BacktestOptions, BacktestOptions | None]:
    """The search's window and the holdout's (the last part of the window), if asked."""
    if holdout is None:
        return options, None
    text = holdout.strip().removesuffix("%")
    try:
        percent = float(text)
    except ValueError:
        fail(f"--holdout {holdout!r}: expected a percent, e.g. 20%", EXIT_USAGE)
    if not 0 < percent < 100:
        fail(f"--holdout {holdout!r}: expected a percent above 0 and below 100", EXIT_USAGE)
    # The split is a display-level time (whole seconds); the windows themselves are exact.
    span = options.end - options.start
    split = options.start + span * (1 - percent / 100)
    split = split.replace(microsecond=0)
    if not options.start < split < options.end:
        fail(f"--holdout {holdout!r}: leaves no window to search", EXIT_USAGE)
    return replace(options, end=split), replace(options, start=split)


def _load(options: BacktestOptions) -> Feed:
    from bot.backtest.feed import load_feed
    from bot.paper.core.registry import PaperTokens

    assert options.prices is not None
    key_of = PaperTokens.from_token_list().key_of
    try:
        return load_feed(options.prices, key_of=key_of)
    except (ValueError, OSError) as exc:
        fail(f"--prices {str(options.prices)!r}: {_one_line(exc)}", EXIT_USAGE)


def _has_prices(feed: Feed, options: BacktestOptions, name: str) -> None:
    """A window without a single price point is a usage error, not a search."""
    from bot.clock import to_micros

    low, high = to_micros(options.start), to_micros(options.end)
    for series in feed.series.values():
        times = series.times_us
        if len(times) and int(times[-1]) >= low and int(times[0]) <= high:
            inside = times[(times >= low) & (times <= high)]
            if inside.size:
                return
    fail(
        f"no prices in {name} from {_shown(options.start)} to {_shown(options.end)}",
        EXIT_USAGE,
    )


def _run_point(options: BacktestOptions, feed: Feed, point: dict[str, Any]) -> Any:
    """One trial: `bot backtest`'s run with the point's parameters (a sweep's run)."""
    from bot.cli.backtest_cmd import run_combination

    return run_combination(options, feed, point)


_stop: list[bool] = [False]


def _on_sigint(_signum: int, _frame: Any) -> None:
    """First Ctrl-C: finish the running trial(s), then stop; second: stop now."""
    if _stop[0]:
        raise KeyboardInterrupt
    _stop[0] = True
    print("\nhyperopt: stopping after the running trial(s) (Ctrl-C again: now)", file=sys.stderr)


def _search(plan: SearchPlan, run: Any, jobs: int) -> bool:
    """Run the workers with a progress line; True when stopped by Ctrl-C."""
    from bot.backtest.hyperopt import SearchError, open_study, run_worker, snapshot

    try:
        study = open_study(plan)
    except SearchError as exc:
        fail(str(exc), EXIT_USAGE)
    progress = _Progress(plan, snapshot(study, plan.objective.direction).counted)
    previous = signal.signal(signal.SIGINT, _on_sigint)
    try:
        if jobs == 1:
            run_worker(
                plan,
                run,
                stop=lambda: _stop[0],
                on_trial=progress.study_changed,
            )
        else:
            _in_processes(plan, run, jobs, study, progress)
    except KeyboardInterrupt:
        _stop[0] = True
    except SearchError as exc:
        fail(str(exc), EXIT_USAGE)
    finally:
        signal.signal(signal.SIGINT, previous)
    progress(snapshot(study, plan.objective.direction), final=True)
    return _stop[0]


def _in_processes(
    plan: SearchPlan, run: Any, jobs: int, study: optuna.Study, progress: _Progress
) -> None:
    """`jobs` forked workers on the one study; this process shows the progress."""
    import multiprocessing

    from bot.backtest.hyperopt import snapshot

    context = multiprocessing.get_context("fork")
    stop = context.Event()
    workers = [
        context.Process(target=_worker, args=(plan, run, stop, index), daemon=True)
        for index in range(jobs)
    ]
    for worker in workers:
        worker.start()
    try:
        while any(w.is_alive() for w in workers):
            if _stop[0]:
                stop.set()
            for worker in workers:
                worker.join(timeout=1.0 / jobs)
            if progress.due():
                progress(snapshot(study, plan.objective.direction))
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    failed = [w.exitcode for w in workers if w.exitcode not in (0, 130)]
    if failed and not _stop[0]:
        fail(f"hyperopt: {len(failed)} worker(s) failed (exit {failed[0]})", EXIT_FAILURE)


def _worker(plan: SearchPlan, run: Any, stop: Any, index: int) -> None:
    """A forked worker: trials until the study is full or the search is stopped."""
    from bot.backtest.hyperopt import SearchError, run_worker

    signal.signal(signal.SIGINT, signal.SIG_IGN if stop.is_set() else _on_sigint)
    try:
        run_worker(plan, run, stop=lambda: stop.is_set() or _stop[0], offset=1000 * index)
    except KeyboardInterrupt:
        sys.exit(130)
    except SearchError as exc:
        print(f"bot: {exc}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


class _Progress:
    """`hyperopt: 12/200 trials, best 3.21 (trial 7), 0:00:31 left` on stderr, ≤ 1/s."""

    def __init__(self, plan: SearchPlan, at_start: int) -> None:
        self.plan = plan
        self.at_start = at_start
        self.began = time.monotonic()
        self.next_draw = 0.0
        self.shown = -1
        self.tty = sys.stderr.isatty()

    def study_changed(self, study: optuna.Study) -> None:
        """After a trial: the line, if a second passed (the study is read only then)."""
        from bot.backtest.hyperopt import snapshot

        if self.due():
            self(snapshot(study, self.plan.objective.direction))

    def due(self) -> bool:
        """Whether a second passed since the last line (reading the study costs)."""
        return time.monotonic() >= self.next_draw

    def __call__(self, snap: Snapshot, final: bool = False) -> None:
        """Show the line if a second passed since the last (always the final one)."""
        now = time.monotonic()
        if not final and (now < self.next_draw or snap.counted == self.shown):
            return
        if final and not self.tty and snap.counted == self.shown:
            return  # the last line already says it
        self.next_draw, self.shown = now + 1.0, snap.counted
        best = "-" if snap.best is None else f"{snap.best.value:.4f} (trial {snap.best.number})"
        done_here = snap.counted - self.at_start
        left = max(self.plan.trials - snap.counted, 0)
        eta = "-"
        if done_here > 0:
            seconds = int((now - self.began) / done_here * left)
            eta = f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        line = (
            f"hyperopt: {min(snap.counted, self.plan.trials)}/{self.plan.trials} trials, "
            f"best {self.plan.objective.name} {best}, {eta} left"
        )
        if self.tty:
            print("\r" + line.ljust(79), end="\n" if final else "", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)


def _report(
    plan: SearchPlan,
    options: BacktestOptions,
    feed: Feed,
    held: BacktestOptions | None,
    out: Path,
    stopped: bool,
) -> None:
    """The ranking, the importances, the holdout, the best TOML block and the plots."""
    from bot.backtest.hyperopt import (
        SearchError,
        exact_trials,
        holdout_rows,
        importances,
        open_study,
        snapshot,
        typed_params,
    )
    from bot.backtest.hyperopt_report import (
        best_toml,
        holdout_table,
        importance_lines,
        ranked_table,
    )

    goal: Objective = plan.objective
    study = open_study(plan)
    ranked = exact_trials(study, goal.direction)
    names = [d.name for d in plan.dimensions]
    now = snapshot(study, goal.direction)
    every = study.get_trials(deepcopy=False)
    again = sum(1 for t in every if "same_as" in t.user_attrs)
    repeats = f", {again} of them a point drawn again" if again else ""
    typer.echo(
        f"study {plan.study}: {len(every)} trials, {now.complete} completed{repeats} "
        f"({goal.name}, {goal.direction}d){' (stopped: run again to resume)' if stopped else ''}"
    )
    if not ranked:
        errors = [t.user_attrs.get("error") for t in study.get_trials(deepcopy=False)]
        first = next((e for e in errors if e), "none ran")
        fail(f"hyperopt: no trial completed (first error: {first})", EXIT_FAILURE)
    typer.echo("\n" + ranked_table(ranked, names, goal.name))
    try:
        typer.echo(
            "\nparameter importances:\n"
            + "\n".join(importance_lines(importances(study, names, plan.seed)))
        )
    except SearchError as exc:
        typer.echo(f"\n{exc}: skipped")
    if held is not None:
        run = functools.partial(_run_point, held, feed)
        rows = holdout_rows(ranked[:HOLDOUT_TOP], run, goal)
        typer.echo(
            f"\nholdout {_shown(held.start)} to {_shown(held.end)} (not searched):\n"
            + holdout_table(rows, names, goal.name)
        )
    best = ranked[0]
    params = {**options.entry.params, **typed_params(plan.dimensions, best.params)}
    note = f"bot hyperopt: study {plan.study}, trial {best.number}, {goal.name} {best.value}"
    block = best_toml(options.entry, params, note)
    typer.echo("\n" + block.rstrip())
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "best.toml").write_text(block)
    except OSError as exc:
        fail(f"--out {str(out)!r}: {exc.strerror or exc}", EXIT_USAGE)
    plots = _plots(study, out, names)
    plots += _best_report(options, feed, typed_params(plan.dimensions, best.params), out)
    print(f"written to {out}: best.toml{plots}", file=sys.stderr)


def _plots(study: optuna.Study, out: Path, names: list[str]) -> str:
    """history.png and importances.png when matplotlib is there (the `report` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import warnings

        from optuna.visualization import matplotlib as plots
    except ImportError:
        return " (no plots: pip install 'aptos-dca-bot[report]')"
    written = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        drawers: list[tuple[str, Any]] = [("history.png", plots.plot_optimization_history)]
        if len(names) > 1:
            drawers.append(("importances.png", plots.plot_param_importances))
        for name, draw in drawers:
            try:
                axes = draw(study)
                axes.figure.savefig(out / name, dpi=100, bbox_inches="tight")
                written.append(name)
            except Exception as exc:  # a plot is a convenience: say why and go on
                print(f"bot: note: {name} not drawn: {_one_line(exc)}", file=sys.stderr)
    return "".join(f", {n}" for n in written)


def _best_report(options: BacktestOptions, feed: Feed, params: dict[str, Any], out: Path) -> str:
    """The best trial's full backtest report (as `bot backtest --report`) in OUT/best/."""
    from bot.backtest.metrics import compute_metrics
    from bot.backtest.page import write_run_report
    from bot.backtest.quoting import report_convention

    result = _run_point(options, feed, params)
    full = {**options.entry.params, **params}
    best = replace(options, entry=options.entry.model_copy(update={"params": full}))
    try:
        write_run_report(
            out / "best",
            result,
            compute_metrics(result),
            best.describe(),
            report_convention(options.price_quote),
        )
    except ImportError:
        return ""  # no matplotlib: said with the plots
    except OSError as exc:
        fail(f"--out {str(out)!r}: {exc.strerror or exc}", EXIT_USAGE)
    return ", best/ (the best trial's report)"


def _quiet(ctx: typer.Context, settings: Any) -> None:
    """Warnings and errors only: hundreds of runs would bury the output in info lines."""
    from bot.cli.common import state
    from bot.logging import configure_logging

    fmt = state(ctx).log_format or settings.log.format
    configure_logging(fmt="json" if fmt == "json" else "console", level="warning")


def _folder(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"--out {str(out)!r}: {exc.strerror or exc}", EXIT_USAGE)


def _shown(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
