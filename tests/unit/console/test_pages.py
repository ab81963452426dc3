"""The dashboard's pages, login and assets on a real uvicorn over loopback (no browser).

The journal is the console rig's (`tests.support.console_rig`); the browser's part (the
script drawing the pages) is `tests/integration/test_console_browser.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from bot.clock import SteppedClock
from bot.console import ConsoleSources, create_app
from bot.console.session import COOKIE, SESSION_SECONDS, Sessions, secure_cookie
from bot.journal import Journal
from tests.support.console_rig import T0, TOKEN, daemon_status, fill_journal, settings_for
from tests.support.loopback import serve

PAGES = ("/", "/strategies/dca-apt", "/orders/0xabc?kind=dca", "/static/console.js")


@pytest.fixture
def base(tmp_path: Path) -> Iterator[tuple[str, Journal]]:
    path = tmp_path / "bot.db"
    fill_journal(path)
    settings = settings_for(f"sqlite:///{path}")
    journal = Journal.open(settings.journal.url, readonly=True)
    sources = ConsoleSources(journal, lambda: settings, daemon_status)
    # The failed-auth limit's clock stands still: its Retry-After is exact however long the
    # requests take (on the real monotonic clock a loaded machine made it 59, not 60).
    app = create_app(
        sources,
        token=TOKEN,
        clock=SteppedClock(T0 + timedelta(days=2)),
        monotonic=lambda: 1000.0,
    )
    try:
        with serve(app) as url:
            yield url, journal
    finally:
        journal.close()


def _login(client: httpx.Client, token: str = TOKEN) -> httpx.Response:
    return client.post("/login", data={"token": token})


def test_pages_and_assets_send_a_browser_without_a_session_to_the_login(
    base: tuple[str, Journal],
) -> None:
    with httpx.Client(base_url=base[0]) as client:
        for path in PAGES:
            answer = client.get(path)
            assert answer.status_code == 303 and answer.headers["location"] == "/login", path
        assert client.get("/nothing/here").status_code == 401
        assert client.get("/api/v1/status").status_code == 401
        form = client.get("/login")
        assert form.status_code == 200 and 'name="token"' in form.text
        assert "frame-ancestors 'none'" in form.headers["content-security-policy"]


def test_a_login_gives_a_strict_httponly_cookie_and_never_shows_the_token(
    base: tuple[str, Journal],
) -> None:
    with httpx.Client(base_url=base[0]) as client:
        answer = _login(client)
        assert answer.status_code == 303 and answer.headers["location"] == "/"
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and TOKEN not in cookie
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Secure" not in cookie
        for path in PAGES:
            page = client.get(path)
            assert page.status_code == 200, path
            assert TOKEN not in page.text
        overview = client.get("/")
        assert '<meta name="viewport"' in overview.text
        assert "script-src 'self'" in overview.headers["content-security-policy"]
        assert re.search(r'<meta name="csrf" content="[0-9a-f]{64}">', overview.text)
        assert client.get("/api/v1/status").json()["state"] == "running"
        assert client.get("/login").status_code == 303  # already logged in
        out = client.post("/logout")
        assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
        client.cookies.clear()
        assert client.get("/").status_code == 303


def test_the_cookie_is_secure_unless_the_browser_used_a_loopback_name(
    base: tuple[str, Journal],
) -> None:
    with httpx.Client(base_url=base[0]) as client:
        answer = client.post("/login", data={"token": TOKEN}, headers={"host": "bot.example"})
        assert "Secure" in answer.headers["set-cookie"]
    for host, secure in (
        ("127.0.0.1:8787", False),
        ("localhost", False),
        ("[::1]:8787", False),
        ("bot.example", True),
        ("10.0.0.5:8787", True),
        (None, True),
    ):
        assert secure_cookie(host) is secure, host


def test_a_control_with_the_cookie_needs_the_csrf_header(base: tuple[str, Journal]) -> None:
    url, journal = base
    with httpx.Client(base_url=url) as client:
        _login(client)
        refused = client.post("/api/v1/strategies/dca-apt/pause")
        assert refused.status_code == 403
        assert refused.json() == {"detail": "missing or wrong x-console-csrf header"}
        wrong = client.post("/api/v1/strategies/dca-apt/pause", headers={"x-console-csrf": "0"})
        assert wrong.status_code == 403
        assert journal.commands() == []
        csrf = re.search(r'name="csrf" content="([0-9a-f]+)"', client.get("/").text)
        assert csrf is not None
        done = client.post(
            "/api/v1/strategies/dca-apt/pause", headers={"x-console-csrf": csrf.group(1)}
        )
        assert done.status_code == 202 and done.json()["kind"] == "pause"
        assert [c.kind for c in journal.commands()] == ["pause"]


def test_failed_logins_count_toward_the_failed_auth_limit(base: tuple[str, Journal]) -> None:
    with httpx.Client(base_url=base[0]) as client:
        for given in ["wrong"] * 9 + [""]:
            answer = _login(client, given)
            assert answer.status_code == 401 and "Wrong token." in answer.text
            assert "set-cookie" not in answer.headers
        blocked = _login(client)
        assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) == 60
        assert "set-cookie" not in blocked.headers
        api = client.get("/api/v1/status", headers={"Authorization": f"Bearer {TOKEN}"})
        assert api.status_code == 429


def test_static_files_have_their_types_and_nothing_else_is_reachable(
    base: tuple[str, Journal],
) -> None:
    with httpx.Client(base_url=base[0]) as client:
        _login(client)
        script = client.get("/static/console.js")
        assert script.headers["content-type"] == "text/javascript; charset=utf-8"
        assert script.headers["x-content-type-options"] == "nosniff"
        assert "visibilityState" in script.text
        style = client.get("/static/console.css")
        assert style.headers["content-type"] == "text/css; charset=utf-8"
        assert "@media" in style.text
        for path in (
            "/static/../app.py",
            "/static/..%2fapp.py",
            "/static/%2e%2e/%2e%2e/pyproject.toml",
            "/static/app.py",
            "/static/",
            "/static/console.js/",
        ):
            answer = client.get(path)
            assert answer.status_code in (303, 307, 401, 404), path
            assert "import" not in answer.text, path


def test_names_in_a_page_are_escaped(base: tuple[str, Journal]) -> None:
    with httpx.Client(base_url=base[0]) as client:
        _login(client)
        page = client.get('/strategies/<img src=x onerror="alert(1)">&')
        assert page.status_code == 200
        assert "<img" not in page.text
        shown = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;"
        assert f'data-strategy="{shown}"' in page.text and f"<h1>{shown}</h1>" in page.text


def test_a_session_is_signed_by_the_token_and_lasts_a_week() -> None:
    clock = SteppedClock(T0)
    sessions = Sessions(TOKEN, clock.now)
    cookie = sessions.issue()
    assert sessions.valid(cookie)
    assert not Sessions(TOKEN + "x", clock.now).valid(cookie)
    issued, _, signature = cookie.partition(".")
    assert not sessions.valid(f"{int(issued) + 1}.{signature}")
    assert not sessions.valid(cookie[:-1] + ("0" if cookie[-1] != "0" else "1"))
    for bad in ("", ".", "abc.def", "1.2.3", None):
        assert not sessions.valid(bad)
    assert sessions.csrf_matches(cookie, sessions.csrf_for(cookie))
    assert not sessions.csrf_matches(cookie, None)
    clock.advance(timedelta(seconds=SESSION_SECONDS))
    assert sessions.valid(cookie)
    clock.advance(timedelta(seconds=1))
    assert not sessions.valid(cookie)
