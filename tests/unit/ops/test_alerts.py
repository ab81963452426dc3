"""The alerter's rules: configuration, secrets, the queue, the filter, the message shapes.

Delivery over real HTTP (retries, rate limit, dead receivers) is tested against a loopback
receiver in tests/integration/test_alerts_loopback.py; here an in-process httpx transport
stands in for the server where only the request's content matters.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from bot.clock import SteppedClock
from bot.config import AlertSettings
from bot.ops.alert_channels import Outgoing, TelegramChannel, WebhookChannel, field_text
from bot.ops.alerts import MAX_TEXT, AlertConfigError, Alerter, DeliveryTuning, build_alerter

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SECRET_URL = "https://hooks.example.test/services/T000/B000/SECRETSECRET"
TOKEN = "123456789:AAH-very-secret-token"


class Recorder:
    """An in-process transport answering from a list of statuses (then 200)."""

    def __init__(self, *answers: int | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else 200
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer, json={"ok": answer < 300})

    def texts(self) -> list[str]:
        return [json.loads(r.content)["text"] for r in self.requests]


def webhook(**overrides: Any) -> AlertSettings:
    return AlertSettings(webhook_url=SecretStr(SECRET_URL), **overrides)


def alerter_for(
    settings: AlertSettings, recorder: Recorder, clock: SteppedClock | None = None
) -> Alerter:
    return Alerter(
        settings,
        clock or SteppedClock(NOW),
        transport=httpx.MockTransport(recorder),
        tuning=DeliveryTuning(backoff_base=0.001, backoff_cap=0.01),
    )


# --- configuration ------------------------------------------------------------------------


def test_no_channel_means_disabled_and_emit_does_nothing() -> None:
    alerter = build_alerter(AlertSettings(), SteppedClock(NOW))
    alerter.emit("order_filled", "x")
    assert not alerter.enabled and alerter.channels == [] and alerter.stats.queued == 0


def test_each_configured_channel_is_used() -> None:
    both = AlertSettings(
        webhook_url=SecretStr(SECRET_URL), telegram_bot_token=SecretStr(TOKEN), telegram_chat_id="1"
    )
    assert Alerter(both, SteppedClock(NOW)).channels == ["webhook", "telegram"]
    assert Alerter(webhook(), SteppedClock(NOW)).channels == ["webhook"]


def secret_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "secret"
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            # model_construct: settings built in code skip the config's own checks; the
            # alerter checks again (load_settings refuses these first, see test_config).
            AlertSettings.model_construct(telegram_bot_token=SecretStr(TOKEN)),
            "[alerts].telegram_chat_id is missing (a bot token is set)",
        ),
        (
            AlertSettings.model_construct(telegram_chat_id="42"),
            "[alerts].telegram_bot_token (or telegram_bot_token_file) is missing",
        ),
        (
            AlertSettings(webhook_url=SecretStr("ftp://SECRETSECRET@example.test/x")),
            "[alerts].webhook_url must start with http:// or https://",
        ),
        (
            AlertSettings.model_construct(
                webhook_url=SecretStr(SECRET_URL), events=["order_filled", "order_fill"]
            ),
            "[alerts].events: unknown kind 'order_fill'",
        ),
    ],
)
def test_unusable_settings_are_one_line_errors_naming_the_key_not_the_secret(
    settings: AlertSettings, message: str
) -> None:
    with pytest.raises(AlertConfigError) as caught:
        Alerter(settings, SteppedClock(NOW))
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text
    assert "SECRETSECRET" not in text and TOKEN not in text


def test_a_secret_file_open_to_others_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = secret_file(tmp_path, TOKEN, 0o644)
    settings = AlertSettings(telegram_bot_token_file=path, telegram_chat_id="42")
    with pytest.raises(AlertConfigError, match="chmod 600") as caught:
        build_alerter(settings, SteppedClock(NOW))
    assert str(path) in str(caught.value) and TOKEN not in str(caught.value)


@pytest.mark.parametrize(("content", "problem"), [(None, "does not exist"), ("\n", "is empty")])
def test_a_missing_or_empty_secret_file_is_refused(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    path = tmp_path / "webhook_url" if content is None else secret_file(tmp_path, content)
    with pytest.raises(AlertConfigError, match=problem):
        build_alerter(AlertSettings(webhook_url_file=path), SteppedClock(NOW))


def test_a_secret_file_with_owner_only_mode_is_used(tmp_path: Path) -> None:
    path = secret_file(tmp_path, TOKEN + "\n")
    settings = AlertSettings(telegram_bot_token_file=path, telegram_chat_id="42")
    assert build_alerter(settings, SteppedClock(NOW)).channels == ["telegram"]


# --- emit: the queue and its rules --------------------------------------------------------


async def test_a_full_queue_drops_the_oldest_alerts_and_counts_them() -> None:
    recorder = Recorder()
    alerter = alerter_for(webhook(queue_size=3), recorder)
    for n in range(5):
        alerter.emit("order_filled", f"order {n}")  # before start: they wait
    await alerter.aclose(timeout=5)  # starts, flushes, stops
    assert recorder.texts() == ["order 2", "order 3", "order 4"]
    stats = alerter.stats
    assert (stats.queued, stats.dropped, stats.sent) == (5, 2, 3)


async def test_only_the_chosen_kinds_are_sent_and_unknown_kinds_are_ignored() -> None:
    recorder = Recorder()
    alerter = alerter_for(webhook(events=["order_filled", "risk_cap_hit"]), recorder)
    alerter.emit("order_filled", "yes")
    alerter.emit("strategy_error", "not chosen")
    alerter.emit("no_such_kind", "a typo in our code")
    alerter.emit("risk_cap_hit", "yes too")
    await alerter.aclose(timeout=5)
    assert recorder.texts() == ["yes", "yes too"]
    assert alerter.wants("order_filled") and not alerter.wants("strategy_error")


async def test_emit_never_raises_and_late_alerts_are_counted_as_dropped() -> None:
    class BrokenClock:
        def now(self) -> datetime:
            raise RuntimeError("clock broke")

    broken = Alerter(webhook(), BrokenClock())
    broken.emit("order_filled", "x")
    assert broken.stats.dropped == 1

    recorder = Recorder()
    alerter = alerter_for(webhook(), recorder)
    await alerter.start()
    await alerter.aclose(timeout=1)
    alerter.emit("daemon_stopped", "after close")
    assert recorder.requests == [] and alerter.stats.dropped == 1


async def test_an_alert_from_another_thread_is_handed_to_the_loop() -> None:
    recorder = Recorder()
    alerter = alerter_for(webhook(), recorder)
    await alerter.start()
    worker = threading.Thread(target=alerter.emit, args=("no_poll", "from a thread"))
    worker.start()
    worker.join()
    await alerter.aclose(timeout=5)
    assert recorder.texts() == ["from a thread"]


async def test_a_bug_in_one_delivery_does_not_stop_the_channel() -> None:
    recorder = Recorder(RuntimeError("not an HTTP error"))
    alerter = alerter_for(webhook(), recorder)
    alerter.emit("order_filled", "lost to the bug")
    alerter.emit("order_filled", "delivered")
    await alerter.aclose(timeout=5)
    assert recorder.texts() == ["lost to the bug", "delivered"]
    assert (alerter.stats.failed, alerter.stats.sent) == (1, 1)


async def test_fields_are_exact_text_and_long_texts_are_cut() -> None:
    recorder = Recorder()
    clock = SteppedClock(NOW)
    alerter = alerter_for(webhook(), recorder, clock)
    alerter.emit(
        "low_apt_for_gas",
        "x" * (MAX_TEXT + 50),
        apt_balance=Decimal("0.1500"),
        threshold=Decimal("2E-1"),
        last=NOW + timedelta(hours=1),
        missing=None,
    )
    await alerter.aclose(timeout=5)
    body = json.loads(recorder.requests[0].content)
    assert body["fields"] == {
        "apt_balance": "0.15",
        "threshold": "0.2",
        "last": "2026-03-01T10:00:00Z",
    }
    assert len(body["text"]) == MAX_TEXT and body["text"].endswith("…")


def test_field_text_keeps_money_exact() -> None:
    assert field_text(Decimal("1E+2")) == "100"
    assert field_text(Decimal("0.000000010")) == "0.00000001"
    assert field_text(12) == "12"


# --- channel message shapes ---------------------------------------------------------------


def outgoing(text: str = "DCA order 0xab… filled", **fields: str) -> Outgoing:
    return Outgoing("order_filled", text, NOW, fields)


def test_the_webhook_body_is_kind_text_at_and_string_fields() -> None:
    body = WebhookChannel(SecretStr(SECRET_URL)).body(outgoing(amount="1.5"))
    assert body == {
        "kind": "order_filled",
        "text": "DCA order 0xab… filled",
        "at": "2026-03-01T09:00:00Z",
        "fields": {"amount": "1.5"},
    }


def test_a_telegram_message_is_plain_text_within_telegrams_limit() -> None:
    channel = TelegramChannel("https://api.telegram.org", SecretStr(TOKEN), "-100")
    body = channel.body(outgoing("<b>not markup</b> *", order_id="0xab"))
    assert body["text"] == "[order_filled] <b>not markup</b> *\norder_id: 0xab"
    assert "parse_mode" not in body and body["chat_id"] == "-100"
    long = channel.body(outgoing("y" * 10_000))["text"]
    assert len(long) < 4096 and long.endswith("…")


@pytest.mark.parametrize(
    ("headers", "payload", "seconds"),
    [
        ({"retry-after": "7"}, {}, 7.0),
        ({}, {"ok": False, "parameters": {"retry_after": 12}}, 12.0),
        ({}, {"ok": False, "parameters": {"retry_after": "soon"}}, None),
        ({}, {"ok": False}, None),
    ],
)
def test_telegram_says_when_to_retry_in_a_header_or_its_body(
    headers: dict[str, str], payload: dict[str, Any], seconds: float | None
) -> None:
    channel = TelegramChannel("https://api.telegram.org", SecretStr(TOKEN), "-100")
    assert channel.retry_after(httpx.Response(429, headers=headers, json=payload), NOW) == seconds


def test_telegrams_reason_for_a_refusal_is_kept_for_the_log_without_the_token() -> None:
    channel = TelegramChannel("https://api.telegram.org", SecretStr(TOKEN), "-100")
    answer = {"ok": False, "description": f"Bad Request: chat not found ({TOKEN})"}
    assert channel.problem(httpx.Response(400, json=answer)) == (
        "Bad Request: chat not found ([REDACTED])"
    )
    assert channel.problem(httpx.Response(502, text="<html>")) == ""
    webhook_channel = WebhookChannel(SecretStr(SECRET_URL))
    assert webhook_channel.problem(httpx.Response(400, json={"description": SECRET_URL})) == ""
