"""The console's REST API on a real uvicorn over loopback, over a real SQLite journal.

The journal is filled through its writer (`tests.support.console_rig`); the console gets
it read-only, as the daemon would hand it. Every endpoint, the token and its failed-auth
limit, each control's command row, 404/409/422, and no secret in any answer.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.clock import SteppedClock
from bot.console import ConsoleSources, create_app
from bot.journal import Journal
from bot.ops.status_file import DaemonStatus
from tests.support.console_rig import (
    API_KEY,
    APT,
    DCA_ID,
    LIMIT_ID,
    T0,
    TOKEN,
    TX_HASH,
    USDC,
    WALLET,
    WALLET_KEY,
    daemon_status,
    fill_journal,
    settings_for,
)
from tests.support.loopback import serve

NOW = datetime(2026, 5, 3, 1, 0, tzinfo=UTC)
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass(frozen=True)
class Alert:
    kind: str
    text: str
    at: datetime
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class Monotonic:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Console:
    client: httpx.Client
    base: str
    journal: Journal
    monotonic: Monotonic
    intent_id: int
    status: list[DaemonStatus | None]
    answers: list[str] = field(default_factory=list)

    def get(self, path: str, **params: Any) -> httpx.Response:
        response = self.client.get(path, params=params, headers=AUTH)
        self.answers.append(response.text)
        return response

    def post(self, path: str, body: Any = None) -> httpx.Response:
        response = self.client.post(path, json=body, headers=AUTH)
        self.answers.append(response.text)
        return response


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    intent_id = fill_journal(tmp_path / "bot.db")
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    settings = settings_for(url)
    status: list[DaemonStatus | None] = [daemon_status()]
    alerts = [
        Alert("order_filled", "dca-apt: order filled", T0, {"order_id": DCA_ID}),
        Alert("strategy_error", "tp-apt: ValueError", T0 + timedelta(hours=1)),
    ]
    journal = Journal.open(url, readonly=True)
    monotonic = Monotonic()
    sources = ConsoleSources(
        journal=journal,
        settings=lambda: settings,
        status=lambda: status[0],
        alerts=lambda: alerts,
    )
    app = create_app(sources, token=TOKEN, clock=SteppedClock(NOW), monotonic=monotonic)
    try:
        with serve(app) as base, httpx.Client(base_url=base, timeout=10) as client:
            yield Console(client, base, journal, monotonic, intent_id, status)
    finally:
        journal.close()


# --- reads ------------------------------------------------------------------------------


def test_health_and_status(console: Console) -> None:
    health = console.get("/api/v1/health").json()
    assert health["ok"] is True and health["state"] == "running"
    assert health["now"] == "2026-05-03T01:00:00Z"
    status = console.get("/api/v1/status").json()
    assert status["available"] is True and status["wallet"] == WALLET
    assert status["apt_balance"] == "12.34567891" and status["open_orders"] == 1
    console.status[0] = None
    assert console.get("/api/v1/health").json()["ok"] is False
    assert console.get("/api/v1/status").json()["available"] is False


def test_strategies_have_params_schedule_counters_and_pauses(console: Console) -> None:
    items = {s["name"]: s for s in console.get("/api/v1/strategies").json()["items"]}
    assert sorted(items) == ["dca-apt", "grid-old", "tp-apt"]
    dca = items["dca-apt"]
    assert dca["plugin"] == "recurring_dca" and dca["configured"] is True
    assert dca["params"]["amount"] == "25" and dca["budget"] == {"USDC": "100.5"}
    assert dca["schedule"] == {"interval_seconds": 3600, "cron": None, "tick_at_start": None}
    assert dca["ticks"] == 3 and dca["last_tick"] == "2026-05-03T00:00:00+00:00"
    assert dca["paused"] is False
    tp = items["tp-apt"]
    assert tp["schedule"]["cron"] == "0 * * * *"
    assert tp["errors"] == 1 and tp["last_error"] == "ValueError: no price"
    old = items["grid-old"]
    assert old["configured"] is False and old["paused"] is True
    assert old["paused_since"] == "2026-05-01T00:00:00Z" and old["ticks"] is None


def test_orders_filter_and_page(console: Console) -> None:
    every = console.get("/api/v1/orders").json()
    assert every["total"] == 2 and every["next_cursor"] is None
    assert [o["kind"] for o in every["items"]] == ["limit", "dca"]  # newest first
    limit = every["items"][0]
    assert limit["order_id"] == LIMIT_ID and limit["rate"] == "7.25"
    assert limit["amount_total"] == "1.5" and limit["status"] == "active"
    open_ = console.get("/api/v1/orders", state="open").json()["items"]
    assert [o["order_id"] for o in open_] == [LIMIT_ID]
    closed = console.get("/api/v1/orders", state="closed").json()["items"]
    assert [o["order_id"] for o in closed] == [DCA_ID]
    assert console.get("/api/v1/orders", strategy="dca-apt").json()["total"] == 1
    assert console.get("/api/v1/orders", kind="limit").json()["items"][0]["strategy"] == "tp-apt"
    first = console.get("/api/v1/orders", limit=1).json()
    assert [o["kind"] for o in first["items"]] == ["limit"] and first["next_cursor"]
    second = console.get("/api/v1/orders", limit=1, cursor=first["next_cursor"]).json()
    assert [o["kind"] for o in second["items"]] == ["dca"] and second["next_cursor"] is None


def test_one_order_with_transitions_fills_intent_and_transactions(console: Console) -> None:
    detail = console.get(f"/api/v1/orders/{DCA_ID}").json()
    assert detail["order"]["status"] == "filled"
    assert [t["to_status"] for t in detail["transitions"]] == ["filled"]
    filled = [f for f in detail["fills"] if f["type"] == "filled"]
    assert [(f["from_amount"], f["to_amount"], f["fee_amount"]) for f in filled] == [
        ("25", "4.99", "0.05"),
        ("25", "4.99", "0.05"),
    ]
    assert detail["intent"]["id"] == console.intent_id
    assert detail["intent"]["action"]["amount"] == "50"
    assert [t["hash"] for t in detail["transactions"]] == [TX_HASH]
    assert detail["transactions"][0]["gas_used"] == 1200
    missing = console.get("/api/v1/orders/0x1234")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "no order '0x1234' in the journal"}


def test_intents_and_transactions(console: Console) -> None:
    page = console.get("/api/v1/intents", strategy="dca-apt").json()
    assert page["total"] == 1 and page["items"][0]["state"] == "confirmed"
    assert console.get("/api/v1/intents", state="failed").json()["total"] == 0
    one = console.get(f"/api/v1/intents/{console.intent_id}").json()
    assert [h["state"] for h in one["history"]] == ["planned", "sent", "confirmed"]
    assert console.get("/api/v1/intents/999").status_code == 404
    txs = console.get("/api/v1/transactions").json()
    assert txs["items"][0]["state"] == "committed" and txs["items"][0]["sequence_number"] == 7
    assert console.get("/api/v1/transactions", state="failed").json()["items"] == []


def test_balances_prices_alerts(console: Console) -> None:
    balances = console.get("/api/v1/balances").json()
    assert balances == {
        "source": "status",
        "as_of": "2026-05-03T01:00:00+00:00",
        "items": [{"token": APT, "symbol": "APT", "amount": "12.34567891"}],
    }
    prices = console.get("/api/v1/prices", token=APT).json()
    assert [p["usd_price"] for p in prices["items"]] == ["5", "5", "5", "6"]
    latest = console.get("/api/v1/prices", token=APT, limit=1).json()["items"]
    assert [p["usd_price"] for p in latest] == ["6"]
    window = console.get("/api/v1/prices", token=APT, **{"from": "2026-05-01T12:00:00"}).json()
    assert len(window["items"]) == 3
    bad = console.get("/api/v1/prices", token="not a token")
    assert bad.status_code == 422 and bad.json()["detail"].startswith("query.token: ")
    alerts = console.get("/api/v1/alerts").json()
    assert alerts["kept"] is True
    assert [a["kind"] for a in alerts["items"]] == ["strategy_error", "order_filled"]


def test_pnl_per_strategy_and_wallet_is_exact(console: Console) -> None:
    pnl = console.get("/api/v1/pnl").json()
    assert pnl["cost_basis"] == "fifo" and pnl["valued_at"] == "2026-05-03T00:00:00Z"
    (dca,) = pnl["strategies"]
    assert dca["strategy"] == "dca-apt"
    assert dca["totals"]["invested"] == {USDC: "50"}
    assert dca["totals"]["received"] == {APT: "9.98"}
    # 9.98 APT at the last price 6 = 59.88 USD, cost 50 USD: 9.88 unrealised.
    assert dca["value_usd"] == "59.88" and dca["unrealised_usd"] == "9.88"
    (wallet,) = pnl["wallets"]
    assert wallet["strategy"] == WALLET and wallet["value_usd"] == "59.88"
    by_day = console.get("/api/v1/pnl", by="day").json()["strategies"][0]["buckets"]
    assert [b["bucket"] for b in by_day] == ["2026-05-01", "2026-05-02"]
    early = console.get("/api/v1/pnl", to="2026-05-01T00:00:00Z").json()
    assert early["strategies"] == [] and early["to"] == "2026-05-01T00:00:00Z"
    wrong = console.get("/api/v1/pnl", by="year")
    assert wrong.status_code == 422 and wrong.json()["detail"].startswith("query.by: ")
    backwards = console.get("/api/v1/pnl", **{"from": "2026-05-02", "to": "2026-05-01"})
    assert backwards.status_code == 422 and "query.from" in backwards.json()["detail"]


def test_bad_paging_is_a_422_naming_the_field(console: Console) -> None:
    too_many = console.get("/api/v1/orders", limit=501)
    assert too_many.status_code == 422 and too_many.json()["detail"].startswith("query.limit: ")
    state = console.get("/api/v1/orders", state="sideways")
    assert state.status_code == 422 and state.json()["detail"].startswith("query.state: ")
    assert "sideways" not in state.json()["detail"]  # the input is never echoed


# --- auth -------------------------------------------------------------------------------


def test_no_token_or_a_wrong_one_gets_401_and_nothing_else(console: Console) -> None:
    client = console.client
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        for path in ("/api/v1/status", "/api/v1/orders", "/nothing/here"):
            answer = client.get(path, headers=headers)
            assert answer.status_code == 401, (headers, path)
            assert answer.json() == {"detail": "unauthorized"}
            assert answer.headers["www-authenticate"] == "Bearer"
    posted = client.post("/api/v1/reload")
    assert posted.status_code == 401
    assert console.journal.commands() == []


def test_the_schema_pages_are_open_and_hold_no_data(console: Console) -> None:
    docs = console.client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    schema = console.client.get("/openapi.json")
    assert schema.status_code == 200
    assert "/api/v1/orders/{order_id}/cancel" in schema.json()["paths"]
    assert WALLET not in schema.text and DCA_ID not in schema.text


def test_failed_logins_are_rate_limited_per_client(console: Console) -> None:
    client = console.client
    for _ in range(10):
        assert (
            client.get("/api/v1/health", headers={"Authorization": "Bearer x"}).status_code == 401
        )
    limited = client.get("/api/v1/health", headers=AUTH)  # even the right token waits
    assert limited.status_code == 429 and limited.json() == {"detail": "too many failed attempts"}
    assert int(limited.headers["retry-after"]) == 60
    console.monotonic.now += 61
    assert client.get("/api/v1/health", headers=AUTH).status_code == 200


# --- controls ---------------------------------------------------------------------------


def _command(console: Console, answer: httpx.Response) -> tuple[str, dict[str, Any]]:
    """The queued row's kind and payload (who asked checked, then left out)."""
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert body["url"] == f"/api/v1/commands/{body['command_id']}"
    row = console.journal.command(body["command_id"])
    assert row is not None and row.state == "queued" and row.created_at == NOW
    assert row.kind == body["kind"]
    assert row.payload["by"] == "127.0.0.1" and row.payload["source"] == "console"
    return row.kind, {k: v for k, v in row.payload.items() if k not in ("by", "source")}


def test_each_control_queues_its_command(console: Console) -> None:
    pause = console.post("/api/v1/strategies/dca-apt/pause")
    assert _command(console, pause) == ("pause", {"strategy": "dca-apt"})
    resume = console.post("/api/v1/strategies/grid-old/resume")
    assert _command(console, resume) == ("resume", {"strategy": "grid-old"})
    assert _command(console, console.post("/api/v1/stopentry")) == ("stopentry", {})
    cancel = console.post(f"/api/v1/orders/{LIMIT_ID}/cancel")
    assert _command(console, cancel) == ("cancel", {"kind": "limit", "order_id": LIMIT_ID})
    assert _command(console, console.post("/api/v1/reconcile")) == ("reconcile", {})
    assert _command(console, console.post("/api/v1/reload")) == ("reload", {})
    rows = console.journal.commands()
    assert [c.kind for c in rows] == [
        "pause",
        "resume",
        "stopentry",
        "cancel",
        "reconcile",
        "reload",
    ]
    one = console.get(f"/api/v1/commands/{rows[3].id}").json()
    assert one["state"] == "queued" and one["payload"]["source"] == "console"
    recent = console.get("/api/v1/commands", limit=2).json()["items"]
    assert [c["kind"] for c in recent] == ["reload", "reconcile"]


def test_the_answer_follows_the_daemon(console: Console) -> None:
    queued = console.post("/api/v1/strategies/tp-apt/pause").json()["command_id"]
    with Journal.open(console.journal.engine.url) as writer:  # the daemon's side
        taken = writer.take_command(at=NOW)
        assert taken is not None and taken.id == queued
        writer.finish_command(queued, True, "tp-apt paused", at=NOW)
    done = console.get(f"/api/v1/commands/{queued}").json()
    assert done["state"] == "done" and done["result"] == "tp-apt paused"


def test_controls_on_unknown_things_are_404_and_bad_bodies_422(console: Console) -> None:
    unknown = console.post("/api/v1/strategies/nope/pause")
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": "no strategy 'nope' (known: dca-apt, tp-apt)"}
    # Paused, but it runs nowhere: it can be resumed, not paused again.
    assert console.post("/api/v1/strategies/grid-old/pause").status_code == 404
    assert console.post("/api/v1/orders/0x99/cancel").status_code == 404
    done = console.post(f"/api/v1/orders/{DCA_ID}/cancel")
    assert done.status_code == 409 and done.json()["detail"].endswith("is already filled")
    bad = console.post(f"/api/v1/orders/{LIMIT_ID}/cancel", {"kind": "swap"})
    assert bad.status_code == 422 and bad.json()["detail"].startswith("body.kind: ")
    extra = console.post(f"/api/v1/orders/{LIMIT_ID}/cancel", {"kynd": "limit"})
    assert extra.status_code == 422 and extra.json()["detail"].startswith("body.kynd: ")
    wrong_kind = console.post(f"/api/v1/orders/{LIMIT_ID}/cancel", {"kind": "dca"})
    assert wrong_kind.status_code == 404
    assert console.get("/api/v1/commands/999").status_code == 404
    assert console.journal.commands() == []


# --- secrets ----------------------------------------------------------------------------


def test_no_answer_holds_a_secret(console: Console) -> None:
    for path in (
        "/api/v1/health",
        "/api/v1/status",
        "/api/v1/strategies",
        "/api/v1/orders",
        f"/api/v1/orders/{DCA_ID}",
        "/api/v1/intents",
        f"/api/v1/intents/{console.intent_id}",
        "/api/v1/transactions",
        "/api/v1/balances",
        "/api/v1/alerts",
        "/api/v1/pnl",
        "/api/v1/fills",
        "/api/v1/value",
        "/api/v1/reports",
        "/api/v1/remotes",
        "/api/v1/commands",
        "/openapi.json",
        "/docs",
    ):
        assert console.get(path).status_code == 200, path
    console.get("/api/v1/prices", token=APT)
    console.post("/api/v1/strategies/dca-apt/pause")
    console.post(f"/api/v1/orders/{LIMIT_ID}/cancel", {"kind": TOKEN})
    console.client.get("/api/v1/status", headers={"Authorization": f"Bearer {TOKEN}x"})
    assert len(console.answers) >= 21
    for answer in console.answers:
        for secret in (TOKEN, WALLET_KEY, WALLET_KEY.removeprefix("0x"), API_KEY):
            assert secret not in answer


def test_a_dashboard_polling_for_hours_grows_nothing_on_the_server(console: Console) -> None:
    """What an open overview asks every poll, 2 × 100 times after a warm-up: nothing is kept.

    Python's allocations (tracemalloc, every thread: the server's too) still held after
    the first 100 polls and after the next 100: a leak grows with the polls, caches do
    not. The second hundred (600 requests) may add at most 32 KiB: one leaked half KiB on
    a single endpoint's answers fails it.
    """
    polled = [
        ("/api/v1/status", {}),
        ("/api/v1/strategies", {}),
        ("/api/v1/orders", {"state": "open", "limit": 50}),
        ("/api/v1/fills", {"type": "filled", "limit": 20}),
        ("/api/v1/alerts", {"limit": 20}),
        ("/api/v1/pnl", {}),
    ]

    def held_after(times: int) -> int:
        for _ in range(times):
            for path, params in polled:
                assert console.client.get(path, params=params, headers=AUTH).status_code == 200
        gc.collect()
        return tracemalloc.get_traced_memory()[0]

    held_after(20)  # caches (statements, validators, the price book) fill here
    tracemalloc.start()
    try:
        first, second = held_after(100), held_after(100)
    finally:
        tracemalloc.stop()
    assert second - first < 32 * 1024, f"held {first} then {second} bytes"
