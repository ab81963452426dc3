"""The dashboard's browser session: a signed cookie and a CSRF value, both keyed by the token.

A browser logs in once with the console token (the login form, `bot.console.pages`); it
gets a session cookie and never holds the token itself:

* the cookie `console_session` is `ISSUED.SIGNATURE`: when it was issued (seconds since
  the epoch, on the console's clock) and an HMAC-SHA256 of that time under a key derived
  from the token. It is HttpOnly, SameSite=Strict, and Secure unless the browser reached
  the console on a loopback name (`secure_cookie`). It is good for `SESSION_SECONDS`;
  changing the token ends every session at once. The server keeps no session state.
* a control (any method but GET/HEAD) sent with the cookie also needs the header
  `X-Console-CSRF` carrying `csrf_for(cookie)`: an HMAC of the cookie the page holds in a
  `<meta>` tag and its script sends. A form or a link from another site cannot add it.

The bearer header keeps working for scripts, unchanged.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Final

from bot.console.hosts import is_loopback

__all__ = [
    "COOKIE",
    "CSRF_HEADER",
    "PAGE_PREFIXES",
    "SESSION_OPEN_PATHS",
    "SESSION_SECONDS",
    "Sessions",
    "cookie_value",
    "is_page_path",
    "secure_cookie",
]

COOKIE: Final = "console_session"
CSRF_HEADER: Final = "x-console-csrf"
SESSION_SECONDS: Final = 7 * 24 * 3600
"""How long a login lasts (a week: a dashboard left open over a weekend stays logged in)."""
SKEW_SECONDS: Final = 300
"""A cookie issued up to this far in the future is still good (a clock stepped back)."""
SESSION_OPEN_PATHS: Final = frozenset({"/login", "/logout"})
"""The login form and logging out need no session (each checks what it needs itself)."""
PAGE_PREFIXES: Final = ("/strategies/", "/orders/", "/static/", "/reports")
"""Paths of the dashboard (with `/`): without a session a browser is sent to `/login`."""
_KEY_LABEL: Final = b"aptos-dca-bot console session v1"


def is_page_path(path: str) -> bool:
    """True for the dashboard's pages and assets (not the API, not an unknown path)."""
    return path == "/" or path.startswith(PAGE_PREFIXES)


def cookie_value(headers: Iterable[tuple[bytes, bytes]], name: str = COOKIE) -> str | None:
    """The value of cookie `name` in raw ASGI request headers, or None."""
    for key, value in headers:
        if key != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            cookie, _, found = part.strip().partition("=")
            if cookie == name:
                return found.strip().strip('"')
    return None


def secure_cookie(host_header: str | None) -> bool:
    """Whether the cookie must be `Secure`: always, unless the browser used a loopback name.

    Behind a reverse proxy with TLS the browser names the public host (Secure, sent over
    https only); `http://127.0.0.1:8787` or `http://localhost:8787` on the machine itself
    works without TLS.
    """
    if not host_header:
        return True
    host = host_header.strip()
    if host.startswith("["):
        name = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        name = host.partition(":")[0]
    else:
        name = host
    return not is_loopback(name)


class Sessions:
    """Issues and checks session cookies and CSRF values under a key derived from `token`.

    `now` is the console's clock (`Clock.now`): when a cookie was issued and whether it
    is still good.
    """

    def __init__(self, token: str, now: Callable[[], datetime]) -> None:
        if not token:
            raise ValueError("the console token is empty")
        self._token = token.encode()
        self._key = hmac.new(self._token, _KEY_LABEL, hashlib.sha256).digest()
        self._now = now

    def token_matches(self, given: str) -> bool:
        """Whether `given` is the console token (constant time)."""
        return hmac.compare_digest(given.strip().encode(), self._token)

    def issue(self) -> str:
        """A new cookie value, issued now."""
        issued = str(int(self._now().timestamp()))
        return f"{issued}.{self._sign(b'session:' + issued.encode())}"

    def valid(self, cookie: str | None) -> bool:
        """Whether `cookie` was issued by this token and is still good."""
        if not cookie:
            return False
        issued, dot, signature = cookie.partition(".")
        if not dot or not issued.isdigit() or len(issued) > 12:
            return False
        expected = self._sign(b"session:" + issued.encode())
        if not hmac.compare_digest(signature.encode(), expected.encode()):
            return False
        age = self._now().timestamp() - int(issued)
        return -SKEW_SECONDS <= age <= SESSION_SECONDS

    def csrf_for(self, cookie: str) -> str:
        """The CSRF value that goes with `cookie` (put in the page, sent back in a header)."""
        return self._sign(b"csrf:" + cookie.encode())

    def csrf_matches(self, cookie: str, given: str | None) -> bool:
        """Whether `given` is the CSRF value of `cookie` (constant time)."""
        if not given:
            return False
        return hmac.compare_digest(given.encode(), self.csrf_for(cookie).encode())

    def _sign(self, message: bytes) -> str:
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()
