"""Many bots in one view: this console reads other consoles, over loopback, read-only.

Two real console servers on 127.0.0.1 (uvicorn, each over a real SQLite journal): the
main one has `[console].remotes` naming the second (`bot-b`, its token in a 0600 file),
the second again with a wrong token, a server that accepts connections and never
answers, a port nobody listens on, and a server whose answers are not a console's. The
main console's `/api/v1/remotes` shows bot-b's wallet, P&L and open orders, each other
remote as unreachable, refused or invalid — within the timeout, without slowing the
main console's other answers — and never a token.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response
from pydantic import SecretStr

from bot.clock import SteppedClock
from bot.config import Settings
from bot.console import ConsoleSources, create_app
from bot.console.remotes import Remote, RemoteBots, RemoteSetupError, remotes_of
from bot.journal import Journal
from tests.support.console_rig import (
    LIMIT_ID,
    TOKEN,
    WALLET,
    daemon_status,
    fill_journal,
    settings_for,
)
from tests.support.loopback import closed_port, serve

NOW = datetime(2026, 5, 3, 1, 0, tzinfo=UTC)
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TOKEN_B = "bot-b-console-token-31415926535"
TIMEOUT = 1.0


def _liar() -> FastAPI:
    """A server that answers 200 with what no console would say."""
    app = FastAPI()

    @app.get("/api/v1/status")
    async def status() -> JSONResponse:
        return JSONResponse({"available": "perhaps", "state": ["<script>"]})

    @app.get("/api/v1/pnl")
    async def pnl() -> Response:
        return Response(b'{"wallets": [' + b" " * 2_000_000 + b"]}", media_type="application/json")

    @app.get("/api/v1/orders")
    async def orders() -> JSONResponse:
        return JSONResponse({"items": [], "total": 0, "next_cursor": None})

    return app


@dataclass
class Bots:
    client: httpx.Client
    settings: Settings

    def get(self, path: str) -> httpx.Response:
        return self.client.get(path, headers=AUTH)


def _token_file(path: Path, token: str) -> Path:
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def hung() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])


@pytest.fixture
def bots(tmp_path: Path, hung: int) -> Iterator[Bots]:
    fill_journal(tmp_path / "bot.db")
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    journal = Journal.open(url, readonly=True)
    plain = settings_for(url)
    sources_b = ConsoleSources(journal, lambda: plain, daemon_status)
    app_b = create_app(sources_b, token=TOKEN_B, clock=SteppedClock(NOW))
    good = _token_file(tmp_path / "b.token", TOKEN_B)
    wrong = _token_file(tmp_path / "wrong.token", "not-the-token-of-bot-b-0000")
    try:
        with serve(app_b) as base_b, serve(_liar()) as liar:
            remotes = [
                {"name": "bot-b", "url": base_b, "token_file": str(good)},
                {"name": "wrong-token", "url": base_b, "token_file": str(wrong)},
                {"name": "hung", "url": f"http://127.0.0.1:{hung}", "token_file": str(good)},
                {
                    "name": "gone",
                    "url": f"http://127.0.0.1:{closed_port()}",
                    "token_file": str(good),
                },
                {"name": "liar", "url": liar, "token_file": str(good)},
            ]
            settings = settings_for(url, remotes=remotes)
            sources = ConsoleSources(journal, lambda: settings, daemon_status)
            clock = SteppedClock(NOW)
            known = RemoteBots(remotes_of(settings), clock, timeout=TIMEOUT, cache_seconds=3)
            app = create_app(sources, token=TOKEN, clock=clock, remotes=known)
            with serve(app) as base, httpx.Client(base_url=base, timeout=10) as client:
                yield Bots(client, settings)
    finally:
        journal.close()


def _by_name(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in answer["items"]}


def test_one_view_shows_the_other_bot_and_why_the_rest_are_not_shown(bots: Bots) -> None:
    began = time.monotonic()
    answer = bots.get("/api/v1/remotes")
    took = time.monotonic() - began
    assert answer.status_code == 200, answer.text
    assert took < TIMEOUT + 1.0, took  # a dead remote costs the timeout, once, not more
    found = _by_name(answer.json())
    assert list(found) == ["bot-b", "wrong-token", "hung", "gone", "liar"]
    b = found["bot-b"]
    assert b["state"] == "ok" and b["problem"] is None
    assert b["status"]["wallet"] == WALLET and b["status"]["state"] == "running"
    assert [w["value_usd"] for w in b["wallets"]] == ["59.88"]
    assert b["open_orders"]["total"] == 1
    assert [o["order_id"] for o in b["open_orders"]["items"]] == [LIMIT_ID]
    assert b["checked_at"] == "2026-05-03T01:00:00Z"
    wrong = found["wrong-token"]
    assert wrong["state"] == "refused" and "HTTP 401" in wrong["problem"]
    assert wrong["status"] is None and wrong["wallets"] == [] and wrong["open_orders"] is None
    assert found["hung"]["state"] == "unreachable"
    assert found["hung"]["problem"] == "no answer within 1 s"
    assert (found["gone"]["state"], found["gone"]["problem"]) == ("unreachable", "cannot connect")
    liar = found["liar"]
    assert liar["state"] == "invalid" and liar["status"] is None
    assert liar["problem"] in (
        "/status: not a console answer (available)",
        "/pnl: answer over 1000000 bytes",
    )
    assert "<script>" not in answer.text
    assert TOKEN_B not in answer.text and TOKEN not in answer.text


def test_a_hung_remote_slows_no_other_answer_and_is_asked_once_per_cache(bots: Bots) -> None:
    result: list[httpx.Response] = []
    asking = threading.Thread(target=lambda: result.append(bots.get("/api/v1/remotes")))
    asking.start()
    time.sleep(0.2)  # the remotes are being fetched: the hung one holds its fetch open
    for path in ("/api/v1/status", "/api/v1/orders", "/api/v1/strategies"):
        began = time.monotonic()
        assert bots.get(path).status_code == 200
        assert time.monotonic() - began < 0.5, path
    asking.join(timeout=10)
    assert result and result[0].status_code == 200
    began = time.monotonic()
    again = bots.get("/api/v1/remotes")  # within cache_seconds: nothing fetched again
    assert time.monotonic() - began < 0.3
    assert _by_name(again.json())["hung"]["state"] == "unreachable"


def test_a_remote_token_file_open_to_others_is_refused(bots: Bots, tmp_path: Path) -> None:
    loose = tmp_path / "loose.token"
    loose.write_text(TOKEN_B)
    loose.chmod(0o644)
    remotes = [{"name": "bot-b", "url": "http://127.0.0.1:1", "token_file": str(loose)}]
    settings = settings_for(bots.settings.journal.url, remotes=remotes)
    with pytest.raises(RemoteSetupError, match=r"^\[console\]\.remotes 'bot-b': "):
        remotes_of(settings)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://192.0.2.10:8787", "plain http"),
        ("https://user:pw@bot.example.org", "user or password"),
        ("ftp://bot.example.org", "http:// or https://"),
        ("https://bot.example.org/?token=x", "query"),
    ],
)
def test_a_bad_remote_url_is_a_config_error(url: str, reason: str) -> None:
    remotes = [{"name": "b", "url": url, "token_file": "/nonexistent"}]
    with pytest.raises(ValueError, match=reason):
        Settings(console={"remotes": remotes})


def test_two_remotes_cannot_share_a_name() -> None:
    one = {"name": "b", "url": "https://b.example.org", "token_file": "/x"}
    with pytest.raises(ValueError, match="two remotes are named 'b'"):
        Settings(console={"remotes": [one, one]})


@dataclass
class Steps:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_refused_token_is_not_tried_again_for_a_minute() -> None:
    hits: list[str] = []
    app = FastAPI()

    @app.get("/api/v1/{anything}")
    async def refuse(anything: str) -> JSONResponse:
        hits.append(anything)
        return JSONResponse({"detail": "unauthorized"}, status_code=401)

    monotonic = Steps()
    with serve(app) as base:
        remote = Remote("strict", base, SecretStr("a-token-the-remote-refuses"))
        bots = RemoteBots([remote], SteppedClock(NOW), cache_seconds=5, monotonic=monotonic)
        first = await bots.snapshot()
        assert first.items[0].state == "refused"
        asked = len(hits)
        assert 1 <= asked <= 3
        monotonic.now += 30  # past the cache, within the minute: not asked again
        assert (await bots.snapshot()).items[0].state == "refused"
        assert len(hits) == asked
        monotonic.now += 31
        await bots.snapshot()
        assert len(hits) > asked
