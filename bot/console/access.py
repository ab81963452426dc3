"""Who may use the console: the bearer token, where it comes from, and failed-auth limits.

* `console_token(settings)` — the token of `[console]`: `BOT_CONSOLE__TOKEN`, else the
  0600 `token_file` (`bot.secrets`), else, on loopback only, a fresh random token for
  this run written 0600 to `console.token` beside the journal. Registered with the log
  redactor wherever it comes from.
* `require_safe_bind(host, token)` — anything but loopback without a configured token is
  refused at start (`ConsoleSetupError`: one line; the command line exits 2).
* `BearerAuth` — raw ASGI middleware: every request outside the schema pages needs
  `Authorization: Bearer <token>` (compared with `hmac.compare_digest`), else 401 and
  nothing else; a client address with too many failures in a window gets 429 until it
  clears (`FailedAuthLimit`, on an injected monotonic clock). Given `sessions`, the
  dashboard's session cookie passes too (a control with it also needs the CSRF header:
  else 403), and a browser without one asking for a page is sent to `/login`
  (`bot.console.session`).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import tempfile
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import SecretStr

from bot.config import Settings
from bot.console.hosts import is_loopback
from bot.console.session import (
    COOKIE,
    CSRF_HEADER,
    SESSION_OPEN_PATHS,
    Sessions,
    cookie_value,
    is_page_path,
)
from bot.logging import register_secret
from bot.ops.status_file import status_path
from bot.secrets import SecretFileError, read_secret_file

__all__ = [
    "GENERATED_TOKEN_FILE",
    "OPEN_PATHS",
    "BearerAuth",
    "ConsoleSetupError",
    "FailedAuthLimit",
    "console_token",
    "is_loopback",
    "require_safe_bind",
]

GENERATED_TOKEN_FILE: Final = "console.token"  # noqa: S105 - a file name, not a token
"""Where a loopback console without a configured token writes its per-run token."""
OPEN_PATHS: Final = frozenset({"/docs", "/docs/oauth2-redirect", "/openapi.json"})
"""The schema pages: they describe the API and hold no data, so they need no token."""
TOKEN_BYTES: Final = 32

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ConsoleSetupError(Exception):
    """The console cannot start as configured (one line naming the setting)."""


def require_safe_bind(host: str, configured_token: SecretStr | None) -> None:
    """Refuse to listen beyond loopback without a configured token.

    Raises:
        ConsoleSetupError: naming `[console].host` and the two ways to give a token.
    """
    if is_loopback(host) or configured_token is not None:
        return
    raise ConsoleSetupError(
        f"[console].host {host!r} is not loopback: set [console].token_file or "
        "BOT_CONSOLE__TOKEN (or keep 127.0.0.1 behind a reverse proxy)"
    )


MIN_TOKEN_CHARS: Final = 16
"""A configured token shorter than this is refused: guessable, and too short to redact."""


def console_token(settings: Settings) -> SecretStr:
    """The console's bearer token (see the module docstring); never logged.

    Raises:
        ConsoleSetupError: the token file is missing, empty or too open, or the host is
            not loopback and no token is configured.
    """
    section = settings.console
    configured = section.token
    if configured is not None and not configured.get_secret_value().strip():
        configured = None
    if configured is None and section.token_file is not None:
        try:
            configured = read_secret_file(section.token_file, what="console token")
        except SecretFileError as exc:
            raise ConsoleSetupError(f"[console].token_file: {exc}") from None
    if configured is not None and len(configured.get_secret_value().strip()) < MIN_TOKEN_CHARS:
        raise ConsoleSetupError(
            f"[console] token: shorter than {MIN_TOKEN_CHARS} characters (guessable; "
            "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'` makes one)"
        )
    require_safe_bind(section.host, configured)
    token = configured or _fresh_token(_generated_path(settings))
    register_secret(token.get_secret_value())
    return token


def _generated_path(settings: Settings) -> Path:
    """`console.token` in the folder of the status file (beside the SQLite journal)."""
    return status_path(settings.journal.url, settings.daemon.status_file).with_name(
        GENERATED_TOKEN_FILE
    )


def _fresh_token(path: Path) -> SecretStr:
    """A new random token, written to `path` with mode 0600 (replacing an older one)."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A fresh file of our own (0600, never through a symlink or into an open file).
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
        os.replace(temporary, path)
    except OSError as exc:
        raise ConsoleSetupError(
            f"cannot write the console token file {path}: {exc.strerror or exc}"
        ) from None
    return SecretStr(token)


@dataclass
class FailedAuthLimit:
    """At most `failures` failed authentications per client address per `window` seconds.

    `monotonic` is injected (tests step it). Addresses are forgotten once their window is
    empty; at most `max_clients` are tracked (the oldest is forgotten first).
    """

    monotonic: Callable[[], float]
    failures: int = 10
    window: float = 60.0
    max_clients: int = 10_000

    def __post_init__(self) -> None:
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, client: str) -> deque[float]:
        now = self.monotonic()
        times = self._seen.get(client)
        if times is None:
            return deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        if not times:
            del self._seen[client]
        return times

    def blocked_for(self, client: str) -> float:
        """Seconds until `client` may try again (0: now)."""
        times = self._recent(client)
        if len(times) < self.failures:
            return 0.0
        return max(0.0, self.window - (self.monotonic() - times[0]))

    def failed(self, client: str) -> None:
        """Count one failed authentication of `client`."""
        times = self._seen.setdefault(client, deque())
        self._seen.move_to_end(client)
        times.append(self.monotonic())
        while len(self._seen) > self.max_clients:
            self._seen.popitem(last=False)


class BearerAuth:
    """ASGI middleware: the bearer token or 401 (429 while an address is rate-limited)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        limit: FailedAuthLimit,
        sessions: Sessions | None = None,
    ) -> None:
        if not token:
            raise ValueError("the console token is empty")
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self.limit = limit
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an authorised request on; answer any other itself, reading nothing."""
        if scope["type"] == "websocket":  # the console has none: refused, token or not
            await send({"type": "websocket.close", "code": 1008})
            return
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if self.sessions is not None and path in SESSION_OPEN_PATHS:
            await self.app(scope, receive, send)  # the login form counts its own failures
            return
        client = _client_address(scope)
        wait = self.limit.blocked_for(client)
        if wait > 0:
            retry = str(max(1, int(wait + 0.999)))
            await _answer(send, 429, "too many failed attempts", [(b"retry-after", retry)])
            return
        given = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                given = value
                break
        if not hmac.compare_digest(given, self._expected):
            session = self._session(scope)
            if session == "good":
                await self.app(scope, receive, send)
                return
            if session == "no csrf":
                await _answer(send, 403, f"missing or wrong {CSRF_HEADER} header", [])
                return
            if self.sessions is not None and _is_page_visit(scope, path):
                await _answer(send, 303, "log in at /login", [(b"location", "/login")])
                return
            self.limit.failed(client)
            await _answer(send, 401, "unauthorized", [(b"www-authenticate", "Bearer")])
            return
        await self.app(scope, receive, send)

    def _session(self, scope: Scope) -> str:
        """What the session cookie says of this request.

        `good`: a valid cookie (and, for a control, its CSRF header); `no csrf`: a valid
        cookie on a control without the right header; `none`: no valid cookie.
        """
        headers = scope.get("headers", ())
        cookie = cookie_value(headers, COOKIE)
        if self.sessions is None or cookie is None or not self.sessions.valid(cookie):
            return "none"
        if scope.get("method", "GET") in ("GET", "HEAD"):
            return "good"
        csrf = next((v.decode("latin-1") for k, v in headers if k == CSRF_HEADER.encode()), None)
        return "good" if self.sessions.csrf_matches(cookie, csrf) else "no csrf"


def _is_page_visit(scope: Scope, path: str) -> bool:
    """A browser asking for a page without a session (not counted as a failed login)."""
    return scope.get("method", "GET") in ("GET", "HEAD") and is_page_path(path)


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def _answer(send: Send, status: int, detail: str, headers: list[tuple[bytes, str]]) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *((name, value.encode()) for name, value in headers),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
