"""The order tracker against a scripted provider, with a real SQLite journal.

`make_tracker` builds an `OrderTracker` whose client (the real HTTP stack, one attempt)
talks to a `ScriptedApi` over ASGI; `rig` adds a journal file and polls limit orders
only; `poll` runs one poll and keeps what it logged. `record`, `limit_page` and
`snapshot` make a provider's order record, a getOrders page and a journal snapshot.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import structlog
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.clock import SteppedClock
from bot.engine.tracker import OrderTracker, PollReport
from bot.journal import Journal, OrderSnapshot
from tests.support.json_strategies import APT, USDC, WALLET, ScriptedApi, dumps

MAX_ACTIVE_PAGES = 6
MAX_COMPLETED_PAGES = 4


@dataclass
class Run:
    """One poll's report and what it logged."""

    report: PollReport
    logs: list[dict[str, Any]] = field(default_factory=list)

    def logged(self, event: str) -> list[dict[str, Any]]:
        """The captured log entries of `event`."""
        return [e for e in self.logs if e["event"] == event]


def poll(tracker: OrderTracker) -> Run:
    """One poll, its log captured."""
    with structlog.testing.capture_logs() as logs:
        report = asyncio.run(tracker.poll())
    return Run(report, logs)


def make_tracker(app: ScriptedApi, journal: Journal, clock: SteppedClock) -> OrderTracker:
    """A tracker of `WALLET` whose client talks to `app`, four orders a page."""
    client = PanoraClient(
        base_url="http://fuzz",
        api_key=SecretStr("fuzz-key-0123"),
        transport=httpx.ASGITransport(app=app),
        max_attempts=1,
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
    )
    return OrderTracker(
        client,
        journal,
        clock,
        WALLET,
        page_size=4,
        max_active_pages=MAX_ACTIVE_PAGES,
        max_completed_pages=MAX_COMPLETED_PAGES,
    )


def limit_page(records: list[Any], total: Any = 1) -> str:
    """A limit-order getOrders page holding `records` (`total` may lie)."""
    body = {"chainId": 1, "toWalletAddress": WALLET, "pageNumber": 1, "totalPages": total}
    return dumps({**body, "orders": records})


def rig(tmp_path: Path, handler: Any) -> tuple[OrderTracker, Journal]:
    """A limit-orders-only tracker over `handler`, and its journal in `tmp_path`."""
    app = ScriptedApi()
    app.handler = handler
    journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    tracker = make_tracker(app, journal, SteppedClock(datetime(2026, 1, 1, tzinfo=UTC)))
    tracker.kinds = ("limit",)
    return tracker, journal


def record(order_id: str, status: str = "active", **fields: Any) -> dict[str, Any]:
    """A provider's limit-order record (APT → USDC), `fields` replacing its values."""
    base = {
        "panoraTxId": order_id,
        "fromToken": {"address": APT, "decimals": 8},
        "toToken": {"address": USDC, "decimals": 6},
        "status": status,
        "fromTokenAmount": "10",
        "rateToTokenPerFromToken": "6.5",
    }
    return base | fields


def snapshot(order_id: str, **fields: Any) -> OrderSnapshot:
    """A journal snapshot of an active APT → USDC limit order."""
    return OrderSnapshot(
        "limit", order_id, WALLET, APT, USDC, "active", amount_total=Decimal(1), **fields
    )
