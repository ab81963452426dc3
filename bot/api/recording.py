"""Recording every provider answer to a folder (`[api].record_answers_dir`), safely.

`RecordingTransport` wraps the client's httpx transport: each response's bytes are copied
as the client reads them (nothing is read ahead, the client's own size bounds still
apply), and when the client closes the response the copy goes to an `AnswerRecorder`.
The recorder's thread turns it into one JSON line and appends it (`bot.api.answer_files`):

* time (the injected clock's `now`, when the headers came), mode, method, path (below the base
  URL), query, status, the headers that matter (`KEPT_HEADERS`, rate-limit headers);
* the body as JSON with its exact numbers (`body`), or its first characters when it is no
  JSON (`body_text`); a body over `max_body_bytes` keeps its first records when it is a
  list (`body_truncated`), else only why it is missing (`body_omitted`).

Nothing secret is written. The wallet address, in every form (long, short, any case, with
or without `0x`), becomes `<wallet>`: the configured wallets and those the bot itself sends
(`toWalletAddress`…) are learned; any value under a `…wallet…` key is replaced whatever it
says. The API key, credential-like query values, every secret registered for the logs and
key-shaped text become `[REDACTED]` (`bot.logging`). Request headers and bodies are not
recorded. The last pass runs over the finished line, so no field can slip through.

Recording never blocks or breaks trading: the event loop only copies bytes into a bounded
queue (an answer that finds the queue full is dropped and counted); formatting and disk
writes happen on the recorder's thread; an answer that cannot be formatted is skipped; a
disk error (full, read-only, folder gone) stops recording. Each is logged once.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

import httpx
from pydantic import SecretStr

from bot.api.answer_files import AnswerFiles, dumps_exact
from bot.aptos.address import Address, AddressError, looks_like_address
from bot.bounded_body import BodyRefused, read_limited
from bot.config import ApiSettings
from bot.logging import REDACTED, Redactor, get_logger, redact, url_secrets
from bot.money import loads_exact

__all__ = [
    "KEPT_HEADERS",
    "RECORD_VERSION",
    "WALLET_PLACEHOLDER",
    "AnswerRecorder",
    "Exchange",
    "RecordingTransport",
    "Scrubber",
    "build_record",
    "recording_transport",
]

RECORD_VERSION: Final = 1
WALLET_PLACEHOLDER: Final = "<wallet>"
KEPT_HEADERS: Final = ("content-type", "content-encoding", "content-length", "retry-after")
_RATE_HEADER: Final = re.compile(r"(?i)^(x-)?rate-?limit")
_WALLET_KEY: Final = re.compile(r"(?i)wallet")
_SECRET_PARAMS: Final = frozenset(
    {"apikey", "xapikey", "key", "token", "accesstoken", "secret", "password", "auth"}
    | {"authorization", "signature", "sig"}
)
_TEXT_HEAD: Final = 2000
_QUEUE_SIZE: Final = 64
_QUEUED_BODIES: Final = 4
_LEARNED_MIN: Final = 1 << 32
"""A wallet learned from a request is a real account address, never `0x1`-like."""

Mode = Literal["live", "paper"]


@dataclass(frozen=True)
class Exchange:
    """One answer as the transport saw it, handed to the recorder's thread."""

    time: str
    method: str
    path: str
    query: list[tuple[str, str]]
    request_body: bytes
    status: int
    headers: list[tuple[str, str]]
    raw: bytes
    complete: bool
    overflow: bool


class Scrubber:
    """Replaces wallet addresses with `<wallet>` and secrets with `[REDACTED]` (see module)."""

    def __init__(self, wallets: Iterable[str] = (), secrets: Iterable[str] = ()) -> None:
        self._redactor = Redactor(secrets)
        self._wallets: set[int] = set()
        self._pattern: re.Pattern[str] | None = None
        for wallet in wallets:
            self.learn(wallet, minimum=16)

    def learn(self, text: object, *, minimum: int = _LEARNED_MIN) -> None:
        """Remember `text` as a wallet address (in all its forms), if it is one."""
        if not looks_like_address(text):
            return
        try:
            value = int(str(Address.parse(str(text))).removeprefix("0x"), 16)
        except AddressError:
            return
        if value < minimum or value in self._wallets:
            return
        self._wallets.add(value)
        shorts = "|".join(f"{v:x}" for v in self._wallets)
        longs = "|".join(f"{v:064x}" for v in self._wallets)
        self._pattern = re.compile(
            rf"(?i)(?<![0-9a-z])(?:0x0*(?:{shorts})|(?:{longs}))(?![0-9a-f])"
        )

    def learn_request(self, query: list[tuple[str, str]], body: bytes) -> None:
        """Learn the wallets the bot itself sent (wallet-named query or JSON body fields)."""
        for key, value in query:
            if _WALLET_KEY.search(key):
                self.learn(value)
        if body:
            try:
                data = loads_exact(body)
            except ValueError:
                return
            for value in _wallet_values(data):
                self.learn(value)

    def text(self, text: str) -> str:
        """`text` with every known wallet and every secret replaced."""
        if self._pattern is not None:
            text = self._pattern.sub(WALLET_PLACEHOLDER, text)
        return redact(self._redactor.redact(text))

    def param(self, name: str, value: str) -> str:
        """A query value fit to record: wallet-named → `<wallet>`, credential-named → hidden."""
        if _WALLET_KEY.search(name):
            return WALLET_PLACEHOLDER
        if re.sub(r"[^a-z]", "", name.lower()) in _SECRET_PARAMS:
            return REDACTED
        return self.text(value)

    def value(self, data: Any) -> Any:
        """A JSON value with its texts and keys scrubbed and wallet-named strings replaced."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {
                self.text(str(k)): (
                    WALLET_PLACEHOLDER
                    if isinstance(v, str) and _WALLET_KEY.search(str(k))
                    else self.value(v)
                )
                for k, v in data.items()
            }
        if isinstance(data, list):
            return [self.value(v) for v in data]
        return data


def _wallet_values(data: Any) -> list[str]:
    found: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str) and _WALLET_KEY.search(str(key)):
                    found.append(value)
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def build_record(
    exchange: Exchange, scrub: Scrubber, *, mode: Mode, max_body_bytes: int, max_raw_bytes: int
) -> dict[str, Any]:
    """The record of one answer (module docstring), scrubbed, its body bounded."""
    scrub.learn_request(exchange.query, exchange.request_body)
    headers = {
        name.lower(): scrub.text(value)
        for name, value in exchange.headers
        if name.lower() in KEPT_HEADERS or _RATE_HEADER.match(name)
    }
    record: dict[str, Any] = {
        "v": RECORD_VERSION,
        "time": exchange.time,
        "mode": mode,
        "method": exchange.method,
        "path": scrub.text(exchange.path),
        "query": [[scrub.text(k), scrub.param(k, v)] for k, v in exchange.query],
        "status": exchange.status,
        "headers": headers,
    }
    content, omitted = _decoded(exchange, max_raw_bytes)
    if content is None:
        record["body_omitted"] = omitted
        return record
    record["body_bytes"] = len(content)
    try:
        body = scrub.value(loads_exact(content))
    except ValueError:
        text = content[:_TEXT_HEAD].decode("utf-8", errors="replace")
        record["body_text"] = scrub.text(text)
        return record
    record.update(_bounded_body(body, max_body_bytes))
    return record


def _decoded(exchange: Exchange, limit: int) -> tuple[bytes | None, str]:
    """The body as the client decodes it (`read_limited`), or why it is not kept."""
    if exchange.overflow:
        return None, f"over {limit} bytes on the wire"
    if not exchange.complete:
        return None, "the client stopped reading it (too large, or the connection failed)"
    response = httpx.Response(
        exchange.status, headers=exchange.headers, stream=httpx.ByteStream(exchange.raw)
    )
    try:
        return asyncio.run(read_limited(response, limit)), ""
    except BodyRefused as exc:
        return None, str(exc)


def _bounded_body(body: Any, limit: int) -> dict[str, Any]:
    """`{"body": …}` within `limit` bytes of JSON, a long list cut to its first records."""
    size = len(dumps_exact(body))
    if size <= limit:
        return {"body": body}
    key, items = _record_list(body)
    kept: list[Any] = []
    if items is not None:
        used = 2 if key is None else len(dumps_exact({**body, key: []}))
        for item in items:
            used += len(dumps_exact(item)) + 1
            if used > limit:
                break
            kept.append(item)
    if not kept:  # no list, or not even one record fits: a part would mislead
        return {"body_omitted": f"{size} bytes of JSON, over the limit of {limit}"}
    trimmed: Any = kept if key is None else {**body, key: kept}
    cut = {"bytes": size, "records_kept": len(kept), "records_total": len(items or ())}
    return {"body": trimmed, "body_truncated": cut}


def _record_list(body: Any) -> tuple[str | None, list[Any] | None]:
    """The list a body holds its records in: itself, or its longest list field."""
    if isinstance(body, list):
        return None, body
    if isinstance(body, dict):
        lists = [(len(v), k) for k, v in body.items() if isinstance(v, list)]
        if lists:
            key = max(lists)[1]
            return key, body[key]
    return None, None


class AnswerRecorder:
    """Formats and writes answers on its own thread; never raises to the caller."""

    def __init__(
        self,
        files: AnswerFiles,
        scrub: Scrubber,
        *,
        mode: Mode,
        max_body_bytes: int,
        max_raw_bytes: int,
    ) -> None:
        self.files = files
        self.max_raw_bytes = max_raw_bytes
        self.dropped = 0
        self.written = 0
        self.enabled = True
        self._scrub = scrub
        self._mode: Mode = mode
        self._max_body = max_body_bytes
        self._queue: queue.Queue[Exchange | None] = queue.Queue(_QUEUE_SIZE)
        self._queued_bytes = 0
        self._lock = threading.Lock()
        self._told: set[str] = set()
        self._log = get_logger("api")
        self._thread = threading.Thread(target=self._run, name="answer-recorder", daemon=True)
        self._thread.start()
        if files.opened_mode_warning:
            self.note_once(
                "warning", "api.recording_folder_open", problem=files.opened_mode_warning
            )

    def submit(self, exchange: Exchange) -> None:
        """Queue one answer; when the queue is full, drop it (counted, logged once).

        Full: `_QUEUE_SIZE` answers, or `_QUEUED_BODIES` times the largest body in bytes.
        """
        if not self.enabled:
            return
        with self._lock:
            room = self._queued_bytes + len(exchange.raw) <= _QUEUED_BODIES * self.max_raw_bytes
            if room:
                self._queued_bytes += len(exchange.raw)
        try:
            if not room:
                raise queue.Full
            self._queue.put_nowait(exchange)
        except queue.Full:
            if room:
                self._release(exchange)
            self.dropped += 1
            self.note_once("warning", "api.recording_dropped", reason="the recorder is behind")

    def _release(self, exchange: Exchange) -> None:
        with self._lock:
            self._queued_bytes -= len(exchange.raw)

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (within `timeout` seconds), then close the file."""
        if self._thread.is_alive():
            with contextlib.suppress(queue.Full):
                self._queue.put(None, timeout=timeout)
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            exchange = self._queue.get()
            if exchange is None:
                break
            self._release(exchange)
            if self.enabled:
                self._write(exchange)
        with contextlib.suppress(OSError):
            self.files.close()

    def _write(self, exchange: Exchange) -> None:
        try:
            record = build_record(
                exchange,
                self._scrub,
                mode=self._mode,
                max_body_bytes=self._max_body,
                max_raw_bytes=self.max_raw_bytes,
            )
            line = self._scrub.text(dumps_exact(record)) + "\n"
        except Exception as exc:  # one odd answer must not stop the recording
            self.note_once("warning", f"skip:{type(exc).__name__}", error=type(exc).__name__)
            return
        try:
            day = exchange.time[:10].replace("-", "")
            self.files.write(line.encode("ascii", errors="backslashreplace"), day)
        except OSError as exc:  # a full disk, a read-only or vanished folder: stop
            self.enabled = False
            self.note_once("error", "api.recording_disabled", error=f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(OSError):
                self.files.close()
            return
        self.written += 1

    def note_once(self, level: str, key: str, **fields: Any) -> None:
        """Log `key` at `level` the first time only (`api.…` keys name the event)."""
        if key in self._told:
            return
        self._told.add(key)
        event = key if key.startswith("api.") else "api.recording_skipped"
        getattr(self._log, level)(event, folder=str(self.files.folder), **fields)


class _TeeStream(httpx.AsyncByteStream):
    """The response's byte stream, copied (up to a limit) as the client reads it."""

    def __init__(
        self, inner: httpx.AsyncByteStream, limit: int, done: Callable[[bytes, bool, bool], None]
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._done = done
        self._parts: list[bytes] = []
        self._size = 0
        self._overflow = False
        self._complete = False
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            if not self._overflow:
                self._size += len(chunk)
                if self._size > self._limit:
                    self._overflow = True
                    self._parts.clear()
                else:
                    self._parts.append(chunk)
            yield chunk
        self._complete = True

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            if not self._closed:
                self._closed = True
                self._done(b"".join(self._parts), self._complete, self._overflow)


class RecordingTransport(httpx.AsyncBaseTransport):
    """An httpx transport that hands every answer of `inner` to an `AnswerRecorder`."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        recorder: AnswerRecorder,
        now: Callable[[], datetime],
        base_path: str,
    ) -> None:
        self._inner = inner
        self._recorder = recorder
        self._now = now
        self._base_path = base_path.rstrip("/")

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send through `inner`; the answer's stream is copied for the recorder."""
        response = await self._inner.handle_async_request(request)
        if not self._recorder.enabled or not isinstance(response.stream, httpx.AsyncByteStream):
            return response
        try:
            self._tee(request, response)
        except Exception as exc:  # recording is never worth a failed request
            self._recorder.note_once("warning", f"skip:{type(exc).__name__}", error=repr(exc))
        return response

    def _tee(self, request: httpx.Request, response: httpx.Response) -> None:
        path = request.url.path
        if self._base_path and path.startswith(self._base_path + "/"):
            path = path[len(self._base_path) :]
        try:
            sent = request.content
        except httpx.RequestNotRead:
            sent = b""
        moment = self._now().astimezone(UTC).isoformat().replace("+00:00", "Z")
        query = list(request.url.params.multi_items())
        headers = list(response.headers.multi_items())
        status = response.status_code

        def done(raw: bytes, complete: bool, overflow: bool) -> None:
            try:
                answer = (moment, request.method, path, query, sent, status, headers)
                self._recorder.submit(Exchange(*answer, raw, complete, overflow))
            except Exception as exc:  # never into the client's close
                self._recorder.note_once("warning", f"skip:{type(exc).__name__}", error=repr(exc))

        try:  # a ready-made answer (an in-process transport's) is in memory already
            held = response.content
        except httpx.ResponseNotRead:
            assert isinstance(response.stream, httpx.AsyncByteStream)
            response.stream = _TeeStream(response.stream, self._recorder.max_raw_bytes, done)
        else:  # and decoded: its encoding no longer applies
            headers[:] = [(k, v) for k, v in headers if k.lower() != "content-encoding"]
            done(held, True, len(held) > self._recorder.max_raw_bytes)

    async def aclose(self) -> None:
        """Close `inner`, then write what the recorder still holds (off the event loop)."""
        try:
            await self._inner.aclose()
        finally:
            await asyncio.to_thread(self._recorder.close)


def recording_transport(
    settings: ApiSettings,
    inner: httpx.AsyncBaseTransport | None,
    *,
    now: Callable[[], datetime],
    mode: Mode,
    wallets: Iterable[str] = (),
    api_key: SecretStr | None = None,
) -> httpx.AsyncBaseTransport | None:
    """`inner` wrapped to record into `settings.record_answers_dir`; `inner` when it is unset.

    `inner` None means the transport httpx would make itself, with the proxy that the
    environment names for the provider (`HTTPS_PROXY`, `NO_PROXY`…). A folder that
    cannot be prepared is logged and nothing is recorded: the bot runs on.
    """
    folder = settings.record_answers_dir
    if folder is None:
        return inner
    try:
        files = AnswerFiles(
            Path(folder),
            max_bytes=settings.record_answers_max_mb * 1024 * 1024,
            max_files=settings.record_answers_max_files,
        )
    except OSError as exc:
        get_logger("api").error(
            "api.recording_disabled", folder=str(folder), error=f"{type(exc).__name__}: {exc}"
        )
        return inner
    secrets = url_secrets(settings.base_url)
    if api_key is not None:
        secrets.append(api_key.get_secret_value())
    recorder = AnswerRecorder(
        files,
        Scrubber(wallets, secrets),
        mode=mode,
        max_body_bytes=settings.record_answers_max_body_kb * 1024,
        max_raw_bytes=settings.max_response_bytes,
    )
    base_path = httpx.URL(settings.base_url).path
    return RecordingTransport(
        inner or _default_transport(settings.base_url), recorder, now, base_path
    )


def _default_transport(base_url: str) -> httpx.AsyncBaseTransport:
    """What `httpx.AsyncClient` makes when given no transport, environment proxy included."""
    import urllib.request

    url = httpx.URL(base_url)
    proxy = None
    if not urllib.request.proxy_bypass(url.host):
        proxy = urllib.request.getproxies().get(url.scheme)
    return httpx.AsyncHTTPTransport(proxy=proxy)
