"""`bot run [--paper | --dry-run]`, `bot once [--dry-run]`, `bot strategies list | check NAME`.

`bot run` is the product: the strategies on their schedules, the order tracker, queued
requests from other processes, reconciliation at start. Real time goes to APScheduler;
a paper world on an accelerated or stepped clock is driven by our own driver over the same
triggers. SIGTERM/SIGINT finish what is in flight, flush the journal and exit 0.
"""

from __future__ import annotations

import asyncio
import signal
from datetime import timedelta
from typing import Annotated

import typer

from bot.cli.common import EXIT_USAGE, config_path, fail, load_or_exit, state
from bot.config import Settings, StrategyEntry
from bot.engine.brokers import Broker, DryRunBroker, LiveBroker, describe
from bot.engine.commands import process_commands
from bot.engine.engine import Engine
from bot.engine.events import OrderEvent
from bot.engine.plugins import PluginError, available_plugins, build_strategy
from bot.engine.reconcile import Reconciler
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger, start_realtime
from bot.engine.strategy import Strategy
from bot.engine.tracker import OrderTracker
from bot.engine.wallet_lock import WalletLock, lock_dir_for

strategies_app = typer.Typer(help="Strategy plugins.", no_args_is_help=True)


def _strategies(settings: Settings) -> list[Strategy]:
    dirs = settings.scheduler.strategy_dirs
    built = []
    problems = []
    for entry in settings.strategies:
        if not entry.enabled:
            continue
        try:
            built.append(build_strategy(entry, dirs))
        except PluginError as exc:
            problems.append(str(exc))
    if problems:
        fail("\n".join(problems), EXIT_USAGE)
    return built


def _engine(runtime: object, settings: Settings, *, dry_run: bool) -> Engine:
    from bot.cli.runtime import Runtime

    assert isinstance(runtime, Runtime)
    if runtime.wallet is None:
        fail(
            "no wallet: set [wallet].key_file (or BOT_WALLET__PRIVATE_KEY, or "
            "[wallet].address for a dry run)",
            EXIT_USAGE,
        )
    broker: Broker
    if dry_run:
        broker = DryRunBroker(runtime.client, runtime.tokens, runtime.wallet, runtime.signer)
    else:
        if runtime.executor is None or runtime.signer is None:
            fail(
                "trading needs the wallet's key: set [wallet].key_file or BOT_WALLET__PRIVATE_KEY",
                EXIT_USAGE,
            )
        broker = LiveBroker(runtime.executor)
    budgets = {e.name: e.budget for e in settings.strategies if e.budget}
    risk = RiskChecker(settings.risk, runtime.journal, runtime.tokens, budgets=budgets)
    tracker = (
        None
        if dry_run
        else OrderTracker(runtime.client, runtime.journal, runtime.clock, runtime.wallet)
    )
    return Engine(
        client=runtime.client,
        journal=runtime.journal,
        clock=runtime.clock,
        wallet=runtime.wallet,
        tokens=runtime.tokens,
        broker=broker,
        risk=risk,
        strategies=_strategies(settings),
        node=runtime.node,
        tracker=tracker,
        timeout_seconds=settings.scheduler.strategy_timeout_seconds,
    )


def _print_report(report: object) -> None:
    from bot.engine.engine import TickReport

    assert isinstance(report, TickReport)
    if not report.ok:
        typer.echo(f"{report.strategy}: FAILED: {report.error}")
    for action, reason in report.refusals:
        typer.echo(f"{report.strategy}: refused {describe(action)} — {reason}")
    for action, outcome in report.outcomes:
        if outcome.lines:
            for line in outcome.lines:
                typer.echo(line)
        else:
            extra = f" order {outcome.order_id}" if outcome.order_id else ""
            typer.echo(
                f"{report.strategy}: {describe(action)} → {outcome.state}{extra}"
                + (f" ({outcome.detail})" if outcome.detail else "")
            )


def once(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show, send nothing that spends.")
    ] = False,
) -> None:
    """Tick every strategy once; exit non-zero if any strategy failed."""
    settings = load_or_exit(ctx)
    failed = asyncio.run(_once(settings, dry_run))
    if failed:
        raise typer.Exit(1)


async def _once(settings: Settings, dry_run: bool) -> int:
    from bot.cli.runtime import Runtime

    runtime = await Runtime.open(settings, with_signer=True)
    async with runtime:
        engine = _engine(runtime, settings, dry_run=dry_run)
        reports = await engine.tick_all()
    for report in reports:
        _print_report(report)
    return sum(1 for r in reports if not r.ok)


def run(
    ctx: typer.Context,
    paper: Annotated[bool, typer.Option("--paper", help="Trade in the paper world.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show, send nothing that spends.")
    ] = False,
) -> None:
    """Run the strategies on their schedules until stopped (SIGTERM/SIGINT)."""
    if paper and dry_run:
        fail("choose one of --paper and --dry-run", EXIT_USAGE)
    if paper and config_path(state(ctx)) is None:
        from bot.cli.demo import demo_settings

        settings = demo_settings(load_or_exit(ctx))
    else:
        settings = load_or_exit(ctx)
        if paper:
            settings = settings.model_copy(update={"mode": "paper"})
    if not settings.strategies:
        fail("no [[strategies]] configured (see config.example.toml)", EXIT_USAGE)
    asyncio.run(_run(settings, dry_run))


async def _run(settings: Settings, dry_run: bool) -> None:
    from bot.cli.runtime import Runtime
    from bot.clock import AcceleratedClock, SteppedClock

    runtime = await Runtime.open(settings)
    lock = None
    async with runtime:
        engine = _engine(runtime, settings, dry_run=dry_run)
        assert runtime.wallet is not None
        if not dry_run:
            lock = WalletLock(lock_dir_for(settings.journal.url), runtime.wallet)
            if not lock.try_acquire():
                fail(f"another process trades {runtime.wallet} (lock {lock.path})", EXIT_USAGE)
            await Reconciler(
                journal=runtime.journal,
                client=runtime.client,
                clock=runtime.clock,
                wallet=runtime.wallet,
                tokens=runtime.tokens,
                node=runtime.node,
            ).run()
        if engine.tracker is not None:
            engine.tracker.subscribe(_announce)
        await engine.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        jobs = _jobs(engine, settings, runtime, dry_run)
        typer.echo(
            f"bot running: {len(engine.strategies)} strategies, wallet {runtime.wallet}, "
            f"mode {settings.mode}{' (dry run)' if dry_run else ''}"
        )
        try:
            if isinstance(runtime.clock, SteppedClock | AcceleratedClock):
                driver = Driver(runtime.clock, jobs)
                runner = asyncio.create_task(
                    driver.run_until(runtime.clock.now() + timedelta(days=36_500), stop)
                )
                await stop.wait()
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)
            else:
                scheduler = start_realtime(
                    jobs, misfire_grace_seconds=settings.scheduler.misfire_grace_seconds
                )
                await stop.wait()
                scheduler.shutdown(wait=True)
        finally:
            await engine.stop()
            if runtime.world is not None and settings.paper.snapshot_file is not None:
                runtime.world.save()
            if lock is not None:
                lock.release()
    typer.echo("bot stopped")


def _jobs(engine: Engine, settings: Settings, runtime: object, dry_run: bool) -> list[Job]:
    from bot.cli.runtime import Runtime

    assert isinstance(runtime, Runtime)
    start = runtime.clock.now()
    entries = {e.name: e for e in settings.strategies}
    jobs = []
    for name in engine.strategies:

        async def tick(name: str = name) -> None:
            _print_report(await engine.tick(name))

        jobs.append(Job(f"strategy:{name}", make_trigger(entries[name].schedule, start), tick))
    if not dry_run:
        from bot.config import Schedule

        every = settings.scheduler.tracker_interval_seconds
        jobs.append(
            Job(
                "tracker", make_trigger(Schedule(interval_seconds=every), start), engine.poll_orders
            )
        )
        if runtime.executor is not None:
            executor = runtime.executor

            async def commands() -> None:
                await process_commands(runtime.journal, executor, runtime.clock)

            jobs.append(
                Job(
                    "commands",
                    make_trigger(
                        Schedule(interval_seconds=settings.scheduler.commands_interval_seconds),
                        start,
                    ),
                    commands,
                )
            )
    return jobs


def _announce(event: OrderEvent) -> None:
    typer.echo(f"order {event.order_id[:12]} ({event.kind}): {type(event).__name__}")


@strategies_app.command("list")
def strategies_list(ctx: typer.Context) -> None:
    """The plugins available, and the strategies configured."""
    settings = load_or_exit(ctx)
    try:
        plugins = available_plugins(settings.scheduler.strategy_dirs)
    except PluginError as exc:
        fail(str(exc), EXIT_USAGE)
    typer.echo("plugins:")
    for name, description in sorted(plugins.items()):
        typer.echo(f"  {name:<16} {description}")
    typer.echo("configured:")
    for entry in settings.strategies:
        when = (
            f"every {entry.schedule.interval_seconds}s"
            if entry.schedule.interval_seconds
            else f"cron {entry.schedule.cron}"
        )
        flag = "" if entry.enabled else " (disabled)"
        typer.echo(f"  {entry.name:<16} {entry.plugin} {when}{flag}")


@strategies_app.command("check")
def strategies_check(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A configured strategy's name.")],
) -> None:
    """Load one configured strategy and validate its parameters; exit 2 if invalid."""
    settings = load_or_exit(ctx)
    entry: StrategyEntry | None = next((e for e in settings.strategies if e.name == name), None)
    if entry is None:
        fail(f"no configured strategy named {name!r}", EXIT_USAGE)
    try:
        strategy = build_strategy(entry, settings.scheduler.strategy_dirs)
    except PluginError as exc:
        fail(str(exc), EXIT_USAGE)
    typer.echo(f"{name}: OK ({entry.plugin}, params {strategy.params.model_dump(mode='json')})")
