"""Where alerts go: a generic JSON webhook and Telegram, with their secrets kept out of sight.

A channel knows how to turn one alert into one HTTP request and how to read a server's
"try again later" from the answer; retries, pacing and queueing belong to `bot.ops.alerts`.
The webhook URL and the bot token are secrets: they are registered with the log redactor
when loaded, masked in httpx's own request log lines, and never put into a message of
ours — a channel is named by what it is ("webhook", "telegram").
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Final, Protocol

import httpx
from pydantic import SecretStr

from bot import __version__
from bot.config import AlertSettings
from bot.logging import REDACTED, register_secret
from bot.money import format_decimal
from bot.retry import parse_retry_after
from bot.secrets import SecretFileError, read_secret_file

__all__ = [
    "AlertConfigError",
    "Channel",
    "Outgoing",
    "TelegramChannel",
    "WebhookChannel",
    "build_channels",
    "field_text",
    "iso_utc",
    "resolve_secret",
]

USER_AGENT: Final = f"aptos-dca-bot/{__version__} alerts"
TELEGRAM_MAX_TEXT: Final = 4096
"""Telegram refuses longer messages (in UTF-16 units; we cut in characters, with margin)."""
_RETRY_AFTER_LIMIT_SECONDS: Final = 3600.0
"""A receiver's Retry-After is read up to an hour (the delivery waits at most
`DeliveryTuning.retry_after_cap` of it)."""


class AlertConfigError(ValueError):
    """`[alerts]` cannot be used as given (one line naming the key; never a secret)."""


@dataclass(frozen=True)
class Outgoing:
    """One alert as a channel sends it: kind, text, time and fields as exact text."""

    kind: str
    text: str
    at: datetime
    fields: Mapping[str, str]


class Channel(Protocol):
    """One destination for alerts."""

    name: str
    """What logs and errors call it ("webhook", "telegram"), never its URL."""

    async def send(self, client: httpx.AsyncClient, alert: Outgoing) -> httpx.Response:
        """POST the alert; transport errors propagate (the caller retries)."""
        ...

    def retry_after(self, response: httpx.Response, now: datetime) -> float | None:
        """Seconds the server asked us to wait (429/503), if it said (a date: from `now`)."""
        ...

    def problem(self, response: httpx.Response) -> str:
        """What a refusing server said, when it is safe to log ("" if nothing)."""
        ...


def _retry_after_header(response: httpx.Response, now: datetime) -> float | None:
    """The answer's `Retry-After` in seconds (a date: from `now`), if it has a usable one."""
    return parse_retry_after(
        response.headers.get("retry-after"), now=now, limit=_RETRY_AFTER_LIMIT_SECONDS
    )


def iso_utc(moment: datetime) -> str:
    """`2026-01-01T12:00:00Z`: ISO-8601 in UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def field_text(value: object) -> str:
    """A field value as exact text: decimals without exponent, times as ISO UTC."""
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return iso_utc(value) if value.tzinfo is not None else value.isoformat()
    if isinstance(value, float):
        # Floats never carry money here; repr is at least round-trip exact.
        return repr(value)
    return str(value)


class WebhookChannel:
    """POSTs `{"kind", "text", "at", "fields"}` as JSON to a URL (Slack-style relays, n8n…)."""

    name = "webhook"

    def __init__(self, url: SecretStr) -> None:
        self._url = url

    def body(self, alert: Outgoing) -> dict[str, Any]:
        """The JSON document sent (every value a string)."""
        return {
            "kind": alert.kind,
            "text": alert.text,
            "at": iso_utc(alert.at),
            "fields": dict(alert.fields),
        }

    async def send(self, client: httpx.AsyncClient, alert: Outgoing) -> httpx.Response:
        """POST the JSON body to the webhook URL."""
        return await client.post(self._url.get_secret_value(), json=self.body(alert))

    def retry_after(self, response: httpx.Response, now: datetime) -> float | None:
        """The `Retry-After` header, if any."""
        return _retry_after_header(response, now)

    def problem(self, response: httpx.Response) -> str:
        """Nothing: an unknown relay's answer might echo its own URL."""
        return ""


class TelegramChannel:
    """Sends plain-text messages through the Telegram Bot API (`sendMessage`)."""

    name = "telegram"

    def __init__(self, api_url: str, token: SecretStr, chat_id: str) -> None:
        self._api_url = api_url.rstrip("/")
        self._token = token
        self.chat_id = chat_id

    def message(self, alert: Outgoing) -> str:
        """The message text: `[kind] text`, then one `name: value` line per field."""
        lines = [f"[{alert.kind}] {alert.text}"]
        lines += [f"{name}: {value}" for name, value in alert.fields.items()]
        text = "\n".join(lines)
        if len(text) > TELEGRAM_MAX_TEXT - 96:
            text = text[: TELEGRAM_MAX_TEXT - 97] + "…"
        return text

    def body(self, alert: Outgoing) -> dict[str, Any]:
        """The `sendMessage` parameters: no parse_mode, so nothing in the text is markup."""
        return {
            "chat_id": self.chat_id,
            "text": self.message(alert),
            "disable_web_page_preview": True,
        }

    async def send(self, client: httpx.AsyncClient, alert: Outgoing) -> httpx.Response:
        """POST to `{api}/bot<token>/sendMessage`."""
        url = f"{self._api_url}/bot{self._token.get_secret_value()}/sendMessage"
        return await client.post(url, json=self.body(alert))

    def retry_after(self, response: httpx.Response, now: datetime) -> float | None:
        """`Retry-After`, or Telegram's own `parameters.retry_after` in the JSON body."""
        header = _retry_after_header(response, now)
        if header is not None:
            return header
        try:
            seconds = response.json()["parameters"]["retry_after"]
        except (ValueError, KeyError, TypeError):
            return None
        if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds >= 0:
            return float(seconds)
        return None

    def problem(self, response: httpx.Response) -> str:
        """Telegram's `description` (e.g. "Bad Request: chat not found"), token masked."""
        try:
            description = response.json()["description"]
        except (ValueError, KeyError, TypeError):
            return ""
        if not isinstance(description, str):
            return ""
        return description.replace(self._token.get_secret_value(), REDACTED)[:200]


def resolve_secret(value: SecretStr | None, path: Path | None, *, what: str) -> SecretStr | None:
    """The secret from the config/environment value, else from its file (0600), else None.

    Raises:
        AlertConfigError: the file is missing, empty or open to others (names the file).
    """
    if value is not None and value.get_secret_value().strip():
        return SecretStr(value.get_secret_value().strip())
    if path is None:
        return None
    try:
        return read_secret_file(path, what=what)
    except SecretFileError as exc:
        raise AlertConfigError(f"[alerts] {exc}") from None


def build_channels(settings: AlertSettings) -> list[Channel]:
    """The channels `[alerts]` configures (none: alerts are off).

    Loaded secrets are registered with the log redactor and masked in httpx's log lines.

    Raises:
        AlertConfigError: a secret file is unusable, Telegram is half configured, or the
            webhook URL is not http(s).
    """
    channels: list[Channel] = []
    url = resolve_secret(settings.webhook_url, settings.webhook_url_file, what="webhook URL")
    if url is not None:
        raw = url.get_secret_value()
        if not raw.startswith(("http://", "https://")):
            raise AlertConfigError("[alerts].webhook_url must start with http:// or https://")
        _protect(raw, url=True)
        channels.append(WebhookChannel(url))
    token = resolve_secret(
        settings.telegram_bot_token,
        settings.telegram_bot_token_file,
        what="telegram bot token",
    )
    chat_id = (settings.telegram_chat_id or "").strip()
    if token is not None and not chat_id:
        raise AlertConfigError("[alerts].telegram_chat_id is missing (a bot token is set)")
    if chat_id and token is None:
        raise AlertConfigError(
            "[alerts].telegram_bot_token (or telegram_bot_token_file) is missing (a chat id is set)"
        )
    if token is not None:
        _protect(token.get_secret_value())
        channels.append(TelegramChannel(settings.telegram_api_url, token, chat_id))
    return channels


class _MaskSecrets(logging.Filter):
    """Masks our secrets in records of httpx's own logger (it logs every request's URL).

    The CLI's log handler redacts registered secrets already; this also covers handlers
    that bypass it (pytest's caplog, a library user's own logging set-up).
    """

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the message with every secret masked; never drops the record."""
        if not self.secrets:
            return True
        message = record.getMessage()
        masked = message
        for secret in sorted(self.secrets, key=len, reverse=True):
            masked = masked.replace(secret, REDACTED)
        if masked != message:
            record.msg, record.args = masked, None
        return True


_HTTPX_MASK: Final = _MaskSecrets()


def _protect(secret: str, *, url: bool = False) -> None:
    """Register `secret` with the redactor and mask it (a URL also as httpx writes it)."""
    register_secret(secret)
    forms = {secret}
    if url:
        try:
            normalised = str(httpx.URL(secret))
        except (httpx.InvalidURL, TypeError, ValueError):
            normalised = secret
        forms.add(normalised)
        register_secret(normalised)
    _HTTPX_MASK.secrets.update(f for f in forms if len(f) >= 8)
    httpx_logger = logging.getLogger("httpx")
    if _HTTPX_MASK not in httpx_logger.filters:
        httpx_logger.addFilter(_HTTPX_MASK)
