"""A provider that answers with hostile bodies: endless, trickling, bombs, deeply nested.

A plain ASGI app (served by `tests.support.loopback.serve` on 127.0.0.1): each route is
given one `Answer`; the app counts requests and, per request, the body bytes it managed
to hand to the connection before the client hung up.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
MiB = 1024 * 1024


@dataclass
class Answer:
    """One scripted answer.

    body: sent whole (with Content-Length unless `announce` overrides it).
    stream_bytes: instead of `body`, this many filler bytes in `chunk`-sized pieces.
    trickle: instead of `body`, one byte every `trickle` seconds, forever.
    """

    status: int = 200
    body: bytes = b""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    stream_bytes: int = 0
    chunk: int = 64 * 1024
    trickle: float = 0.0
    announce: int | None = None


@dataclass
class Served:
    """What one request got: body bytes handed to the connection, and when it ended."""

    sent: int = 0
    started: float = 0.0
    ended: float = 0.0
    hung_up: bool = False


class HostileProvider:
    """The ASGI app: `answers["POST /swap"] = Answer(...)`; `calls` and `served` record."""

    def __init__(self) -> None:
        self.answers: dict[str, Answer] = {}
        self.calls: Counter[str] = Counter()
        self.served: list[Served] = []

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        route = f"{scope['method']} {scope['path']}"
        self.calls[route] += 1
        while (await receive()).get("more_body"):  # the request body, ignored
            pass
        answer = self.answers[route]
        served = Served(started=time.monotonic())
        self.served.append(served)
        hung_up = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            hung_up.set()

        watcher = asyncio.create_task(watch())
        try:
            await self._answer(answer, send, served, hung_up)
        finally:
            watcher.cancel()
            served.ended = time.monotonic()
            served.hung_up = hung_up.is_set()

    @staticmethod
    async def _answer(answer: Answer, send: Send, served: Served, hung_up: asyncio.Event) -> None:
        headers = [(b"content-type", b"application/json"), *answer.headers]
        streaming = answer.stream_bytes > 0 or answer.trickle > 0
        length = answer.announce if answer.announce is not None else len(answer.body)
        if answer.announce is not None or not streaming:
            headers.append((b"content-length", str(length).encode()))
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        if not streaming:
            await send({"type": "http.response.body", "body": answer.body})
            served.sent = len(answer.body)
            return
        while not hung_up.is_set():
            if answer.trickle:
                await asyncio.sleep(answer.trickle)
                piece = b" "
            else:
                if served.sent >= answer.stream_bytes:
                    break
                piece = b" " * min(answer.chunk, answer.stream_bytes - served.sent)
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            served.sent += len(piece)
            await asyncio.sleep(0)  # let the disconnect watcher run
        if not hung_up.is_set():
            await send({"type": "http.response.body", "body": b""})


def deep_json(depth: int) -> bytes:
    """`[[[…]]]` nested `depth` levels: valid JSON that Python's parser cannot recurse into."""
    return b"[" * depth + b"]" * depth


def gzip_bomb(size: int) -> bytes:
    """A gzip stream of `size` spaces (about a thousandth of `size` on the wire)."""
    return gzip.compress(b" " * size, compresslevel=9)
