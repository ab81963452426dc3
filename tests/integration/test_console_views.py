"""The console's fills, symbols, wallet-value series and reports folder, over loopback.

A real uvicorn over a real SQLite journal (`tests.support.console_rig`), as in
`test_console_api.py`: `/fills` filtered and paged, token symbols beside the exact
identities, `/value` bounded and ending on `/pnl`'s wallet value, and the reports
folder served read-only — nothing outside it reachable by `..`, an absolute path, an
encoded path or a symbolic link.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.clock import SteppedClock
from bot.console import ConsoleSources, create_app
from bot.console.reports import REPORT_CSP
from bot.journal import Journal
from tests.support.console_rig import (
    APT,
    DCA_ID,
    LIMIT_ID,
    TOKEN,
    USDC,
    WALLET,
    daemon_status,
    fill_journal,
    settings_for,
)
from tests.support.loopback import serve

NOW = datetime(2026, 5, 3, 1, 0, tzinfo=UTC)
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SYMBOLS = {USDC: "USDC"}


@dataclass
class Console:
    client: httpx.Client
    reports: Path
    outside: Path

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.client.get(path, params=params, headers=AUTH)


def _label(token: str) -> str:
    """The daemon's `PriceConvention.label`: the symbol if known, else the identity."""
    return SYMBOLS.get(token, token)


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    fill_journal(tmp_path / "bot.db")
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    reports = tmp_path / "reports"
    (reports / "run-1").mkdir(parents=True)
    (reports / "run-1" / "report.html").write_text("<h1>run 1</h1>")
    (reports / "run-1" / "report.json").write_text("{}")
    (reports / "march" / "deep").mkdir(parents=True)
    (reports / "march" / "deep" / "index.html").write_text("<h1>march</h1>")
    (reports / ".hidden.html").write_text("hidden")
    (reports / "notes.txt").write_text("not served")
    outside = tmp_path / "secret.html"
    outside.write_text("outside the folder")
    os.symlink(outside, reports / "escape.html")
    os.symlink(tmp_path, reports / "up")
    settings = settings_for(url, reports_dir=str(reports))
    journal = Journal.open(url, readonly=True)
    sources = ConsoleSources(
        journal=journal,
        settings=lambda: settings,
        status=daemon_status,
        label=_label,
    )
    app = create_app(sources, token=TOKEN, clock=SteppedClock(NOW))
    try:
        with serve(app) as base, httpx.Client(base_url=base, timeout=10) as client:
            yield Console(client, reports, outside)
    finally:
        journal.close()


def test_fills_across_orders_filtered_and_paged(console: Console) -> None:
    every = console.get("/api/v1/fills").json()
    assert every["total"] == 3 and every["next_cursor"] is None
    assert [f["type"] for f in every["items"]] == ["filled", "filled", "created"]  # newest first
    newest = every["items"][0]
    assert (newest["order_id"], newest["kind"], newest["strategy"]) == (DCA_ID, "dca", "dca-apt")
    assert (newest["from_amount"], newest["to_amount"], newest["fee_amount"]) == (
        "25",
        "4.99",
        "0.05",
    )
    assert (newest["from_token"], newest["from_symbol"]) == (USDC, "USDC")
    assert (newest["to_token"], newest["to_symbol"]) == (APT, "APT")
    filled = console.get("/api/v1/fills", type="filled").json()
    assert filled["total"] == 2
    first = console.get("/api/v1/fills", type="filled", limit=1).json()
    assert first["next_cursor"] is not None and first["total"] == 2
    second = console.get("/api/v1/fills", type="filled", limit=1, cursor=first["next_cursor"])
    assert second.json()["next_cursor"] is None
    assert second.json()["items"][0]["tx_id"] != first["items"][0]["tx_id"]
    assert console.get("/api/v1/fills", strategy="tp-apt").json()["total"] == 0
    assert console.get("/api/v1/fills", order=LIMIT_ID).json()["items"] == []
    assert console.get("/api/v1/fills", order=DCA_ID, kind="dca").json()["total"] == 3
    # [from, to) on the fill's time: the slices at 12:00 on the 1st and 00:00 on the 2nd.
    window = {"from": "2026-05-01T06:00:00Z", "to": "2026-05-02T00:00:00Z"}
    assert [f["tx_id"] for f in console.get("/api/v1/fills", **window).json()["items"]] == ["0xc1"]
    bad = console.get("/api/v1/fills", kind="swap")
    assert bad.status_code == 422 and bad.json()["detail"].startswith("query.kind: ")


def test_orders_and_pnl_name_tokens_by_symbol_and_keep_the_identity(console: Console) -> None:
    orders = {o["kind"]: o for o in console.get("/api/v1/orders").json()["items"]}
    limit = orders["limit"]
    assert (limit["from_token"], limit["from_symbol"]) == (APT, "APT")
    assert (limit["to_token"], limit["to_symbol"]) == (USDC, "USDC")
    detail = console.get(f"/api/v1/orders/{DCA_ID}").json()["order"]
    assert detail["from_symbol"] == "USDC" and detail["to_symbol"] == "APT"
    pnl = console.get("/api/v1/pnl").json()
    assert pnl["symbols"] == {USDC: "USDC", APT: "APT"}
    assert pnl["strategies"][0]["totals"]["invested"] == {USDC: "50"}  # exact identities kept


def test_value_over_time_is_bounded_and_ends_on_the_wallet_value(console: Console) -> None:
    value = console.get("/api/v1/value", points=25).json()
    assert value["valued_at"] == "2026-05-03T00:00:00Z" and value["cost_basis"] == "fifo"
    (wallet,) = value["wallets"]
    assert wallet["wallet"] == WALLET and len(wallet["points"]) == 25
    first, last = wallet["points"][0], wallet["points"][-1]
    assert first["at"] == "2026-05-01T12:00:00Z"  # the first trade
    assert last["at"] == "2026-05-03T00:00:00Z"
    pnl_wallet = console.get("/api/v1/pnl").json()["wallets"][0]
    assert last["value_usd"] == pnl_wallet["value_usd"] == "59.88"
    assert last["cost_usd"] == "50" and last["pnl_usd"] == "9.88"
    assert all(isinstance(p["cost_usd"], str) for p in wallet["points"])  # exact text
    assert len(console.get("/api/v1/value").json()["wallets"][0]["points"]) == 200
    too_many = console.get("/api/v1/value", points=1001)
    assert too_many.status_code == 422 and too_many.json()["detail"].startswith("query.points")
    early = console.get("/api/v1/value", to="2026-05-01T00:00:00Z").json()
    assert early["wallets"] == []


def test_the_reports_folder_is_listed(console: Console) -> None:
    found = console.get("/api/v1/reports").json()
    assert found["folder_exists"] is True and found["truncated"] is False
    assert sorted(r["path"] for r in found["items"]) == [
        "march/deep/index.html",
        "run-1/report.html",
    ]
    urls = {r["path"]: r["url"] for r in found["items"]}
    assert urls["run-1/report.html"] == "/reports/files/run-1/report.html"


def test_a_report_is_served_read_only_under_a_strict_policy(console: Console) -> None:
    page = console.client.get("/reports/files/run-1/report.html", headers=AUTH)
    assert page.status_code == 200 and page.text == "<h1>run 1</h1>"
    assert page.headers["content-security-policy"] == REPORT_CSP
    assert "script-src" not in REPORT_CSP and "default-src 'none'" in REPORT_CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    data = console.client.get("/reports/files/run-1/report.json", headers=AUTH)
    assert data.status_code == 200 and data.headers["content-type"] == "application/json"
    anonymous = console.client.get("/reports/files/run-1/report.html")
    assert anonymous.status_code in (303, 307, 401) and "run 1" not in anonymous.text


@pytest.mark.parametrize(
    "path",
    [
        "../secret.html",
        "run-1/../../secret.html",
        "..%2Fsecret.html",
        "%2E%2E/secret.html",
        "%2Fetc%2Fpasswd",
        "/etc/passwd",
        "escape.html",  # a symbolic link out of the folder
        "up/secret.html",  # through a linked folder
        ".hidden.html",
        "notes.txt",  # not a kind of file served
        "run-1",  # a folder
        "missing.html",
        "run-1/report.html%00.png",
    ],
)
def test_nothing_outside_the_folder_can_be_reached(console: Console, path: str) -> None:
    answer = console.client.get("/reports/files/" + path, headers=AUTH)
    assert answer.status_code == 404, (path, answer.status_code)
    assert "outside the folder" not in answer.text and "root:" not in answer.text


def test_a_missing_reports_folder_is_said(console: Console, tmp_path: Path) -> None:
    for child in sorted(console.reports.rglob("*"), reverse=True):
        if child.is_symlink() or child.is_file():
            child.unlink()
        else:
            child.rmdir()
    console.reports.rmdir()
    assert console.get("/api/v1/reports").json() == {
        "folder_exists": False,
        "items": [],
        "truncated": False,
    }
