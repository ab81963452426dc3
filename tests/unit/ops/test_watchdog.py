"""The health verdict behind WATCHDOG=1: stuck jobs, a silent scheduler, a blocked loop."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid

from bot.ops.notify import Notifier
from bot.ops.watchdog import HealthMonitor, pulse_seconds, send_watchdog


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_healthy_until_a_job_runs_longer_than_the_stall_limit() -> None:
    clock = FakeMonotonic()
    monitor = HealthMonitor(10, monotonic=clock)
    with monitor.job("strategy:a"):
        clock.now += 9
        monitor.progress()
        assert monitor.problem() is None
        clock.now += 2
        monitor.progress()
        assert monitor.problem() == "job strategy:a running for 11 s"
        assert monitor.running() == ["strategy:a"]
    assert monitor.problem() is None
    assert monitor.running() == []


def test_a_scheduler_without_pulses_is_unhealthy() -> None:
    clock = FakeMonotonic()
    monitor = HealthMonitor(10, monotonic=clock)
    clock.now += 10
    assert monitor.problem() is None
    clock.now += 1
    assert monitor.problem() == "scheduler made no progress for 11 s"
    monitor.progress()
    assert monitor.problem() is None


def test_a_failing_job_still_counts_as_finished() -> None:
    clock = FakeMonotonic()
    monitor = HealthMonitor(1, monotonic=clock)
    try:
        with monitor.job("tracker"):
            raise RuntimeError("network")
    except RuntimeError:
        pass
    clock.now += 0.5
    assert monitor.running() == [] and monitor.problem() is None


def test_the_pulse_beats_well_inside_the_stall_limit() -> None:
    assert pulse_seconds(120) == 5.0
    assert pulse_seconds(2) == 0.5
    assert pulse_seconds(1) == 0.25


async def test_watchdog_messages_stop_while_unhealthy_and_resume() -> None:
    name = f"bot-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.setblocking(False)
        notifier = Notifier("@" + name)
        monitor = HealthMonitor(0.3)
        sender = asyncio.create_task(send_watchdog(notifier, monitor, 0.05))

        def drain() -> int:
            count = 0
            while True:
                try:
                    assert sock.recv(64) == b"WATCHDOG=1"
                except BlockingIOError:
                    return count
                count += 1

        async def pulsing(seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                monitor.progress()
                await asyncio.sleep(0.02)

        await pulsing(0.3)
        assert drain() >= 3
        with monitor.job("strategy:stuck"):  # awaiting forever, the loop still turns
            await pulsing(0.45)
            drain()
            await pulsing(0.3)
            assert drain() == 0
        await pulsing(0.3)
        assert drain() >= 3
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)
        notifier.close()
