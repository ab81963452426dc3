"""The dashboard: server-rendered page shells, the login form, and the vendored assets.

Each page is a small HTML shell (`html.escape` on everything it names) that loads our own
`static/console.js` and `static/console.css` (no build step, no CDN). The script fetches
the API's JSON with the session cookie and draws the page (tables, the price chart in
inline SVG), then polls for changes (docs/console.md, "The dashboard").

* `/` — the overview: wallet value (and its chart over time) and P&L per strategy, open
  orders, recent fills, alerts, the daemon's state, the remote bots.
* `/strategies/{name}` — one strategy: pause / resume, P&L, average entry against the
  price, its orders and fills.
* `/orders/{order_id}?kind=` — one order: transitions, fills, transaction hashes, cancel.
* `/reports` — the HTML reports under `[console].reports_dir` (`bot.console.reports`).
* `/login` (GET: the form; POST: the token, once) and `/logout` (POST).

Pages and assets need a session (or the bearer token): `access.BearerAuth` sends a
browser without one to `/login`. A failed login counts toward the same failed-auth limit
as a wrong bearer token. The token is never put in a page or a URL.
"""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from typing import Final
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from bot import __version__
from bot.console.access import FailedAuthLimit
from bot.console.core import client_address
from bot.console.session import COOKIE, SESSION_SECONDS, Sessions, secure_cookie
from bot.domain import LIVE_ORDER_STATUSES

__all__ = ["PAGE_HEADERS", "STATIC_FILES", "page_router"]

STATIC_FILES: Final = {
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
}
"""The only files `/static/` serves, with their content types (nothing else is reachable)."""
MAX_LOGIN_BYTES: Final = 4096
_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_LOGIN_CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
PAGE_HEADERS: Final = {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
_LOGIN_STYLE: Final = (
    "body{font:16px system-ui,sans-serif;margin:0;display:flex;min-height:100vh;"
    "align-items:center;justify-content:center;background:#f4f5f7;color:#1d2330}"
    "form{background:#fff;padding:1.5rem;border-radius:8px;box-shadow:0 1px 4px #0002;"
    "width:min(22rem,90vw)}input,button{font:inherit;width:100%;box-sizing:border-box;"
    "padding:.6rem;margin:.4rem 0}button{background:#1f5fbf;color:#fff;border:0;"
    "border-radius:4px}.error{color:#b00020}"
)


@cache
def _asset(name: str) -> bytes:
    """The bytes of one vendored asset (read once from the package)."""
    return resources.files("bot.console").joinpath("static", name).read_bytes()


def _page(request: Request, sessions: Sessions, title: str, body: str, **data: str) -> Response:
    """A dashboard page: the shell around `body`, with its data attributes and CSRF value."""
    cookie = request.cookies.get(COOKIE)
    csrf = sessions.csrf_for(cookie) if cookie and sessions.valid(cookie) else ""
    attributes = "".join(
        f' data-{key.replace("_", "-")}="{html.escape(value)}"' for key, value in data.items()
    )
    text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{html.escape(csrf)}">
<title>{html.escape(title)} · aptos-dca-bot</title>
<link rel="stylesheet" href="/static/console.css">
<script src="/static/console.js" defer></script>
</head><body{attributes}>
<header><nav><a href="/" class="brand">aptos-dca-bot</a>
<a href="/reports">Reports</a>
<span id="daemon" class="muted"></span>
<form method="post" action="/logout"><button type="submit" class="link">Log out</button></form>
</nav></header>
<main><h1>{html.escape(title)}</h1>
<p id="problem" class="error" hidden></p>
{body}
</main>
<footer class="muted">console {html.escape(__version__)} · <span id="updated">loading…</span>
</footer>
</body></html>
"""
    return HTMLResponse(text, headers={**PAGE_HEADERS, "content-security-policy": _CSP})


def _section(ident: str, title: str, extra: str = "") -> str:
    return f'<section id="{ident}"><h2>{title}</h2>{extra}<div class="body">…</div></section>'


def _login_page(problem: str = "", status: int = 200) -> Response:
    shown = f'<p class="error">{html.escape(problem)}</p>' if problem else ""
    text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Log in · aptos-dca-bot</title><style>{_LOGIN_STYLE}</style></head><body>
<form method="post" action="/login"><h1>aptos-dca-bot</h1>
<label for="token">Console token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
{shown}<button type="submit">Log in</button></form></body></html>
"""
    headers = {**PAGE_HEADERS, "content-security-policy": _LOGIN_CSP}
    return HTMLResponse(text, status_code=status, headers=headers)


def page_router(sessions: Sessions, limit: FailedAuthLimit, poll_seconds: float) -> APIRouter:
    """The dashboard's routes (left out of the OpenAPI schema)."""
    router = APIRouter(include_in_schema=False)
    poll = str(max(0.2, poll_seconds))
    live = ",".join(str(s) for s in LIVE_ORDER_STATUSES)

    @router.get("/login")
    async def login_form(request: Request) -> Response:
        """The login form (already logged in: the overview)."""
        if sessions.valid(request.cookies.get(COOKIE)):
            return RedirectResponse("/", status_code=303)
        return _login_page()

    @router.post("/login")
    async def login(request: Request) -> Response:
        """Check the token once; a session cookie and the overview, or the form again."""
        client = client_address(request)
        wait = limit.blocked_for(client)
        if wait > 0:
            answer = _login_page("Too many failed attempts: try again later.", 429)
            answer.headers["retry-after"] = str(max(1, int(wait + 0.999)))
            return answer
        given = ""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) <= MAX_LOGIN_BYTES:
            body = await request.body()
            if len(body) <= MAX_LOGIN_BYTES:
                given = parse_qs(body.decode("utf-8", "replace")).get("token", [""])[0]
        if not given or not sessions.token_matches(given):
            limit.failed(client)
            return _login_page("Wrong token.", 401)
        answer = RedirectResponse("/", status_code=303)
        answer.set_cookie(
            COOKIE,
            sessions.issue(),
            max_age=SESSION_SECONDS,
            path="/",
            httponly=True,
            samesite="strict",
            secure=secure_cookie(request.headers.get("host")),
        )
        return answer

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        """Forget the session cookie in this browser; back to the login form."""
        answer = RedirectResponse("/login", status_code=303)
        answer.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return answer

    @router.get("/")
    async def overview(request: Request) -> Response:
        """The overview."""
        body = (
            _section("wallet", "Wallet")
            + _section("value", "Wallet value over time")
            + _section("strategies", "Strategies")
            + _section("open-orders", "Open orders")
            + _section("fills", "Recent fills")
            + _section("alerts", "Alerts")
            + _section("remotes", "Other bots")
        )
        return _page(request, sessions, "Overview", body, page="overview", poll=poll, live=live)

    @router.get("/strategies/{name}")
    async def strategy(request: Request, name: str) -> Response:
        """One strategy's page."""
        buttons = (
            '<div class="actions"><button id="pause" type="button">Pause</button>'
            '<button id="resume" type="button">Resume</button>'
            '<span id="command" class="muted"></span></div>'
        )
        body = (
            _section("summary", "State", buttons)
            + _section("chart", "Average entry and price")
            + _section("orders", "Orders")
            + _section("fills", "Recent fills")
        )
        return _page(
            request, sessions, name, body, page="strategy", strategy=name, poll=poll, live=live
        )

    @router.get("/orders/{order_id}")
    async def order(request: Request, order_id: str, kind: str = "") -> Response:
        """One order's page (`kind`: dca or limit, when both have the id)."""
        shown = kind if kind in ("dca", "limit") else ""
        buttons = (
            '<div class="actions"><button id="cancel" type="button" hidden>Cancel order'
            '</button><span id="command" class="muted"></span></div>'
        )
        body = (
            _section("summary", "Order", buttons)
            + _section("transitions", "Transitions")
            + _section("fills", "Fills")
            + _section("transactions", "Transactions")
        )
        title = f"Order {order_id[:10]}…" if len(order_id) > 12 else f"Order {order_id}"
        return _page(
            request,
            sessions,
            title,
            body,
            page="order",
            order=order_id,
            kind=shown,
            poll=poll,
            live=live,
        )

    @router.get("/reports")
    async def reports(request: Request) -> Response:
        """The reports the user made (`[console].reports_dir`), each opened read-only."""
        body = _section("reports", "Reports", '<p class="muted" id="reports-folder"></p>')
        return _page(request, sessions, "Reports", body, page="reports", poll=poll, live=live)

    @router.get("/static/{name}")
    async def static(name: str) -> Response:
        """One of the vendored assets, by its exact name (anything else: 404)."""
        kind = STATIC_FILES.get(name)
        if kind is None:
            return Response(b'{"detail": "not found"}', 404, media_type="application/json")
        headers = {"cache-control": "no-cache", "x-content-type-options": "nosniff"}
        return Response(_asset(name), media_type=kind, headers=headers)

    return router
