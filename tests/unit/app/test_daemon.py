"""The daemon's job wiring and its SIGHUP reload, on a stepped clock.

A real embedded paper world (stepped clock), a real SQLite journal and config file in
`tmp_path`, the real engine, signer and executor; the daemon's jobs run on the same
`Driver` `bot run` uses for a stepped paper world. What the daemon says goes to a
reporter that keeps the lines; `sd_notify` goes to a real datagram socket.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
import structlog

from bot.app.build import build_engine
from bot.app.daemon import PULSE_JOB, Daemon, PausedBroker
from bot.app.daemon_start import run_daemon
from bot.app.errors import SetupError
from bot.app.runtime import Runtime
from bot.chain import new_key_file
from bot.chain.errors import ForeignSigner
from bot.clock import parse_utc
from bot.config import load_settings
from bot.engine.scheduling import Driver
from bot.engine.wallet_lock import WalletLock, lock_dir
from bot.ops.notify import Notifier
from bot.ops.status_file import DaemonStatus, read_status, status_path

HOUR = timedelta(hours=1)


@dataclass
class Lines:
    """A reporter that keeps what the daemon says."""

    said: list[str] = field(default_factory=list)
    warned: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        self.said.append(line)

    def warn(self, line: str) -> None:
        self.warned.append(line)


def dca(name: str, amount: str = "25", plugin: str = "recurring_dca") -> str:
    return (
        f'[[strategies]]\nname = "{name}"\nplugin = "{plugin}"\n'
        "schedule = { interval_seconds = 3600 }\n"
        f'params = {{ from_token = "USDC", to_token = "APT", amount_per_order = "{amount}", '
        'interval = "1 day", orders = 7 }\n'
    )


@dataclass
class Folder:
    """The user's folder: key, config, journal, locks."""

    path: Path
    wallet: str

    @property
    def config(self) -> Path:
        return self.path / "bot.toml"

    def write(
        self, *strategies: str, sections: str = "", daemon: str = "", scheduler: str = ""
    ) -> None:
        """Write the config: a funded wallet in a stepped paper world, then `sections`.

        The order poll, the command queue and the reconciler every 10 minutes: fewer steps
        of the driver than the defaults (2 s for the command queue), the same wiring.
        """
        w = self.wallet
        self.config.write_text(
            'mode = "paper"\n'
            f'[journal]\nurl = "sqlite:///{self.path / "bot.db"}"\n'
            f'[wallet]\nkey_file = "{self.path / "wallet.key"}"\n'
            f'[daemon]\nlock_dir = "{self.path / "locks"}"\nheartbeat_seconds = 3600\n{daemon}'
            "[scheduler]\ntracker_interval_seconds = 600\ncommands_interval_seconds = 600\n"
            f"reconcile_interval_seconds = 600\n{scheduler}"
            '[paper]\nclock = "stepped"\norder_style = "escrow"\n'
            "rate_limit_per_second = 100000\nrate_limit_burst = 100000\n"
            f'funding = [{{ wallet = "{w}", token = "USDC", amount = "10000" }}, '
            f'{{ wallet = "{w}", token = "APT", amount = "100" }}]\n'
            + sections
            + "".join(strategies)
        )


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    wallet = new_key_file(tmp_path / "wallet.key")
    return Folder(tmp_path, str(wallet))


@dataclass
class Rig:
    daemon: Daemon
    runtime: Runtime
    lines: Lines
    notified: Callable[[], list[str]]


@asynccontextmanager
async def started(folder: Folder, *, dry_run: bool = False) -> AsyncIterator[Rig]:
    """A daemon over the folder's config, started, its jobs not yet scheduled."""
    settings = load_settings(folder.config)
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    address = str(folder.path / "notify")
    receiver.bind(address)
    receiver.setblocking(False)

    def notified() -> list[str]:
        messages = []
        while True:
            try:
                messages.append(receiver.recv(4096).decode())
            except BlockingIOError:
                return messages

    runtime = await Runtime.open(settings)
    lines = Lines()
    async with runtime:
        engine = build_engine(runtime, settings, dry_run=dry_run)
        daemon = Daemon(
            settings,
            runtime,
            engine,
            dry_run=dry_run,
            config_file=folder.config,
            force_paper=False,
            notifier=Notifier(address),
            reporter=lines,
        )
        try:
            yield Rig(daemon, runtime, lines, notified)
        finally:
            await engine.stop()
            await daemon.alerter.aclose()
            daemon.notifier.close()
            receiver.close()


async def schedule(daemon: Daemon) -> Driver:
    """Start the daemon and put its jobs on a driver (as `serve` does on a stepped clock)."""
    driver = Driver(daemon.runtime.clock, await daemon.start())
    daemon.jobs = driver
    return driver


async def test_live_jobs_are_wired_to_the_engine_and_report_to_the_reporter(
    folder: Folder,
) -> None:
    folder.write(dca("a"), sections="[record]\nenabled = true\nevery_seconds = 600\n")
    async with started(folder) as rig:
        daemon, runtime = rig.daemon, rig.runtime
        driver = await schedule(daemon)
        start = runtime.clock.now()
        names = [j.name for j in driver.jobs]
        assert names == [
            "strategy:a",
            "tracker",
            "commands",
            "reconcile",
            "record-retention",
            "record",
            "summary",
            PULSE_JOB,
        ]
        assert parse_utc(daemon.snapshot().strategies["a"].next_tick or "") == start
        await driver.run_until(start + 2 * HOUR)
        engine = daemon.engine
        assert engine.stats["a"].ticks == 3 and engine.stats["a"].errors == 0
        assert engine.last_poll_ok_at == start + 2 * HOUR  # the tracker polled to the end
        [order] = runtime.journal.orders()
        assert order.strategy == "a" and order.kind == "dca"
        # The first tick placed the DCA: said once, through the reporter, nothing printed.
        ticks = [line for line in rig.lines.said if not line.startswith("a: invested")]
        assert [line for line in ticks if line.startswith("a: ")] == [
            line for line in rig.lines.said[:1]
        ]
        assert "→ confirmed" in rig.lines.said[0], rig.lines.said
        assert rig.lines.warned == []
        assert len(runtime.journal.price_ticks(runtime.tokens.find("APT").address)) == 13
        assert daemon.facts.errors == 0


async def test_a_dry_run_has_only_the_strategies_and_the_pulse(folder: Folder) -> None:
    folder.write(dca("a"))
    async with started(folder, dry_run=True) as rig:
        driver = await schedule(rig.daemon)
        assert [j.name for j in driver.jobs] == ["strategy:a", PULSE_JOB]
        assert rig.daemon.status_file is None  # the live daemon's alone
        await driver.run_until(rig.runtime.clock.now() + HOUR)
        assert rig.runtime.journal.intents() == []
        shown = "[dry run] a: create DCA: 25 USDC per order → APT, 7 orders every 1 day"
        assert rig.lines.said == [shown, shown]  # ticks at start and an hour on; none sent


async def test_a_failing_job_is_counted_and_the_daemon_goes_on(folder: Folder) -> None:
    folder.write(dca("a"))
    async with started(folder) as rig:
        driver = await schedule(rig.daemon)
        start = rig.runtime.clock.now()
        rig.runtime.journal.close()  # every job that touches the journal now fails
        with structlog.testing.capture_logs() as logs:
            await driver.run_until(start + HOUR)
        failed = {e["job"] for e in logs if e["event"] == "job.failed"}
        assert {"tracker", "commands"} <= failed
        assert rig.daemon.facts.errors >= len(failed)
        assert PULSE_JOB not in failed and driver.next_fire() is not None


async def test_a_foreign_signer_pauses_trading_through_the_engine(folder: Folder) -> None:
    folder.write(dca("a"))
    async with started(folder) as rig:
        daemon = rig.daemon
        driver = await schedule(daemon)
        daemon.on_foreign_signer(ForeignSigner(rig.runtime.wallet or "", 0, "0xfeed"))
        assert isinstance(daemon.engine.broker, PausedBroker)
        assert rig.runtime.signer is not None and rig.runtime.signer.foreign_signer is not None
        await driver.run_until(rig.runtime.clock.now())
        assert rig.runtime.journal.intents() == []  # nothing sent
        assert any("→ paused (foreign signer detected" in line for line in rig.lines.said)
        assert (daemon.snapshot().problem or "").startswith("foreign signer detected")


async def wait_for(condition: Callable[[], bool]) -> None:
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")


async def test_sighup_reload_applies_strategies_risk_and_timings_between_ticks(
    folder: Folder,
) -> None:
    folder.write(dca("keep"), dca("drop"), dca("tune"))
    async with started(folder) as rig:
        daemon, runtime = rig.daemon, rig.runtime
        engine, signer = daemon.engine, runtime.signer
        assert signer is not None
        driver = await schedule(daemon)
        start = runtime.clock.now()
        await driver.run_until(start + HOUR + timedelta(minutes=30))
        old_risk, old_policy = engine.risk, signer.policy
        keep, tune = engine.strategies["keep"], engine.strategies["tune"]
        rig.notified()
        folder.write(
            dca("keep"),
            dca("tune", amount="30"),
            dca("fresh"),
            sections="[risk]\nmax_gas_amount = 150000\n",
            scheduler="strategy_timeout_seconds = 7\n",
            daemon="stuck_ticks = 9\nwatchdog_stall_seconds = 111\n",
        )
        hangups: asyncio.Queue[None] = asyncio.Queue()
        consumer = asyncio.create_task(daemon._reloads(hangups))
        try:
            hangups.put_nowait(None)  # what SIGHUP's handler does
            await wait_for(lambda: daemon.facts.reloaded_at is not None)
            now = runtime.clock.now()
            assert sorted(engine.strategies) == ["fresh", "keep", "tune"]
            assert engine.strategies["keep"] is keep and engine.strategies["tune"] is not tune
            assert driver.next_fire_of("strategy:drop") is None
            assert driver.next_fire_of("strategy:fresh") == now  # a new strategy ticks now
            assert driver.next_fire_of("strategy:keep") == start + 2 * HOUR  # left alone
            assert engine.risk is not old_risk and engine.timeout == 7
            assert engine.progress.stuck_after == 9 and daemon.monitor.stall_seconds == 111
            assert signer.policy is not old_policy and signer.policy.max_gas_amount == 150_000
            assert [e.name for e in daemon.settings.strategies] == ["keep", "tune", "fresh"]
            reloading, ready = rig.notified()
            assert reloading.startswith("RELOADING=1\nMONOTONIC_USEC=")
            assert ready.startswith("READY=1\nSTATUS=starting: 3 strategies")
            await driver.run_until(now + HOUR)
            assert engine.stats["fresh"].ticks == 2 and engine.stats["fresh"].errors == 0
            assert {o.strategy for o in runtime.journal.orders()} == {
                "keep",
                "drop",
                "tune",
                "fresh",
            }
        finally:
            consumer.cancel()
            await asyncio.gather(consumer, return_exceptions=True)


async def test_a_refused_reload_changes_nothing_and_the_next_one_applies(folder: Folder) -> None:
    folder.write(dca("a"))
    async with started(folder) as rig:
        daemon, engine = rig.daemon, rig.daemon.engine
        driver = await schedule(daemon)
        await driver.run_until(rig.runtime.clock.now())
        risk, jobs = engine.risk, [j.name for j in driver.jobs]
        notes: list[str] = []

        async def sighup() -> None:
            """One reload through the SIGHUP queue, until the daemon says READY again."""
            hangups.put_nowait(None)
            await wait_for(lambda: any(m.startswith("READY=1") for m in notes + rig.notified()))
            notes.clear()

        hangups: asyncio.Queue[None] = asyncio.Queue()
        consumer = asyncio.create_task(daemon._reloads(hangups))
        try:
            with structlog.testing.capture_logs() as logs:
                folder.write(dca("a"), dca("b", plugin="no_such_plugin"))
                await sighup()
                folder.config.write_text(folder.config.read_text()[:40])  # cut short
                await sighup()
            refusals = [e["reason"] for e in logs if e["event"] == "reload.refused"]
            assert len(refusals) == 2 and "no_such_plugin" in refusals[0], refusals
            assert list(engine.strategies) == ["a"] and engine.risk is risk
            assert [j.name for j in driver.jobs] == jobs and daemon.facts.reloaded_at is None
            folder.write(dca("a"), dca("b"))
            await sighup()  # the consumer lives on: the next SIGHUP applies
            assert list(engine.strategies) == ["a", "b"] and engine.risk is not risk
            assert driver.next_fire_of("strategy:b") == rig.runtime.clock.now()
        finally:
            consumer.cancel()
            await asyncio.gather(consumer, return_exceptions=True)


async def test_run_daemon_reloads_on_sighup_and_stops_on_sigterm(folder: Folder) -> None:
    """The whole of `bot run` in this process: real signals, the status file, the lines."""
    folder.write(dca("a"))
    settings = load_settings(folder.config)
    status_file = status_path(settings.journal.url, settings.daemon.status_file)
    lines = Lines()

    def status() -> DaemonStatus:
        return read_status(status_file) or pytest.fail("no status file")

    daemon = asyncio.create_task(
        run_daemon(
            settings, dry_run=False, config_file=folder.config, force_paper=False, reporter=lines
        )
    )
    try:
        await wait_for(lambda: bool(lines.said))
        assert lines.said[0] == (f"bot running: 1 strategy, wallet {folder.wallet}, mode paper")
        folder.write(dca("a"), dca("b"))
        os.kill(os.getpid(), signal.SIGHUP)
        await wait_for(lambda: status().reloaded_at is not None)
        assert sorted(status().strategies) == ["a", "b"] and status().state == "running"
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(daemon, 60)
    finally:
        daemon.cancel()
        await asyncio.gather(daemon, return_exceptions=True)
    assert lines.said[-1] == "bot stopped" and lines.warned == []
    assert status().state == "stopped"


async def test_run_daemon_refuses_a_wallet_another_process_trades(folder: Folder) -> None:
    folder.write(dca("a"))
    settings = load_settings(folder.config)
    other = WalletLock(lock_dir(settings.daemon.lock_dir), folder.wallet)
    assert other.try_acquire()
    out = Lines()
    try:
        with pytest.raises(SetupError, match="another process trades"):
            await run_daemon(
                settings, dry_run=False, config_file=folder.config, force_paper=False, reporter=out
            )
    finally:
        other.release()
    assert out.said == []  # nothing ran, so nothing stopped
