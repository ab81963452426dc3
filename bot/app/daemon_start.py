"""`bot run`'s start-up and shut-down around the `Daemon` (`bot.app.daemon`).

Signals first (a SIGTERM or SIGHUP during start-up is kept, not fatal), then the runtime
(waiting with back-off while the provider or node is down), the engine, the wallet lock,
the reconciliation of what a crash left in flight, and the daemon's run; whatever happens,
the embedded paper world is saved, the status file says "stopped" and the lock is let go.
What the person watching reads goes to the `Reporter`; a problem to fix before the daemon
can run (no wallet, another process trading it, an unusable config part) is raised as
`SetupError`.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from bot.app.build import build_engine
from bot.app.daemon import Daemon
from bot.app.errors import SetupError
from bot.app.opening import take_wallet_lock
from bot.app.reporter import Reporter
from bot.app.runtime import Runtime
from bot.clock import AcceleratedClock, Clock, SteppedClock
from bot.config import Settings
from bot.engine.pauses import paused_strategies
from bot.engine.reconcile import Reconciler
from bot.ops.bad_weather import early_reporter, until_reachable
from bot.ops.notify import Notifier
from bot.ops.status_file import read_status, status_path

if TYPE_CHECKING:
    from bot.console import ConsoleServer

__all__ = ["run_daemon"]


async def _console(daemon: Daemon, *, dry_run: bool) -> ConsoleServer | None:
    """The operator's console of `[console]` (docs/console.md), or None when it is off.

    A dry run serves none: its controls would land in the live daemon's queue.

    Raises:
        SetupError: no usable token, or the address cannot be bound.
    """
    if not daemon.settings.console.enabled or dry_run:
        return None
    from bot.console import ConsoleSetupError, serve_console

    path = daemon.status_file
    try:
        server = await serve_console(
            daemon.settings,
            settings_now=lambda: daemon.settings,
            status=lambda: None if path is None else read_status(path),
            clock=daemon.wall,
            quote_of=daemon.engine.convention.quote_of,
            label=daemon.engine.convention.label,
            wallet=daemon.engine.wallet,
        )
    except ConsoleSetupError as exc:
        raise SetupError(str(exc)) from None
    daemon.reporter.say(f"console on {server.url} (docs/console.md)")
    return server


async def _drain(
    reconciler: Reconciler, clock: Clock, settings: Settings, notifier: Notifier
) -> None:
    """Let transactions an earlier process left in flight land (or expire) first.

    A stepped paper clock moves only when the driver moves it: nothing can land while
    waiting, so it is not waited for.
    """
    if isinstance(clock, SteppedClock) or not reconciler.unfinished_transactions():
        return
    notifier.status("starting: waiting for transactions left in flight")
    factor = clock.factor if isinstance(clock, AcceleratedClock) else 1.0
    chain = settings.chain
    await reconciler.drain_transactions(
        timeout_seconds=(chain.expiration_seconds + 30) / factor,
        poll_seconds=chain.poll_interval_seconds / factor,
    )


async def run_daemon(
    settings: Settings,
    *,
    dry_run: bool,
    config_file: Path | None,
    force_paper: bool,
    reporter: Reporter,
) -> None:
    """`bot run`: the daemon until SIGTERM/SIGINT.

    Raises:
        SetupError: the daemon cannot run as configured (nothing was traded).
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    hangups: asyncio.Queue[None] = asyncio.Queue()
    # Installed first: a signal during start-up is kept, not fatal (SIGHUP's default
    # action would end the process).
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, hangups.put_nowait, None)
    notifier = Notifier.from_environ()
    notifier.status("starting: opening the journal and the clients")
    runtime = await until_reachable(
        "opening the provider and the node",
        lambda: Runtime.open(settings),
        stop=stop,
        on_down=early_reporter(
            None if dry_run else status_path(settings.journal.url, settings.daemon.status_file),
            mode=settings.mode,
            notifier=notifier,
            echo=reporter.warn,
        ),
    )
    if runtime is None:  # stopped while waiting
        reporter.say("bot stopped")
        return
    lock = None
    async with runtime:
        engine = build_engine(runtime, settings, dry_run=dry_run)  # SetupError: no wallet
        wallet = engine.wallet
        if not dry_run:
            lock = take_wallet_lock(settings, wallet)
            runtime.journal.claim_unnamed()  # state and commands no wallet was named for
            # A pause written while this process built its engine (no lock held yet) counts.
            engine.reconfigure(paused=paused_strategies(runtime.journal))
        try:
            daemon = Daemon(
                settings,
                runtime,
                engine,
                dry_run=dry_run,
                config_file=config_file,
                force_paper=force_paper,
                notifier=notifier,
                reporter=reporter,
            )
        except ValueError as exc:  # an unusable [alerts] section
            if lock is not None:
                lock.release()
            raise SetupError(str(exc)) from exc
        console = None
        try:
            daemon.publish("starting")
            console = await _console(daemon, dry_run=dry_run)
            if not dry_run:
                notifier.status("starting: reconciling the journal")
                reconciler = Reconciler(
                    journal=runtime.journal,
                    client=runtime.client,
                    clock=runtime.clock,
                    wallet=wallet,
                    tokens=runtime.tokens,
                    node=runtime.node,
                    on_foreign_signer=daemon.on_foreign_signer,
                )

                async def settle(reconciler: Reconciler = reconciler) -> bool:
                    await _drain(reconciler, runtime.clock, settings, notifier)
                    await reconciler.run()
                    return True

                if lock is not None:  # a lost lock is taken again, then this, then trading
                    daemon.watch_lock(lock, settle)
                if not await until_reachable(
                    "reconciling the journal", settle, stop=stop, on_down=daemon.on_down
                ):
                    return  # stopped while waiting (the finally below says so)
                daemon.degraded = None
            await daemon.serve(stop, hangups)
        finally:
            if console is not None:
                await console.stop()
            if not dry_run:  # a dry run may run beside the daemon: its world is its own
                runtime.save_world()
            daemon.publish("stopped")
            if lock is not None:
                lock.release()
            notifier.close()
    reporter.say("bot stopped")
