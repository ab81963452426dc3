"""The daemon behind `bot run`: start-up, jobs, heartbeat, systemd, SIGHUP, shutdown.

Start-up: open the runtime, take the wallet lock, reconcile what a crash left in flight
(a provider or node down meanwhile is waited for with back-off, the daemon `degraded`:
`bot.ops.bad_weather`), start the strategies, schedule every job (the strategies' ticks,
the order poll, the command queue, the recorder's side jobs, the watchdog's pulse), then
tell systemd `READY=1`. Real time goes to the real-time scheduler; a paper world on an
accelerated or stepped clock is driven by our own `Driver` over the same triggers.

While running: a heartbeat every `[daemon].heartbeat_seconds` (log line, status file,
`STATUS=`, the alert sources' checks), `WATCHDOG=1` while healthy (`bot.ops.watchdog`;
`degraded` while orders disappear from the provider), an embedded paper world saved every
`[paper].snapshot_seconds` and at stop (restored at the next start: `bot.app.runtime`),
SIGHUP re-reads the config and applies what can change live (`bot.ops.reload`). A
foreign signer on the wallet (`bot.chain.ForeignSigner`, from the signer or a reconcile)
pauses trading until restart: nothing is sent or signed, an alert goes out, and the
status says `foreign signer detected`. A lost wallet lock pauses trading until it is held
again and the journal reconciled (`bot.app.lock_watch`). Both are causes in `pauses`.
SIGTERM/SIGINT: `STOPPING=1`, finish what is in flight, stop the strategies, flush the
alerts, write the status file as "stopped", let the wallet lock go, exit 0.

The daemon prints nothing: what the person watching should read (ticks, order events,
a wait for a service) goes to its `Reporter`. Start-up and shut-down around it are
`bot.app.daemon_start`'s.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Protocol

from apscheduler.triggers.interval import IntervalTrigger

from bot.app.build import STRATEGY_JOB_PREFIX, risk_checker, strategy_job, trading_jobs
from bot.app.lock_watch import (
    FOREIGN_SIGNER,
    LOCK_LOST,
    FencedBroker,
    LockWatch,
    PausedBroker,
    Pauses,
    WalletHold,
    holder,
)
from bot.app.record_jobs import daemon_record_jobs
from bot.app.reporter import Reporter, order_event_lines, report_lines, running_line
from bot.app.runtime import Runtime, chain_settings
from bot.app.summaries import daemon_summary_jobs
from bot.app.telegram_desk import ControlTask
from bot.chain import SignerPolicy
from bot.chain.errors import ChainError, ForeignSigner
from bot.clock import AcceleratedClock, RealClock, SteppedClock, clock_kind
from bot.config import ConfigError, Settings, load_settings
from bot.engine.engine import Engine, TickReport
from bot.engine.events import OrderDisappeared, OrderEvent
from bot.engine.pauses import paused_strategies
from bot.engine.plugins import PluginError, build_strategies
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, start_realtime
from bot.engine.strategy import Strategy
from bot.logging import get_logger
from bot.ops.alert_sources import AlertSources
from bot.ops.alerts import Alerter, build_alerter
from bot.ops.bad_weather import first_line
from bot.ops.fill_news import FillNewsReader
from bot.ops.heartbeat import (
    DaemonFacts,
    apt_balance,
    build_status,
    log_heartbeat,
    missing_order_count,
    open_order_count,
    record_daemon,
    status_line,
    unsettled_intents,
)
from bot.ops.notify import Notifier, watchdog_interval
from bot.ops.reload import ReloadGate, ReloadPlan, plan_reload
from bot.ops.status_file import DaemonStatus, status_path, write_status
from bot.ops.watchdog import HealthMonitor, pulse_seconds, send_watchdog

__all__ = ["Daemon", "PausedBroker"]

PULSE_JOB = "watchdog-pulse"
SPENDING_JOBS = frozenset({"commands"})
"""Jobs that may spend besides the strategies' ticks: the wallet lock is asked first."""
WALLET_JOBS = frozenset({"tracker", "reconcile"})
"""Jobs that write the wallet's journal rows: they wait while the wallet lock is lost."""


class _JobSet(Protocol):
    """The Driver or the real-time scheduler: a job set that changes while it runs."""

    def add(self, job: Job) -> None: ...
    def remove(self, name: str) -> None: ...
    def next_fire_of(self, name: str) -> datetime | None: ...


class Daemon:
    """One running daemon: its engine, jobs, health, status and reloads."""

    def __init__(
        self,
        settings: Settings,
        runtime: Runtime,
        engine: Engine,
        *,
        dry_run: bool,
        config_file: Path | None,
        force_paper: bool,
        notifier: Notifier,
        reporter: Reporter,
    ) -> None:
        self.settings = settings
        """What runs now: the start-up settings with the live parts of every reload."""
        self.runtime = runtime
        self.engine = engine
        self.dry_run = dry_run
        self.config_file = config_file
        self.force_paper = force_paper
        self.notifier = notifier
        self.reporter = reporter
        """Where the lines for the person watching go (the console's, a test's)."""
        self.monitor = HealthMonitor(settings.daemon.watchdog_stall_seconds)
        self.gate = ReloadGate()
        # The status file's own times are the wall clock's (is the process alive?); tick
        # and poll times are the market clock's, simulated in an accelerated paper world.
        self.wall = RealClock()
        self.facts = DaemonFacts(
            started_at=self.wall.now(),
            mode=settings.mode,
            wallet=runtime.wallet,
            dry_run=dry_run,
        )
        # A dry run takes no wallet lock and may run beside the live daemon: the status
        # file is the live daemon's alone.
        self.status_file = (
            None if dry_run else status_path(settings.journal.url, settings.daemon.status_file)
        )
        self.alerter: Alerter = build_alerter(settings.alerts, runtime.clock)
        self.news = FillNewsReader(runtime.journal, engine.convention)
        """An order event's numbers, read once for the console and the alerts."""
        self.sources = self._alert_sources(self.alerter, settings)
        self.jobs: _JobSet | None = None
        self.state = "starting"
        self._apt: Decimal | None = None
        self._reload_lock = asyncio.Lock()
        self._log = get_logger("daemon")
        self.pauses = Pauses()
        """Why trading is paused (a foreign signer, a lost wallet lock): `paused` says it."""
        self.lock_watch = LockWatch(
            self.wall,
            self.gate,
            self.on_lock,
            holder=lambda: holder(runtime.journal, runtime.wallet),
        )
        """The wallet lock's watch (`bot.app.daemon_start` attaches the lock it took)."""
        self._broker = FencedBroker(engine.broker, self.lock_watch)
        engine.reconfigure(broker=self._broker)
        self.degraded: str | None = None
        """Why start-up waits (a provider or node unreachable), or None."""
        self._stuck_seen: dict[str, str] = {}
        if runtime.signer is not None:
            runtime.signer.pause_listeners.append(self.on_foreign_signer)
        self.control = ControlTask(self)
        self.hangups: asyncio.Queue[None] | None = None
        """Where `serve` takes reloads from (SIGHUP, a queued `reload` command)."""
        """The Telegram control's poller (`[alerts].control_enabled`), its own task."""

    # --- jobs --------------------------------------------------------------------------

    def _guarded(
        self, name: str, run: Callable[[], Awaitable[object]]
    ) -> Callable[[], Awaitable[None]]:
        """`run` as job `name`: under the reload gate, watched for stalls, never raising."""

        async def guarded() -> None:
            async with self.gate.job():
                if not await self._may_run(name):
                    return
                with self.monitor.job(name):
                    try:
                        await run()
                    except Exception as exc:
                        self.facts.errors += 1
                        reason = f"{type(exc).__name__}: {exc}"
                        self._log.error("job.failed", job=name, error=reason)

        return guarded

    async def _may_run(self, name: str) -> bool:
        """False while the wallet lock is lost (asked before a tick or the command queue).

        The poll and reconciler send nothing but write rows of whoever holds the wallet now.
        """
        if name.startswith(STRATEGY_JOB_PREFIX) or name in SPENDING_JOBS:
            return await self.lock_watch.confirm()
        return name not in WALLET_JOBS or self.lock_watch.held

    def _wrapped(self, job: Job) -> Job:
        return replace(job, run=self._guarded(job.name, job.run))

    def _alert_sources(self, alerter: Alerter, settings: Settings) -> AlertSources:
        # A dry run has no tracker: no poll is expected, so none is missed.
        return AlertSources(
            alerter,
            settings.alerts,
            orders=self.runtime.journal,
            expect_polls=not self.dry_run,
            convention=self.engine.convention,
            news=self.news,
        )

    def on_report(self, report: TickReport) -> None:
        """A strategy ticked: show it, count a failure, hand it to the alert sources.

        A paused strategy's skipped tick says nothing (`bot status` shows the pause).
        """
        if report.paused:
            return
        for line in report_lines(report, self.engine.convention):
            self.reporter.say(line)
        if not report.ok:
            self.facts.errors += 1
        self.sources.on_tick_report(report)
        stuck = self._stuck()
        self.sources.on_stuck(stuck)
        if stuck != self._stuck_seen:  # `bot status` says it now, not at the next heartbeat
            self._stuck_seen = stuck
            self.publish()

    def _stuck(self) -> dict[str, str]:
        """The running, unpaused strategies that get nowhere, and why."""
        engine = self.engine
        return engine.progress.stuck(n for n in engine.strategies if n not in engine.paused)

    def _pulse_job(self, start: datetime) -> Job:
        """Marks the scheduler's progress; its interval is in the market clock's seconds."""
        seconds = pulse_seconds(self.settings.daemon.watchdog_stall_seconds)
        clock = self.runtime.clock
        if isinstance(clock, AcceleratedClock):
            seconds *= clock.factor

        async def pulse() -> None:
            await asyncio.sleep(0)  # a stepped driver must still let the loop turn
            self.monitor.progress()

        return Job(PULSE_JOB, IntervalTrigger(seconds=seconds, start_date=start), pulse)

    def build_jobs(self) -> list[Job]:
        """Every job of the daemon, first fires from now."""
        settings, runtime = self.settings, self.runtime
        jobs = trading_jobs(
            self.engine,
            settings,
            runtime,
            self.dry_run,
            self.on_report,
            self.request_reload,
            may_go_on=self.lock_watch.confirm,
        )
        jobs += daemon_record_jobs(settings, runtime, runtime.clock.now())
        if not self.dry_run:  # a dry run trades nothing to sum up
            now, say = runtime.clock.now(), self.reporter.say
            jobs += daemon_summary_jobs(settings, runtime.journal, self.engine, say, now)
        return [*map(self._wrapped, jobs), self._pulse_job(runtime.clock.now())]

    # --- a foreign signer ----------------------------------------------------------------

    def on_foreign_signer(self, cause: ForeignSigner) -> None:
        """Another signer uses the wallet: send nothing more, alert, say so in the status.

        The engine's broker is replaced by one that sends nothing (ticks and reactions go
        on, their actions are reported `paused`); the signer signs nothing. Until restart.
        """
        if FOREIGN_SIGNER in self.pauses:
            return
        reason = (
            f"foreign signer detected: sequence number {cause.sequence_number} of the wallet "
            f"was used by {cause.foreign_hash}, not by this bot; trading paused"
        )
        self.pauses.hold(FOREIGN_SIGNER, reason)
        self._pause_broker()
        if self.runtime.signer is not None:
            self.runtime.signer.pause(cause)
        self._log.error("daemon.paused", reason=reason)
        self.sources.on_foreign_signer(cause)
        self.publish()

    @property
    def paused(self) -> str | None:
        """Why trading is paused (every cause's reason), or None."""
        return self.pauses.reason

    def _pause_broker(self) -> None:
        """The engine's broker: one that sends nothing while any cause pauses, else the real."""
        reason = self.pauses.reason
        self.engine.reconfigure(broker=self._broker if reason is None else PausedBroker(reason))

    def watch_lock(self, lock: WalletHold, settle: Callable[[], Awaitable[object]]) -> None:
        """Watch the lock taken at start; held again after a loss: `settle`, pauses, trade."""

        async def resettle() -> None:
            await settle()
            self.engine.reconfigure(paused=paused_strategies(self.runtime.journal))

        self.lock_watch.attach(lock, resettle, self.settings.daemon.heartbeat_seconds)

    def on_lock(self, reason: str | None) -> None:
        """The wallet lock is lost (`reason`, alerted once) or held again (None): pause, resume.

        Resumed only once `watch_lock`'s `settle` and the pauses' read succeeded under it.
        """
        if reason is None:
            if not self.pauses.lift(LOCK_LOST):
                return
            self.alerter.emit("wallet_lock", "Wallet lock held again: trading resumed.")
        elif self.pauses.hold(LOCK_LOST, reason):
            self.alerter.emit("wallet_lock", reason[:1].upper() + reason[1:] + ".")
        self._pause_broker()
        self.publish()

    def on_down(self, reason: str, delay: float) -> None:
        """Start-up waits for a service: say so once to the reporter, always in the status."""
        if self.degraded is None:
            self.reporter.warn(first_line(reason))
        self.degraded = f"degraded: {reason}; retrying in {delay:.0f} s"
        self.publish()

    # --- heartbeat ---------------------------------------------------------------------

    def snapshot(self, state: str | None = None) -> DaemonStatus:
        """The daemon as `bot status` and the heartbeat show it."""
        engine, journal, wallet = self.engine, self.runtime.journal, self.runtime.wallet
        stuck = self._stuck()
        unsettled = unsettled_intents(journal, wallet, self.runtime.clock.now())
        degraded = self.monitor.degraded(missing_order_count(journal, wallet), stuck, unsettled)
        jobs = self.jobs
        next_ticks = {
            name: None if jobs is None else jobs.next_fire_of(STRATEGY_JOB_PREFIX + name)
            for name in engine.strategies
        }
        return build_status(
            self.facts,
            state=state or self.state,
            now=self.wall.now(),
            stats=engine.stats,
            open_orders=open_order_count(journal, wallet),
            last_poll_at=engine.last_poll_at,
            last_poll_ok_at=engine.last_poll_ok_at,
            apt=self._apt,
            problem=self.monitor.problem() or self.paused or self.degraded or degraded,
            heartbeat_seconds=self.settings.daemon.heartbeat_seconds,
            next_ticks=next_ticks,
            stuck=stuck,
            paused=engine.paused,
            market_now=self.runtime.clock.now(),
            clock=clock_kind(self.runtime.clock),
        )

    def publish(self, state: str | None = None, *, notify: bool = True) -> DaemonStatus:
        """Write the status file and (unless told not to) send `STATUS=`; no log line."""
        status = self.snapshot(state)
        if self.status_file is not None:
            try:
                write_status(self.status_file, status)
            except OSError as exc:
                self._log.error("status_file.failed", path=str(self.status_file), error=str(exc))
            if self.lock_watch.held:  # the wallet's `daemons` row is its lock holder's
                record_daemon(self.runtime.journal, status)
        if notify:
            self.notifier.status(status_line(status))
        return status

    async def beat(self) -> None:
        """One heartbeat: the wallet lock, the APT balance; log, publish, run the alert checks."""
        await self.lock_watch.beat()
        self._apt = await apt_balance(self.runtime.node, self.runtime.tokens, self.runtime.wallet)
        status = self.publish()
        log_heartbeat(status)
        self.sources.on_heartbeat(self.runtime.clock.now(), self.engine.last_poll_ok_at, self._apt)

    async def heartbeat_loop(self) -> None:
        """A heartbeat now and every `[daemon].heartbeat_seconds` real seconds after."""
        while True:
            try:
                await self.beat()
            except Exception as exc:  # a journal or node hiccup must not end the heartbeat
                self._log.error("heartbeat.failed", error=f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(self.settings.daemon.heartbeat_seconds)

    # --- events ------------------------------------------------------------------------

    def on_order_event(self, event: OrderEvent) -> None:
        """Show an order event and hand it to the current alert sources.

        A disappeared order (reported once by the tracker) also makes the daemon
        `degraded` for a while, and its line says what the journal now holds.
        """
        if isinstance(event, OrderDisappeared):
            self.monitor.order_disappeared(event.kind, event.order_id, event.status)
        for line in order_event_lines(event, self.news):
            self.reporter.say(line)
        self.sources.on_order_event(event)
        if isinstance(event, OrderDisappeared):
            self.publish()  # `bot status` says degraded now, not at the next heartbeat

    # --- reload ------------------------------------------------------------------------

    async def reload(self) -> None:
        """SIGHUP: re-read the config file and apply what can change live."""
        async with self._reload_lock:
            self.notifier.reloading()
            try:
                await self._reload()
            finally:
                self.notifier.ready(status_line(self.publish(notify=False)))

    async def _reload(self) -> None:
        if self.config_file is None:
            self._log.warning("reload.skipped", reason="no config file to read again")
            return
        try:
            new = load_settings(self.config_file)
        except ConfigError as exc:
            self._refuse("; ".join(exc.problems))
            return
        if self.force_paper:
            new = new.model_copy(update={"mode": "paper"})
        try:
            plan = plan_reload(self.settings, new)
        except ValueError as exc:  # ReloadRefused: e.g. a file emptied or cut short
            self._refuse(str(exc))
            return
        if plan.restart_needed:
            self._log.warning(
                "reload.restart_needed",
                keys=", ".join(plan.restart_needed),
                message="restart needed for " + ", ".join(plan.restart_needed),
            )
        try:
            prepared = self._prepare(plan)
        except (PluginError, ChainError, ValueError) as exc:
            self._refuse(str(exc).replace("\n", "; "))
            return
        await self._apply(plan, *prepared)
        self._log.info("reload.applied", summary=plan.summary())

    def _refuse(self, reason: str) -> None:
        self._log.error("reload.refused", reason=reason, running="the previous config")

    def _prepare(
        self, plan: ReloadPlan
    ) -> tuple[list[Strategy], RiskChecker, SignerPolicy | None, Alerter | None]:
        """Everything the plan needs that can fail, built before anything changes."""
        runtime, settings = self.runtime, plan.settings
        entries = [plan.entries[n] for n in (*plan.added, *plan.rebuilt)]
        strategies = build_strategies(entries, settings.scheduler.strategy_dirs)
        risk = risk_checker(settings, runtime.journal, runtime.tokens)
        policy = None
        if plan.risk_changed and runtime.signer is not None:
            policy = SignerPolicy.from_settings(
                chain_settings(settings), settings.risk, runtime.tokens
            )
        alerter = None
        if plan.alerts_changed:
            alerter = build_alerter(settings.alerts, runtime.clock)
        return strategies, risk, policy, alerter

    async def _apply(
        self,
        plan: ReloadPlan,
        strategies: list[Strategy],
        risk: RiskChecker,
        policy: SignerPolicy | None,
        alerter: Alerter | None,
    ) -> None:
        if self.jobs is None:  # a reload before the jobs exist has nothing to change yet
            raise ValueError("the daemon has not scheduled its jobs yet")
        engine, start = self.engine, self.runtime.clock.now()
        async with self.gate.reload():
            for name in (*plan.removed, *plan.rebuilt):
                self.jobs.remove(STRATEGY_JOB_PREFIX + name)
                await engine.remove_strategy(name)
            for strategy in strategies:
                await engine.add_strategy(strategy)
                schedule = plan.entries[strategy.instance].schedule
                job = strategy_job(
                    engine,
                    strategy.instance,
                    schedule,
                    start,
                    self.on_report,
                    tick_at_start=plan.settings.scheduler.tick_at_start,
                )
                self.jobs.add(self._wrapped(job))
            engine.reconfigure(
                risk=risk,
                timeout_seconds=plan.settings.scheduler.strategy_timeout_seconds,
                stuck_after=plan.settings.daemon.stuck_ticks,
            )
            if policy is not None and self.runtime.signer is not None:
                self.runtime.signer.set_policy(policy)
            self.monitor.stall_seconds = plan.settings.daemon.watchdog_stall_seconds
            self.settings = plan.settings
            self.jobs.add(self._pulse_job(start))
        if alerter is not None:
            previous, self.alerter = self.alerter, alerter
            await alerter.start()
            self.sources = self._alert_sources(alerter, plan.settings)
            await previous.aclose()
            await self.control.restart()
        self.facts.reloaded_at = self.wall.now()

    # --- the run -----------------------------------------------------------------------

    async def start(self) -> list[Job]:
        """Start the alerts and the strategies, listen to the engine; the jobs to schedule.

        The caller schedules them and keeps the job set in `jobs` (a reload changes it).
        """
        await self.alerter.start()
        if self.engine.tracker is not None:
            self.engine.tracker.subscribe(self.on_order_event)
        # Reactions to order events and failed start/stop hooks report here too.
        self.engine.report_listeners.append(self.on_report)
        await self.engine.start()
        return self.build_jobs()

    def request_reload(self) -> str:
        """Ask for a reload as SIGHUP does (a queued `reload` command); the line to record.

        Only asks: the reload waits for running jobs, and the command job is one of them.
        """
        if self.hangups is None:
            return "not reloaded: the daemon is not serving"
        self.hangups.put_nowait(None)
        return "reload requested (as SIGHUP); its outcome is in the log"

    async def serve(self, stop: asyncio.Event, hangups: asyncio.Queue[None]) -> None:
        """Run until `stop` is set; each item put on `hangups` is a reload."""
        runtime = self.runtime
        self.hangups = hangups
        jobs = await self.start()
        driver_task = None
        scheduler = None
        if isinstance(runtime.clock, SteppedClock | AcceleratedClock):
            driver = Driver(runtime.clock, jobs)
            self.jobs = driver
            far = runtime.clock.now() + timedelta(days=36_500)
            driver_task = asyncio.create_task(driver.run_until(far, stop))
        else:
            scheduler = start_realtime(
                jobs, misfire_grace_seconds=self.settings.scheduler.misfire_grace_seconds
            )
            self.jobs = scheduler
        strategies, mode = len(self.engine.strategies), self.settings.mode
        self.reporter.say(running_line(strategies, runtime.wallet, mode, dry_run=self.dry_run))
        self.state = "running"
        self.notifier.ready(status_line(self.publish(notify=False)))
        self.sources.on_daemon("started")
        tasks = [asyncio.create_task(self.heartbeat_loop())]
        if not self.dry_run and runtime.world is not None:
            seconds = self.settings.paper.snapshot_seconds
            tasks.append(asyncio.create_task(runtime.keep_world_saved(seconds)))
        interval = watchdog_interval(os.environ, os.getpid())
        if interval is not None:
            tasks.append(asyncio.create_task(send_watchdog(self.notifier, self.monitor, interval)))
        tasks.append(asyncio.create_task(self._reloads(hangups)))
        self.control.start()  # Telegram down or slow: its own task, never in a job's way
        try:
            await stop.wait()
        finally:
            self.state = "stopping"
            self.notifier.stopping()
            self.publish()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if driver_task is not None:
                driver_task.cancel()
                await asyncio.gather(driver_task, return_exceptions=True)
            if scheduler is not None:
                scheduler.shutdown(wait=True)
            await self.control.stop()
            await self.engine.stop()
            self.sources.on_daemon("stopped")
            await self.alerter.aclose()

    async def _reloads(self, hangups: asyncio.Queue[None]) -> None:
        while True:
            await hangups.get()
            try:
                await self.reload()
            except Exception as exc:  # never let a reload end the daemon
                self._refuse(f"{type(exc).__name__}: {exc}")
