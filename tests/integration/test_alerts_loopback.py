"""Alerts against a real HTTP receiver on 127.0.0.1: delivery, retries, rate limit, dead ends.

The receiver records every request and can be told to answer 500, 429 with Retry-After,
any status, or to hang. A dead receiver (closed port, or hanging) must never slow a
trading loop running on the same event loop, and shutdown must not wait for it.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.clock import SteppedClock
from bot.config import AlertSettings
from bot.engine.events import OrderFilled
from bot.logging import configure_logging
from bot.ops.alert_sources import AlertSources
from bot.ops.alerts import Alerter, DeliveryTuning
from tests.support.loopback import closed_port, serve

NOW = datetime(2026, 3, 1, 12, 30, 15, tzinfo=UTC)
TOKEN = "7312345678:AAE-secret-token-Zq9xw"
HOOK_PATH = "/hooks/T0SECRET/B0SECRET/xyzSECRETxyz"
FAST = DeliveryTuning(backoff_base=0.01, backoff_cap=0.05, retry_after_cap=0.5)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A raw ASGI app: records requests, answers by script (then by `default`)."""

    script: deque[tuple[int | str, dict[str, str]]] = field(default_factory=deque)
    default: int | str = 200
    requests: list[Recorded] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def then(self, answer: int | str, **headers: str) -> Receiver:
        self.script.append((answer, {k.replace("_", "-"): v for k, v in headers.items()}))
        return self

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.requests.append(Recorded(scope["method"], scope["path"], headers, body))
        answer, extra = self.script.popleft() if self.script else (self.default, {})
        if answer == "hang":
            while not self.released.is_set():
                await asyncio.sleep(0.02)
            answer = 503
        status = int(answer)
        payload = b'{"ok": true}' if status < 300 else b'{"ok": false}'
        head = [(b"content-type", b"application/json")]
        head += [(k.encode(), v.encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": payload})


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    recv = Receiver()
    with serve(recv) as url:
        recv.url = url
        try:
            yield recv
        finally:
            recv.released.set()  # let hanging requests end so the server can stop


def webhook(url: str, **overrides: Any) -> AlertSettings:
    return AlertSettings(webhook_url=SecretStr(url + HOOK_PATH), **overrides)


def telegram(url: str, **overrides: Any) -> AlertSettings:
    return AlertSettings(
        telegram_bot_token=SecretStr(TOKEN),
        telegram_chat_id="-1001234567",
        telegram_api_url=url,
        **overrides,
    )


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock(NOW)


@pytest.fixture
async def make() -> AsyncIterator[Any]:
    """Build started alerters; whatever a test leaves open is closed at its end."""
    made: list[Alerter] = []

    async def build(settings: AlertSettings, clock: SteppedClock, **kw: Any) -> Alerter:
        alerter = Alerter(settings, clock, tuning=kw.pop("tuning", FAST), **kw)
        await alerter.start()
        made.append(alerter)
        return alerter

    yield build
    for alerter in made:
        await alerter.aclose(timeout=1.0)


async def until(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def trading_loop(ticks: int = 40, period: float = 0.01) -> float:
    """A loop of short awaits, like the daemon's; returns the worst lateness of a tick."""
    loop = asyncio.get_running_loop()
    worst = 0.0
    for _ in range(ticks):
        asked = loop.time()
        await asyncio.sleep(period)
        worst = max(worst, loop.time() - asked - period)
    return worst


# --- alerts reach the receiver ------------------------------------------------------------


async def test_a_webhook_alert_arrives_as_json_with_exact_fields(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    alerter = await make(webhook(receiver.url), clock)
    alerter.emit(
        "order_filled",
        "DCA order 0xab12cd34… filled",
        order_kind="dca",
        amount_spent=Decimal("100.50"),
        to_amount_received=Decimal("1.2E+1"),
    )
    await alerter.aclose(timeout=5)
    [request] = receiver.requests
    assert (request.method, request.path) == ("POST", HOOK_PATH)
    assert request.headers["content-type"] == "application/json"
    assert request.json() == {
        "kind": "order_filled",
        "text": "DCA order 0xab12cd34… filled",
        "at": "2026-03-01T12:30:15Z",
        "fields": {"order_kind": "dca", "amount_spent": "100.5", "to_amount_received": "12"},
    }
    assert alerter.stats.sent == 1 and alerter.stats.failed == 0


async def test_a_telegram_alert_is_a_plain_text_send_message(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    alerter = await make(telegram(receiver.url), clock)
    sources = AlertSources(alerter, alerter.settings)
    sources.on_order_event(OrderFilled("limit", "0x" + "cd" * 32, "active", "filled"))
    await alerter.aclose(timeout=5)
    [request] = receiver.requests
    assert request.path == f"/bot{TOKEN}/sendMessage"
    body = request.json()
    assert body["chat_id"] == "-1001234567"
    assert body["text"].startswith("[order_filled] Limit order 0xcdcdcdcd… filled\n")
    assert "order_id: 0x" + "cd" * 32 in body["text"]
    assert "parse_mode" not in body


async def test_both_channels_get_every_alert_and_the_events_filter_applies(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    settings = AlertSettings(
        webhook_url=SecretStr(receiver.url + HOOK_PATH),
        telegram_bot_token=SecretStr(TOKEN),
        telegram_chat_id="42",
        telegram_api_url=receiver.url,
        events=["daemon_started", "strategy_error"],
    )
    alerter = await make(settings, clock)
    alerter.emit("daemon_started", "Daemon started")
    alerter.emit("order_filled", "not chosen")
    alerter.emit("strategy_error", "Strategy s failed: boom")
    await alerter.aclose(timeout=5)
    paths = sorted(r.path for r in receiver.requests)
    assert paths == sorted([HOOK_PATH, f"/bot{TOKEN}/sendMessage"] * 2)
    kinds = [r.json()["kind"] for r in receiver.requests if r.path == HOOK_PATH]
    assert kinds == ["daemon_started", "strategy_error"]
    assert alerter.channel_stats("webhook").sent == alerter.channel_stats("telegram").sent == 2


# --- retries ------------------------------------------------------------------------------


async def test_a_500_is_retried_and_then_delivered(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    receiver.then(500).then(502)
    alerter = await make(webhook(receiver.url), clock)
    alerter.emit("transaction_failed", "swap failed")
    await alerter.aclose(timeout=5)
    assert len(receiver.requests) == 3
    assert {r.body for r in receiver.requests} == {receiver.requests[0].body}  # same alert
    assert (alerter.stats.sent, alerter.stats.failed) == (1, 0)


async def test_a_429_waits_as_long_as_retry_after_says_up_to_the_cap(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    receiver.then(429, retry_after="0.3").then(429, retry_after="3600")
    alerter = await make(webhook(receiver.url), clock, sleep=sleep)
    alerter.emit("no_poll", "no poll for 15 minutes")
    await alerter.aclose(timeout=5)
    assert len(receiver.requests) == 3 and alerter.stats.sent == 1
    assert waits[0] >= 0.3
    assert waits[1] == FAST.retry_after_cap  # an hour asked, the cap honoured


async def test_a_4xx_other_than_429_is_not_retried(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    receiver.then(404)
    alerter = await make(telegram(receiver.url), clock)
    alerter.emit("daemon_stopped", "Daemon stopped")
    await alerter.aclose(timeout=5)
    assert len(receiver.requests) == 1
    assert (alerter.stats.sent, alerter.stats.failed) == (0, 1)


async def test_delivery_gives_up_after_max_attempts(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    receiver.default = 503
    alerter = await make(webhook(receiver.url, max_attempts=3), clock)
    alerter.emit("strategy_error", "boom")
    alerter.emit("strategy_error", "boom again")
    await alerter.aclose(timeout=5)
    assert len(receiver.requests) == 6
    assert (alerter.stats.sent, alerter.stats.failed) == (0, 2)


# --- rate limit ---------------------------------------------------------------------------


async def test_the_rate_limit_sends_a_few_then_one_summary_when_the_window_reopens(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    # The window runs on a monotonic time the test moves: a slow machine cannot reopen it.
    moment = [100.0]
    tuning = DeliveryTuning(window_seconds=0.5, backoff_base=0.01, backoff_cap=0.05)
    alerter = await make(
        webhook(receiver.url, max_per_minute=3), clock, tuning=tuning, monotonic=lambda: moment[0]
    )
    for n in range(10):
        alerter.emit("order_filled", f"order {n} filled")
    await until(lambda: len(receiver.requests) == 3)
    await asyncio.sleep(0.7)  # longer than the window in real time, none of it on the window's
    assert len(receiver.requests) == 3  # the rest held back in this window
    moment[0] += 0.5
    await until(lambda: len(receiver.requests) == 4)
    texts = [r.json()["text"] for r in receiver.requests]
    assert texts[:3] == ["order 0 filled", "order 1 filled", "order 2 filled"]
    summary = receiver.requests[3].json()
    assert summary["kind"] == "alerts_suppressed"
    assert summary["text"] == "7 more alerts suppressed by the rate limit (3 per minute)"
    assert summary["fields"] == {"suppressed": "7"}
    # The receiver sees the summary before the lane has read its answer and counted it.
    await until(lambda: alerter.stats.summaries == 1)
    stats = alerter.stats
    assert (stats.sent, stats.rate_limited, stats.summaries) == (3, 7, 1)


async def test_shutdown_sends_the_pending_summary_without_waiting_for_the_window(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    alerter = await make(webhook(receiver.url, max_per_minute=2), clock)  # a 60 s window
    for n in range(5):
        alerter.emit("order_filled", f"order {n} filled")
    started = time.monotonic()
    await alerter.aclose(timeout=5)
    assert time.monotonic() - started < 3
    texts = [r.json()["text"] for r in receiver.requests]
    assert texts == [
        "order 0 filled",
        "order 1 filled",
        "3 more alerts suppressed by the rate limit (2 per minute)",
    ]


# --- a dead receiver does not slow trading ------------------------------------------------


@pytest.mark.parametrize("dead", ["closed port", "hanging"])
async def test_a_dead_receiver_neither_blocks_emit_nor_slows_the_trading_loop(
    dead: str, receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    if dead == "closed port":
        url = f"http://127.0.0.1:{closed_port()}"
    else:
        receiver.default = "hang"
        url = receiver.url
    settings = webhook(url, timeout_seconds=0.5, queue_size=100)
    alerter = await make(settings, clock, tuning=DeliveryTuning(backoff_base=0.05))

    baseline = await trading_loop()  # this machine's own jitter, with nothing to deliver
    started = time.perf_counter()
    for n in range(1000):
        alerter.emit("transaction_failed", f"swap {n} failed", n=str(n))
    emit_seconds = time.perf_counter() - started
    lag = await trading_loop()
    alerter.emit("strategy_error", "more while trading")
    lag = max(lag, await trading_loop())

    assert emit_seconds < 0.5, f"1000 emits took {emit_seconds:.3f}s"
    # Generous: the point is "not blocked" (a blocked loop would lag by the 0.5 s timeout).
    assert lag < baseline + 0.1, f"trading loop lagged {lag:.3f}s (baseline {baseline:.3f}s)"
    assert alerter.stats.dropped >= 900  # the queue keeps the newest 100
    if dead == "hanging":
        assert receiver.requests  # it was reached, and held the request

    started = time.perf_counter()
    await alerter.aclose(timeout=0.5)
    assert time.perf_counter() - started < 1.0
    stats = alerter.stats
    assert stats.sent == 0
    assert stats.queued == stats.failed + stats.dropped + stats.rate_limited


async def test_an_alerter_without_channels_does_nothing(clock: SteppedClock) -> None:
    alerter = Alerter(AlertSettings(), clock)
    await alerter.start()
    alerter.emit("order_filled", "x")
    await alerter.aclose(timeout=0.1)
    assert not alerter.enabled and alerter.stats.queued == 0


# --- secrets never in logs ----------------------------------------------------------------


async def test_the_token_and_url_never_reach_the_logs_even_when_delivery_fails(
    receiver: Receiver,
    clock: SteppedClock,
    make: Any,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="httpx")  # httpx logs every request's URL
    receiver.then(500).then(404).then(429, retry_after="0")
    dead = f"http://127.0.0.1:{closed_port()}{HOOK_PATH}"
    settings = AlertSettings(
        webhook_url=SecretStr(dead),
        telegram_bot_token=SecretStr(TOKEN),
        telegram_chat_id="42",
        telegram_api_url=receiver.url,
        max_attempts=2,
    )
    alerter = await make(settings, clock)
    alerter.emit("strategy_error", "first")
    alerter.emit("strategy_error", "second")
    await alerter.aclose(timeout=5)
    assert len(receiver.requests) == 4  # 500, retried: 404; then 429, retried: 200
    out = capsys.readouterr()
    logged = caplog.text + out.out + out.err
    assert "HTTP Request" in caplog.text  # httpx did log its requests…
    assert "alerts.failed" in logged and "webhook" in logged and "telegram" in logged
    for secret in (TOKEN, HOOK_PATH, "T0SECRET", dead):
        assert secret not in logged  # …with the secrets masked


async def test_the_json_log_of_the_daemon_masks_secrets_too(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    stream = io.StringIO()
    configure_logging(fmt="json", level="debug", stream=stream)
    receiver.default = 500
    alerter = await make(telegram(receiver.url, max_attempts=2), clock)
    alerter.emit("daemon_started", "Daemon started")
    await alerter.aclose(timeout=5)
    text = stream.getvalue()
    assert '"alerts.failed"' in text and "telegram" in text
    assert TOKEN not in text


async def test_secret_files_are_read_once_and_never_echoed(
    tmp_path: Path, receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    url_file = tmp_path / "webhook_url"
    url_file.write_text(receiver.url + HOOK_PATH + "\n")
    url_file.chmod(0o600)
    alerter = await make(AlertSettings(webhook_url_file=url_file), clock)
    alerter.emit("low_apt_for_gas", "low")
    await alerter.aclose(timeout=5)
    assert [r.path for r in receiver.requests] == [HOOK_PATH]


async def test_timestamps_come_from_the_injected_clock(
    receiver: Receiver, clock: SteppedClock, make: Any
) -> None:
    alerter = await make(webhook(receiver.url), clock)
    alerter.emit("daemon_started", "one")
    clock.advance(timedelta(days=1, seconds=5))
    alerter.emit("daemon_stopped", "two")
    await alerter.aclose(timeout=5)
    assert [r.json()["at"] for r in receiver.requests] == [
        "2026-03-01T12:30:15Z",
        "2026-03-02T12:30:20Z",
    ]
