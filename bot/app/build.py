"""A config made into what trades: the strategies, the risk checker, the engine, the jobs.

`build_engine` is the engine of `bot run` and `bot once` (live, or a dry run that sends
nothing); `trading_jobs` are the daemon's jobs around it (each strategy's ticks on its
schedule, the order poll, the command queue, the reconciler of lost answers);
`tick_once` is `bot once`. A config that cannot trade as asked raises `SetupError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from apscheduler.triggers.base import BaseTrigger

from bot.app.errors import SetupError
from bot.app.opening import take_wallet_lock
from bot.app.runtime import LOST_REASON, Runtime
from bot.aptos.tokens import TokenBook
from bot.config import Schedule, Settings
from bot.engine.brokers import Broker, DryRunBroker, LiveBroker
from bot.engine.commands import Reload, process_commands
from bot.engine.engine import Engine, TickReport
from bot.engine.live_ports import live_engine
from bot.engine.pauses import paused_strategies
from bot.engine.plugins import PluginError, build_strategies
from bot.engine.reconcile import Reconciler, Resolution
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Job, make_trigger
from bot.engine.state_store import JournalStateStore, OverlayStateStore, StateStore
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from bot.price_view import PriceConvention

__all__ = [
    "STRATEGY_JOB_PREFIX",
    "build_engine",
    "risk_checker",
    "strategy_job",
    "tick_once",
    "trading_jobs",
]

STRATEGY_JOB_PREFIX = "strategy:"
"""A strategy's tick job is called this followed by the strategy's name."""

OnReport = Callable[[TickReport], None]
"""Where the report of a scheduled tick goes."""


def _ignore(report: TickReport) -> None:
    """The default `OnReport`: the engine has logged and counted the tick already."""


def risk_checker(settings: Settings, journal: Journal, tokens: TokenBook) -> RiskChecker:
    """`[risk]` and the strategies' daily budgets, as the engine checks them."""
    budgets = {e.name: e.budget for e in settings.strategies if e.budget}
    return RiskChecker(settings.risk, journal, tokens, budgets=budgets)


def build_engine(runtime: Runtime, settings: Settings, *, dry_run: bool) -> Engine:
    """The engine of `settings` over an open runtime.

    Live: the executor's broker and an order tracker (which closes an order the embedded
    paper world does not know: that world is the market). A dry run: a broker that only
    shows, no tracker, and the strategies' saved state kept in memory over the journal's.

    Raises:
        SetupError: no wallet, no key for a live engine, or a strategy that cannot be built.
    """
    if runtime.wallet is None:
        raise SetupError(
            "no wallet: set [wallet].key_file (or BOT_WALLET__PRIVATE_KEY, or "
            "[wallet].address for a dry run)"
        )
    convention = PriceConvention(settings.display.price_quote, runtime.tokens)
    broker: Broker
    if dry_run:
        broker = DryRunBroker(
            runtime.client, runtime.tokens, runtime.wallet, runtime.signer, convention
        )
    else:
        if runtime.executor is None or runtime.signer is None:
            raise SetupError(
                "trading needs the wallet's key: set [wallet].key_file or BOT_WALLET__PRIVATE_KEY"
            )
        broker = LiveBroker(runtime.executor)
    tracker = None
    if not dry_run:
        tracker = OrderTracker(runtime.client, runtime.journal, runtime.clock, runtime.wallet)
        if runtime.world is not None:
            tracker.close_unknown = LOST_REASON
    # A dry run reads the journal's strategy state and keeps what it saves in memory:
    # the real run that follows starts from the journal as the dry run found it.
    state_store: StateStore = JournalStateStore(runtime.journal)
    if dry_run:
        state_store = OverlayStateStore(state_store)
    try:
        strategies = build_strategies(settings.strategies, settings.scheduler.strategy_dirs)
    except PluginError as exc:
        raise SetupError(str(exc)) from exc
    return live_engine(
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


def strategy_job(
    engine: Engine,
    name: str,
    schedule: Schedule,
    start: datetime,
    on_report: OnReport = _ignore,
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
    on_report: OnReport = _ignore,
    reload: Reload | None = None,
    may_go_on: Callable[[], Awaitable[bool]] | None = None,
) -> list[Job]:
    """The daemon's jobs, each first firing now.

    The strategies' ticks, and unless a dry run the order poll, the command queue and the
    reconciler of lost answers (the last two only with an executor). `reload`: what a
    queued `reload` command calls (without it the command is refused); `may_go_on`: asked
    between two queued commands (the daemon's wallet lock: a cancel is signed only while
    it is held).
    """
    start = runtime.clock.now()
    entries = {e.name: e for e in settings.strategies}
    at_start = settings.scheduler.tick_at_start
    jobs = [
        strategy_job(engine, name, entries[name].schedule, start, on_report, tick_at_start=at_start)
        for name in engine.strategies
    ]
    if dry_run:
        return jobs

    def every(seconds: int) -> BaseTrigger:
        return make_trigger(Schedule(interval_seconds=seconds), start)

    scheduler = settings.scheduler
    jobs.append(Job("tracker", every(scheduler.tracker_interval_seconds), engine.poll_orders))
    executor = runtime.executor
    if executor is None:
        return jobs

    reconciler = Reconciler(
        journal=runtime.journal,
        client=runtime.client,
        clock=runtime.clock,
        wallet=executor.wallet,
        tokens=runtime.tokens,
        node=runtime.node,
        on_foreign_signer=runtime.signer.pause if runtime.signer is not None else None,
    )

    settling = asyncio.Lock()  # the periodic job and a `reconcile` command never overlap

    async def reconcile() -> list[Resolution]:
        # Only intents whose execution is over (`unknown`: an answer was lost): looked
        # up, never resent. Those still executing are left alone.
        async with settling:
            return await reconciler.run(in_flight=False)

    async def commands() -> None:
        await process_commands(
            runtime.journal,
            executor,
            runtime.clock,
            engine,
            reconcile=reconcile,
            reload=reload,
            may_go_on=may_go_on,
        )

    jobs.append(Job("commands", every(scheduler.commands_interval_seconds), commands))
    jobs.append(Job("reconcile", every(scheduler.reconcile_interval_seconds), reconcile))
    return jobs


async def tick_once(settings: Settings, *, dry_run: bool) -> tuple[list[TickReport], Engine]:
    """`bot once`: tick every strategy once; the reports and the engine that made them.

    A live tick trades: it holds the wallet's lock (one trader per wallet, as `bot run`),
    reads the paused strategies under it, and saves the embedded paper world after.

    Raises:
        SetupError: the runtime or the engine cannot be made, or another process trades
            the wallet.
    """
    runtime = await Runtime.open(settings, with_signer=True)
    async with runtime:
        engine = build_engine(runtime, settings, dry_run=dry_run)
        lock = None
        if not dry_run and runtime.wallet is not None:
            lock = take_wallet_lock(settings, runtime.wallet)
            runtime.journal.claim_unnamed()  # state and commands no wallet was named for
            engine.reconfigure(paused=paused_strategies(runtime.journal))  # under the lock
        try:
            reports = await engine.tick_all()
            if lock is not None:  # the trader keeps the embedded world with its journal
                runtime.save_world()
        finally:
            if lock is not None:
                lock.release()
    return reports, engine
