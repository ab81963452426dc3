"""The few Bot API calls the Telegram control makes, with the token kept out of sight.

The token sits in every request's URL path (`/bot<token>/<method>`): it is registered with
the log redactor, and every error message made here is masked before it is raised or
logged. Answers are untrusted: anything but `{"ok": true, "result": ...}` is an error,
with the `retry_after` Telegram asked for when it gave one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import SecretStr

from bot.logging import REDACTED, get_logger, redact, register_secret
from bot.ops.telegram_answers import split_message

__all__ = ["BotApi", "TelegramApiError"]

_LONGEST_RETRY_AFTER = 30
"""A `sendMessage` asked to wait longer than this (seconds) is given up (logged)."""


class TelegramApiError(Exception):
    """The Bot API refused or could not be reached (message safe to log)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BotApi:
    """`getUpdates`, `sendMessage` and `answerCallbackQuery` of one bot."""

    def __init__(self, api_url: str, token: SecretStr, *, request_timeout: float = 15.0) -> None:
        self._token = token.get_secret_value()
        register_secret(self._token)
        self._base = f"{api_url.rstrip('/')}/bot{self._token}/"
        self.request_timeout = request_timeout
        """Seconds one `sendMessage`/`answerCallbackQuery` may take."""
        self._log = get_logger("telegram")

    def safe(self, text: str) -> str:
        """`text` with the token (and every registered secret) masked."""
        return redact(text.replace(self._token, REDACTED))[:300]

    async def call(
        self, client: httpx.AsyncClient, method: str, body: Mapping[str, Any], timeout: float
    ) -> Any:
        """POST one Bot API method; its `result`.

        Raises:
            TelegramApiError: transport failure, a non-JSON answer or `ok: false` (with the
                `retry_after` Telegram asked for, if any); the message never holds the token.
        """
        try:
            response = await client.post(self._base + method, json=dict(body), timeout=timeout)
        except httpx.HTTPError as exc:
            error = f"{method}: {type(exc).__name__}: {self.safe(str(exc))}"
            raise TelegramApiError(error) from None
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise TelegramApiError(f"{method}: HTTP {response.status_code}, not a Bot API answer")
        if answer.get("ok") is True:
            return answer.get("result")
        parameters = answer.get("parameters")
        wait = parameters.get("retry_after") if isinstance(parameters, dict) else None
        retry_after = float(wait) if isinstance(wait, int) and wait >= 0 else None
        description = answer.get("description")
        said = self.safe(description) if isinstance(description, str) else ""
        raise TelegramApiError(
            f"{method}: HTTP {response.status_code} {said}".rstrip(), retry_after
        )

    async def send(
        self,
        client: httpx.AsyncClient,
        chat_id: str,
        text: str,
        markup: Mapping[str, Any] | None = None,
    ) -> None:
        """Send `text` (split under the limit; `markup` on the last part); never raises."""
        parts = split_message(text)
        for number, part in enumerate(parts, start=1):
            body: dict[str, Any] = {"chat_id": chat_id, "text": part}
            body["disable_web_page_preview"] = True
            if markup is not None and number == len(parts):
                body["reply_markup"] = dict(markup)
            for attempt in (1, 2):
                try:
                    await self.call(client, "sendMessage", body, self.request_timeout)
                    break
                except TelegramApiError as exc:
                    if (
                        attempt == 1
                        and exc.retry_after is not None
                        and exc.retry_after <= _LONGEST_RETRY_AFTER
                    ):
                        await asyncio.sleep(exc.retry_after)
                        continue
                    self._log.warning("telegram.send_failed", chat_id=chat_id, error=str(exc))
                    return

    async def answer_tap(self, client: httpx.AsyncClient, tap_id: str, text: str) -> None:
        """Answer a button tap (the toast the tapper sees); never raises."""
        try:
            body = {"callback_query_id": tap_id, "text": text}
            await self.call(client, "answerCallbackQuery", body, self.request_timeout)
        except TelegramApiError as exc:
            self._log.warning("telegram.answer_failed", error=str(exc))
