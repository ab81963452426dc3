"""A fake Telegram Bot API (getUpdates, sendMessage, answerCallbackQuery) for loopback tests.

Served by uvicorn on 127.0.0.1 (`tests.support.loopback.serve`) in its own thread, so its
state is guarded by a lock. Updates are queued by the test (`say`, `tap`) and handed out
by `getUpdates` from the requested offset, after a short wait when there are none (a
shortened long poll). `mode` makes it fail: "down" answers 502, "flood" answers 429 with
`parameters.retry_after`, "hang" holds every request until the mode changes (or the
server stops). Only `/bot<token>/<method>` paths are served; others get 404.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import serve

TOKEN = "7312345678:AAE-control-secret-Zq9xw"


@dataclass
class FakeBotApi:
    """The fake's state: queued updates, what the bot sent, and how it answers."""

    token: str = TOKEN
    mode: str = "ok"
    updates: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    answered: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    polls: int = 0
    url: str = ""
    stopping: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 1
    _message_id: int = 100

    # --- what the test does ----------------------------------------------------------------

    def _push(self, update: dict[str, Any]) -> None:
        with self.lock:
            update["update_id"] = self._next_id
            self._next_id += 1
            self.updates.append(update)

    def say(
        self,
        chat_id: int,
        text: str,
        *,
        user_id: int = 42,
        username: str = "alice",
        chat_type: str = "private",
    ) -> None:
        """Queue a text message from `chat_id` (a "private" chat, or a "group"…)."""
        self._message_id += 1
        self._push(
            {
                "message": {
                    "message_id": self._message_id,
                    "date": 1_700_000_000,
                    "chat": {"id": chat_id, "type": chat_type},
                    "from": {"id": user_id, "is_bot": False, "username": username},
                    "text": text,
                }
            }
        )

    def tap(self, chat_id: int, data: str, *, user_id: int = 42, username: str = "alice") -> str:
        """Queue a button tap in `chat_id` carrying `data`; the tap's id."""
        tap_id = f"tap-{self._next_id}"
        self._push(
            {
                "callback_query": {
                    "id": tap_id,
                    "from": {"id": user_id, "is_bot": False, "username": username},
                    "message": {"message_id": 1, "chat": {"id": chat_id, "type": "private"}},
                    "data": data,
                }
            }
        )
        return tap_id

    def texts(self, chat_id: int | None = None) -> list[str]:
        """The texts sent (to one chat, or all)."""
        with self.lock:
            return [
                m["text"] for m in self.sent if chat_id is None or str(m["chat_id"]) == str(chat_id)
            ]

    def buttons(self) -> list[str]:
        """The callback data of every inline button sent, in order."""
        with self.lock:
            markups = [m["reply_markup"] for m in self.sent if "reply_markup" in m]
        return [b["callback_data"] for mk in markups for row in mk["inline_keyboard"] for b in row]

    def tap_answers(self) -> list[str]:
        """The texts of the answered taps."""
        with self.lock:
            return [a.get("text", "") for a in self.answered]

    # --- the ASGI app ----------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path: str = scope["path"]
        with self.lock:
            self.paths.append(path)
        while self.mode == "hang" and not self.stopping:
            await asyncio.sleep(0.02)
        status, answer = await self._answer(path, json.loads(body or b"{}"))
        data = json.dumps(answer).encode()
        head = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": data})

    async def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prefix = f"/bot{self.token}/"
        if not path.startswith(prefix):
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        if self.mode == "down":
            return 502, {"ok": False, "error_code": 502, "description": "Bad Gateway"}
        if self.mode == "flood":
            return 429, {
                "ok": False,
                "error_code": 429,
                "description": "Too Many Requests: retry after 1",
                "parameters": {"retry_after": 1},
            }
        method = path[len(prefix) :]
        if method == "getUpdates":
            return 200, {"ok": True, "result": await self._updates(body)}
        if method == "sendMessage":
            with self.lock:
                self.sent.append(body)
            return 200, {"ok": True, "result": {"message_id": len(self.sent)}}
        if method == "answerCallbackQuery":
            with self.lock:
                self.answered.append(body)
            return 200, {"ok": True, "result": True}
        return 404, {"ok": False, "error_code": 404, "description": "Not Found: method"}

    async def _updates(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(body.get("offset") or 0)
        with self.lock:
            self.polls += 1
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        deadline = time.monotonic() + min(float(body.get("timeout") or 0), 0.3)
        while True:
            with self.lock:
                ready = list(self.updates)
            if ready or time.monotonic() >= deadline or self.stopping:
                return ready
            await asyncio.sleep(0.02)


@contextmanager
def fake_bot_api() -> Iterator[FakeBotApi]:
    """A running fake on loopback (its `url` set)."""
    api = FakeBotApi()
    with serve(api) as url:
        api.url = url
        try:
            yield api
        finally:
            api.stopping = True


async def until(done: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait (letting the event loop run) until `done()`; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)
