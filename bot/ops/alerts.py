"""Alerts: notifications through a JSON webhook and Telegram, never in trading's way.

* `Alert` — one notification: a kind from `ALERT_KINDS`, one line of text, a few fields.
* `Alerter.emit(kind, text, **fields)` — never blocks, never raises: the alert is put on
  each channel's bounded queue (when full, the oldest waiting alert is dropped and
  counted) and that channel's background task delivers it: retries with exponential
  back-off and jitter on network errors, 5xx and 429 (honouring Retry-After, capped), no
  retry on other 4xx, given up after `max_attempts`. Each channel sends at most
  `max_per_minute` alerts per window; the excess is counted and summarised in one
  "N more alerts suppressed" message when the window reopens.
* Secrets (the webhook URL, the bot token) never appear in logs or errors: a channel is
  called "webhook" or "telegram", and failures are logged by exception class or status.
* `build_alerter(settings, clock)` — the alerter of `[alerts]` (no channel: sends nothing).

Alert times come from the injected `Clock`; delivery pacing (rate windows, back-off) runs
on monotonic real time, like asyncio itself, and a Retry-After date is read against the
injected real wall clock (`wall_clock`: the alert clock may be simulated). The back-off is
`bot.retry.Backoff`, configured by `DeliveryTuning`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Final

import httpx

from bot.clock import Clock, RealClock
from bot.config import ALERT_EVENT_NAMES, AlertSettings
from bot.logging import get_logger, redact
from bot.ops.alert_channels import (
    USER_AGENT,
    AlertConfigError,
    Channel,
    Outgoing,
    build_channels,
    field_text,
)
from bot.retry import Backoff, Jitter

__all__ = [
    "ALERT_KINDS",
    "SUPPRESSED_KIND",
    "TEST_KIND",
    "Alert",
    "AlertConfigError",
    "AlertStats",
    "Alerter",
    "DeliveryTuning",
    "build_alerter",
]

ALERT_KINDS: Final = ALERT_EVENT_NAMES
TEST_KIND: Final = "alerts_test"
"""`bot alerts test`'s message (sent whatever `events` selects)."""
SUPPRESSED_KIND: Final = "alerts_suppressed"
"""The rate limit's summary message (always sent; not a kind `events` can select)."""
MAX_TEXT: Final = 1000
"""Longer texts are cut (an exception message can be long; an alert is one line)."""

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class Alert:
    """One notification."""

    kind: str
    text: str
    at: datetime
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class AlertStats:
    """Delivery counters; one alert counts once per channel it goes to.

    `queued` = `sent` + `failed` + `dropped` + `rate_limited` + what is still waiting
    (an alert emitted after `aclose`, or one `emit` failed on, is queued and dropped).
    `summaries` counts the "N more alerts suppressed" messages sent.
    """

    queued: int = 0
    sent: int = 0
    failed: int = 0
    dropped: int = 0
    rate_limited: int = 0
    summaries: int = 0

    def add(self, other: AlertStats) -> None:
        """Add `other`'s counters to these."""
        for name in (f.name for f in fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass(frozen=True)
class DeliveryTuning:
    """Pacing of deliveries; the defaults suit production, tests shorten them."""

    window_seconds: float = 60.0
    """The rate limit's window: `max_per_minute` alerts per window, per channel."""
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    retry_after_cap: float = 120.0
    """A server's Retry-After longer than this is not waited for in full (a shorter one
    never shortens the back-off)."""

    def backoff(self, rng: Jitter | None = None) -> Backoff:
        """The retry policy these numbers configure."""
        return Backoff(
            self.backoff_base,
            self.backoff_cap,
            rng,
            retry_after_cap=self.retry_after_cap,
            retry_after_jitter=0.0,
            at_least_backoff=True,
        )


class _Lane:
    """One channel: its queue, its rate window and the task delivering from them."""

    def __init__(
        self,
        channel: Channel,
        settings: AlertSettings,
        tuning: DeliveryTuning,
        *,
        clock: Clock,
        monotonic: Callable[[], float],
        sleep: Sleep,
        rng: Jitter,
        wall_clock: Clock,
    ) -> None:
        self.channel = channel
        self.stats = AlertStats()
        self.pending: deque[Alert] = deque()
        self.wake: asyncio.Event | None = None
        self.closing = False
        self._settings = settings
        self._tuning = tuning
        self._clock = clock
        self._monotonic = monotonic
        self._sleep = sleep
        self._backoff = tuning.backoff(rng)
        self._wall = wall_clock
        self._window_start: float | None = None
        self._in_window = 0
        self._suppressed = 0
        self._in_flight = False  # a counted alert is being delivered
        self._log = get_logger("alerts", channel=channel.name)

    # --- the queue (called from emit: no await, no I/O) --------------------------------

    def put(self, alert: Alert) -> None:
        """Queue `alert`, dropping the oldest waiting one when the queue is full."""
        if len(self.pending) >= self._settings.queue_size:
            self.pending.popleft()
            self.stats.dropped += 1
        self.pending.append(alert)
        self.stats.queued += 1
        if self.wake is not None:
            self.wake.set()

    def close(self) -> None:
        """Deliver what is queued, then stop."""
        self.closing = True
        if self.wake is not None:
            self.wake.set()

    def abandon(self) -> None:
        """Count whatever could not be delivered before shutdown (queued or cut off) as dropped."""
        self.stats.dropped += len(self.pending) + (1 if self._in_flight else 0)
        self.pending.clear()
        self._in_flight = False

    # --- the rate window ------------------------------------------------------------------

    def _window_open(self) -> bool:
        start = self._window_start
        return start is None or self._monotonic() - start >= self._tuning.window_seconds

    def _admit(self) -> bool:
        if self._window_open():
            self._window_start, self._in_window = self._monotonic(), 0
        if self._in_window < self._settings.max_per_minute:
            self._in_window += 1
            return True
        return False

    def _reopens_in(self) -> float:
        start = self._window_start if self._window_start is not None else self._monotonic()
        return max(0.0, start + self._tuning.window_seconds - self._monotonic())

    # --- the worker -----------------------------------------------------------------------

    async def run(self, client: httpx.AsyncClient) -> None:
        """Deliver until closed and drained; never raises (except cancellation)."""
        wake = self.wake
        if wake is None:
            raise RuntimeError("the alert channel's worker runs only after start()")
        while True:
            if self._suppressed and (self._window_open() or (self.closing and not self.pending)):
                self._admit()
                await self._send_summary(client)
            elif self.pending:
                alert = self.pending.popleft()
                if self._admit():
                    await self._deliver(client, alert)
                else:
                    self._suppressed += 1
                    self.stats.rate_limited += 1
            elif self.closing:
                return
            else:
                wake.clear()
                timeout = self._reopens_in() if self._suppressed else None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout)

    async def _send_summary(self, client: httpx.AsyncClient) -> None:
        count, self._suppressed = self._suppressed, 0
        noun = "alert" if count == 1 else "alerts"
        summary = Alert(
            SUPPRESSED_KIND,
            f"{count} more {noun} suppressed by the rate limit "
            f"({self._settings.max_per_minute} per minute)",
            self._clock.now(),
            {"suppressed": str(count)},
        )
        if await self._deliver(client, summary, counted=False):
            self.stats.summaries += 1

    async def _deliver(
        self, client: httpx.AsyncClient, alert: Alert, *, counted: bool = True
    ) -> bool:
        """Send with retries; True when delivered. Never raises (except cancellation)."""
        self._in_flight = counted
        try:
            delivered = await self._attempts(client, alert)
        except Exception as exc:  # a bug must not kill the channel's worker
            self._log.error("alerts.error", kind=alert.kind, error=type(exc).__name__)
            delivered = False
        self._in_flight = False
        if counted:
            if delivered:
                self.stats.sent += 1
            else:
                self.stats.failed += 1
        return delivered

    async def _attempts(self, client: httpx.AsyncClient, alert: Alert) -> bool:
        outgoing = Outgoing(alert.kind, alert.text, alert.at, alert.fields)
        attempts = self._settings.max_attempts
        reason = ""
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            try:
                async with asyncio.timeout(self._settings.timeout_seconds):
                    response = await self.channel.send(client, outgoing)
            except TimeoutError:
                reason = "timed out"
            except httpx.HTTPError as exc:
                # The class only: some httpx messages quote the URL, which is a secret.
                reason = type(exc).__name__
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return True
                said = self.channel.problem(response)
                reason = f"HTTP {status}: {said}" if said else f"HTTP {status}"
                if status != 429 and status < 500:
                    self._log.warning(
                        "alerts.rejected", kind=alert.kind, reason=reason, attempts=attempt
                    )
                    return False
                retry_after = self.channel.retry_after(response, self._wall.now())
            if attempt == attempts:
                break
            delay = self._backoff.delay(attempt, retry_after)
            self._log.debug(
                "alerts.retry", kind=alert.kind, reason=reason, attempt=attempt, delay=delay
            )
            await self._sleep(delay)
        self._log.warning("alerts.failed", kind=alert.kind, reason=reason, attempts=attempts)
        return False


class Alerter:
    """Queues alerts and delivers them in the background, one task per channel.

    Call `emit` from the event loop's thread (another thread's call is handed to the loop
    once `start` has run). Alerts emitted before `start` wait in the queue.

    Raises (on construction):
        AlertConfigError: an unusable secret file, a half-configured Telegram, an unknown
            kind in `events`; the message names the key, never a secret.
    """

    def __init__(
        self,
        settings: AlertSettings,
        clock: Clock,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        tuning: DeliveryTuning | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        rng: Jitter | None = None,
        wall_clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.transport = transport
        self.tuning = tuning or DeliveryTuning()
        self._wanted = _wanted_kinds(settings.events)
        jitter = rng or random.Random()  # noqa: S311 - back-off jitter, not cryptography
        self._lanes = [
            _Lane(
                channel,
                settings,
                self.tuning,
                clock=clock,
                monotonic=monotonic,
                sleep=sleep,
                rng=jitter,
                wall_clock=wall_clock or RealClock(),
            )
            for channel in build_channels(settings)
        ]
        self._own = AlertStats()  # what never reached a channel's queue
        self._client: httpx.AsyncClient | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._closed = False
        self._log = get_logger("alerts")

    @property
    def enabled(self) -> bool:
        """True when at least one channel is configured."""
        return bool(self._lanes)

    @property
    def channels(self) -> list[str]:
        """The configured channels by name ("webhook", "telegram")."""
        return [lane.channel.name for lane in self._lanes]

    @property
    def stats(self) -> AlertStats:
        """Counters over all channels (a fresh snapshot at each read)."""
        total = AlertStats()
        total.add(self._own)
        for lane in self._lanes:
            total.add(lane.stats)
        return total

    def channel_stats(self, name: str) -> AlertStats:
        """One channel's counters."""
        for lane in self._lanes:
            if lane.channel.name == name:
                return lane.stats
        raise KeyError(name)

    def wants(self, kind: str) -> bool:
        """True when an alert of `kind` would be sent (a channel, and `events` allow it)."""
        if not self._lanes or kind not in ALERT_KINDS:
            return False
        return self._wanted is None or kind in self._wanted

    def emit(self, kind: str, text: str, **fields: object) -> None:
        """Queue an alert; returns at once, whatever happens to it later. Never raises.

        Field values are sent as exact text (`Decimal` without exponent, times in ISO UTC);
        `None` values are left out.
        """
        try:
            if not self.wants(kind):
                if kind not in ALERT_KINDS:
                    self._log.warning("alerts.unknown_kind", kind=kind)
                return
            if self._closed:
                self._drop_unqueued()
                return
            text = redact(text)  # an exception message may quote a secret
            alert = Alert(
                kind,
                text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…",
                self.clock.now(),
                {name: field_text(v) for name, v in fields.items() if v is not None},
            )
            loop = self._loop
            if loop is not None and threading.get_ident() != self._loop_thread:
                loop.call_soon_threadsafe(self._enqueue, alert)
            else:
                self._enqueue(alert)
        except Exception as exc:  # emit must never take its caller down
            self._drop_unqueued()
            with contextlib.suppress(Exception):
                self._log.error("alerts.emit_failed", kind=kind, error=type(exc).__name__)

    def _drop_unqueued(self) -> None:
        """An alert that could not even be queued (after close, or a failure in emit)."""
        self._own.queued += 1
        self._own.dropped += 1

    def emit_test(self, text: str) -> None:
        """Queue a test alert on every channel, whatever `events` selects."""
        self._enqueue(Alert(TEST_KIND, redact(text), self.clock.now(), {}))

    def _enqueue(self, alert: Alert) -> None:
        for lane in self._lanes:
            lane.put(alert)

    async def start(self) -> None:
        """Start the delivery tasks (call inside the running event loop; idempotent)."""
        if self._tasks or not self._lanes or self._closed:
            return
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._client = httpx.AsyncClient(
            transport=self.transport,
            timeout=self.settings.timeout_seconds,
            headers={"user-agent": USER_AGENT},
            follow_redirects=False,
        )
        for lane in self._lanes:
            lane.wake = asyncio.Event()
            if lane.pending:
                lane.wake.set()
            self._tasks.append(
                asyncio.create_task(lane.run(self._client), name=f"alerts-{lane.channel.name}")
            )
        self._log.info("alerts.started", channels=self.channels)

    async def aclose(self, timeout: float = 5.0) -> None:
        """Deliver what can be delivered within `timeout` seconds, then stop.

        Whatever is still queued or in flight at the deadline is cancelled and counted as
        dropped; a dead or hanging receiver cannot hold shutdown up. Alerts emitted while
        closing are still delivered if time allows; after it, they are dropped.
        """
        if self._closed:
            return
        if not self._lanes:
            self._closed = True
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        await self.start()  # alerts queued before a start are flushed too
        await asyncio.sleep(0)  # let emits already handed over by other threads land first
        for lane in self._lanes:
            lane.close()
        reserve = min(0.25, max(0.0, timeout) / 4)
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=max(0.0, deadline - reserve - loop.time()))
        stragglers = [task for task in self._tasks if not task.done()]
        for task in stragglers:
            task.cancel()
        if stragglers:
            await asyncio.wait(stragglers, timeout=max(0.01, deadline - loop.time()))
        self._closed = True
        for lane in self._lanes:
            lane.abandon()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._client.aclose(), max(0.01, deadline - loop.time()))
        self._log.info("alerts.closed", **_as_fields(self.stats))


def _as_fields(stats: AlertStats) -> dict[str, int]:
    return {f.name: getattr(stats, f.name) for f in fields(stats)}


def _wanted_kinds(events: Iterable[str]) -> frozenset[str] | None:
    """None for "all", else the chosen kinds; an unknown name is a config error."""
    chosen = {name.strip() for name in events}
    if "all" in chosen:
        return None
    unknown = sorted(chosen - ALERT_KINDS)
    if unknown:
        raise AlertConfigError(
            f"[alerts].events: unknown kind {unknown[0]!r} "
            f"(known: all, {', '.join(sorted(ALERT_KINDS))})"
        )
    return frozenset(chosen)


def build_alerter(
    settings: AlertSettings, clock: Clock, *, transport: httpx.AsyncBaseTransport | None = None
) -> Alerter:
    """The alerter of `[alerts]` (raises `AlertConfigError` on unusable settings)."""
    return Alerter(settings, clock, transport=transport)
