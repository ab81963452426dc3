"""`bot run [--paper | --dry-run]`, `bot once [--dry-run]`.

`bot run` is the product; the daemon itself (start-up, jobs, heartbeat, systemd
notification, SIGHUP reload, shutdown) lives in `bot.cli.daemon`. This module holds the
verbs and what they share: building the strategies, the risk checker and the engine of a
config, and printing what a tick did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Annotated

import typer
from apscheduler.triggers.base import BaseTrigger

from bot.api import ApiError
from bot.aptos.tokens import TokenBook
from bot.chain import ChainError
from bot.cli.common import (
    EXIT_FAILURE,
    EXIT_USAGE,
    config_path,
    fail,
    load_or_exit,
    state,
    take_wallet_lock,
)
from bot.cli.runtime import Runtime
from bot.config import Schedule, Settings
from bot.engine.brokers import Broker, DryRunBroker, LiveBroker, describe
from bot.engine.commands import process_commands
from bot.engine.engine import Engine, TickReport
from bot.engine.pauses import paused_strategies
from bot.engine.plugins import PluginError
from bot.engine.plugins import build_strategies as build_strategies  # the daemon's import
from bot.engine.reconcile import Reconciler
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Job, make_trigger
from bot.engine.state_store import JournalStateStore, OverlayStateStore, StateStore
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from bot.logging import redact
from bot.price_view import PriceConvention

STRATEGY_JOB_PREFIX = "strategy:"
"""A strategy's tick job is called this followed by the strategy's name."""


def risk_checker(settings: Settings, journal: Journal, tokens: TokenBook) -> RiskChecker:
    """`[risk]` and the strategies' daily budgets, as the engine checks them."""
    budgets = {e.name: e.budget for e in settings.strategies if e.budget}
    return RiskChecker(settings.risk, journal, tokens, budgets=budgets)


def build_engine(runtime: Runtime, settings: Settings, *, dry_run: bool) -> Engine:
    """The engine of `settings` over an open runtime; exit 2 when it cannot trade as asked."""
    if runtime.wallet is None:
        fail(
            "no wallet: set [wallet].key_file (or BOT_WALLET__PRIVATE_KEY, or "
            "[wallet].address for a dry run)",
            EXIT_USAGE,
        )
    convention = PriceConvention(settings.display.price_quote, runtime.tokens)
    broker: Broker
    if dry_run:
        broker = DryRunBroker(
            runtime.client, runtime.tokens, runtime.wallet, runtime.signer, convention
        )
    else:
        if runtime.executor is None or runtime.signer is None:
            fail(
                "trading needs the wallet's key: set [wallet].key_file or BOT_WALLET__PRIVATE_KEY",
                EXIT_USAGE,
            )
        broker = LiveBroker(runtime.executor)
    tracker = (
        None
        if dry_run
        else OrderTracker(runtime.client, runtime.journal, runtime.clock, runtime.wallet)
    )
    # A dry run reads the journal's strategy state and keeps what it saves in memory:
    # the real run that follows starts from the journal as the dry run found it.
    state_store: StateStore = JournalStateStore(runtime.journal)
    if dry_run:
        state_store = OverlayStateStore(state_store)
    try:
        strategies = build_strategies(settings.strategies, settings.scheduler.strategy_dirs)
    except PluginError as exc:
        fail(str(exc), EXIT_USAGE)
    return Engine(
        client=runtime.client,
        journal=runtime.journal,
        clock=runtime.clock,
        wallet=runtime.wallet,
        tokens=runtime.tokens,
        broker=broker,
        risk=risk_checker(settings, runtime.journal, runtime.tokens),
        strategies=strategies,
        node=runtime.node,
        tracker=tracker,
        timeout_seconds=settings.scheduler.strategy_timeout_seconds,
        state_store=state_store,
        stuck_after=settings.daemon.stuck_ticks,
        convention=convention,
        paused=paused_strategies(runtime.journal),
    )


def print_report(report: TickReport, convention: PriceConvention | None = None) -> None:
    """What a tick did, for the person watching: failures, refusals, outcomes.

    Every line passes the log redactor: an error may quote a secret.
    """
    lines = []
    if report.paused:
        lines.append(f"{report.strategy}: paused (bot strategies resume {report.strategy})")
    if not report.ok:
        lines.append(f"{report.strategy}: FAILED: {report.error}")
    for action, reason in report.refusals:
        lines.append(f"{report.strategy}: refused {describe(action, convention)} — {reason}")
    for action, outcome in report.outcomes:
        if outcome.lines:
            lines.extend(outcome.lines)
        else:
            extra = f" order {outcome.order_id}" if outcome.order_id else ""
            lines.append(
                f"{report.strategy}: {describe(action, convention)} → {outcome.state}{extra}"
                + (f" ({outcome.detail})" if outcome.detail else "")
            )
    for line in lines:
        typer.echo(redact(line))


def strategy_job(
    engine: Engine,
    name: str,
    schedule: Schedule,
    start: datetime,
    on_report: Callable[[TickReport], None] = print_report,
    *,
    tick_at_start: bool = True,
) -> Job:
    """The job ticking strategy `name` on `schedule` from `start`; reports go to `on_report`.

    `tick_at_start` (the schedule's own setting wins): the first tick is at `start`, else
    at the schedule's first slot after it.
    """

    async def tick() -> None:
        if name in engine.strategies:  # not when it was removed while this run waited
            on_report(await engine.tick(name))

    at_start = schedule.tick_at_start if schedule.tick_at_start is not None else tick_at_start
    first = start
    if not at_start and schedule.interval_seconds is not None:
        first = start + timedelta(seconds=schedule.interval_seconds)
    job = Job(STRATEGY_JOB_PREFIX + name, make_trigger(schedule, first), tick)
    if at_start and schedule.cron is not None:
        job.first_fire = start
    return job


def trading_jobs(
    engine: Engine,
    settings: Settings,
    runtime: Runtime,
    dry_run: bool,
    on_report: Callable[[TickReport], None] = print_report,
) -> list[Job]:
    """The daemon's jobs, each first firing now.

    The strategies' ticks, the order poll, the command queue and the reconciler of lost
    answers.
    """
    start = runtime.clock.now()
    entries = {e.name: e for e in settings.strategies}
    at_start = settings.scheduler.tick_at_start
    jobs = [
        strategy_job(engine, name, entries[name].schedule, start, on_report, tick_at_start=at_start)
        for name in engine.strategies
    ]
    if not dry_run:

        def every(seconds: int) -> BaseTrigger:
            return make_trigger(Schedule(interval_seconds=seconds), start)

        jobs.append(
            Job("tracker", every(settings.scheduler.tracker_interval_seconds), engine.poll_orders)
        )
        executor = runtime.executor
        if executor is not None:

            async def commands() -> None:
                await process_commands(runtime.journal, executor, runtime.clock, engine)

            jobs.append(
                Job("commands", every(settings.scheduler.commands_interval_seconds), commands)
            )
            reconciler = Reconciler(
                journal=runtime.journal,
                client=runtime.client,
                clock=runtime.clock,
                wallet=executor.wallet,
                tokens=runtime.tokens,
                node=runtime.node,
                on_foreign_signer=runtime.signer.pause if runtime.signer is not None else None,
            )

            async def reconcile() -> None:
                # Only intents whose execution is over (`unknown`: an answer was lost):
                # looked up, never resent. Those still executing are left alone.
                await reconciler.run(in_flight=False)

            jobs.append(
                Job("reconcile", every(settings.scheduler.reconcile_interval_seconds), reconcile)
            )
    return jobs


def once(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show, send nothing that spends.")
    ] = False,
) -> None:
    """Tick every strategy once; exit non-zero if any strategy failed."""
    settings = load_or_exit(ctx)
    try:
        failed = asyncio.run(_once(settings, dry_run))
    except (ApiError, ChainError) as exc:  # the provider or node unreachable at start-up
        fail(str(exc), EXIT_FAILURE)
    if failed:
        raise typer.Exit(1)


async def _once(settings: Settings, dry_run: bool) -> int:
    runtime = await Runtime.open(settings, with_signer=True)
    async with runtime:
        engine = build_engine(runtime, settings, dry_run=dry_run)
        lock = None  # a live tick trades: one trader per wallet, as `bot run`
        if not dry_run and runtime.wallet is not None:
            lock = take_wallet_lock(settings, runtime.wallet)
            engine.paused = set(paused_strategies(runtime.journal))  # read under the lock
        try:
            reports = await engine.tick_all()
            if lock is not None:  # the trader keeps the embedded world with its journal
                runtime.save_world()
        finally:
            if lock is not None:
                lock.release()
    for report in reports:
        print_report(report, engine.convention)
    return sum(1 for r in reports if not r.ok)


def run(
    ctx: typer.Context,
    paper: Annotated[bool, typer.Option("--paper", help="Trade in the paper world.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show, send nothing that spends.")
    ] = False,
) -> None:
    """Run the strategies on their schedules until stopped (SIGTERM/SIGINT; SIGHUP reloads)."""
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
    from bot.cli.daemon_start import run_daemon

    asyncio.run(
        run_daemon(
            settings,
            dry_run=dry_run,
            config_file=config_path(state(ctx)),
            force_paper=paper,
        )
    )
