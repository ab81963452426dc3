"""A journal, settings and status for the console's tests, filled through the journal's writer.

Two strategies (`dca-apt`: a 2-slice DCA of USDC into APT with its intent and
transaction; `tp-apt`: a live limit order selling APT), recorded prices, a paused third
strategy, and secrets (wallet key, API key) the console must never show.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.config import Settings
from bot.engine.pauses import store_pause
from bot.journal import Journal
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot, PriceTickRow
from bot.ops.status_file import DaemonStatus, StrategyStatus

T0 = datetime(2026, 5, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
DCA_ID = "0x" + "d1" * 32
LIMIT_ID = "0x" + "e1" * 32
TX_HASH = "0x" + "7a" * 32
WALLET_KEY = "0x" + "5e" * 32
"""A private key in the settings: it must never appear in an answer."""
API_KEY = "console-test-api-key-0123456789"
TOKEN = "console-test-token-9f8e7d6c5b4a"


@dataclass
class ConsoleWorld:
    """What the console is given, and the figures the tests check against."""

    url: str
    settings: Settings
    status: DaemonStatus
    intent_id: int


def fill_journal(path: Path) -> int:
    """Fill a new journal at `path`; returns the DCA's intent id."""
    url = f"sqlite:///{path}"
    with Journal.open(url) as journal:
        intent = journal.record_intent(
            "dca-apt",
            WALLET,
            "create_dca",
            "dca:1",
            {"amount": Decimal("50"), "from": USDC, "to": APT},
            at=T0,
        )
        journal.set_intent_state(intent.id, "sent", at=T0, tx_hash=TX_HASH)
        journal.record_transaction(
            TX_HASH, WALLET, 7, "create dca", at=T0, intent_id=intent.id, state="submitted"
        )
        journal.update_transaction(TX_HASH, "committed", at=T0, gas_used=1200)
        journal.set_intent_state(intent.id, "confirmed", at=T0, order_id=DCA_ID)
        fills = [FillRecord("0xc0", "created", 0, from_amount=Decimal("50"), time=T0)]
        for n, (price, got) in enumerate([(Decimal("5"), Decimal("4.99"))] * 2, start=1):
            at = T0 + timedelta(hours=12 * n)
            fills.append(
                FillRecord(f"0xc{n}", "filled", n, Decimal("25"), got, Decimal("0.05"), at)
            )
            journal.add_price_ticks([PriceTickRow(at, APT, price, "APT")])
        journal.add_price_ticks(
            [PriceTickRow(T0, USDC, Decimal("1"), "USDC"), PriceTickRow(T0, APT, Decimal("5"))]
        )
        journal.add_price_ticks([PriceTickRow(T0 + timedelta(hours=48), APT, Decimal("6"))])
        dca = OrderSnapshot(
            kind="dca",
            order_id=DCA_ID,
            wallet=WALLET,
            from_token=USDC,
            to_token=APT,
            status="filled",
            amount_total=Decimal("50"),
            strategy="dca-apt",
            intent_id=intent.id,
            amount_spent=Decimal("50"),
        )
        limit = OrderSnapshot(
            kind="limit",
            order_id=LIMIT_ID,
            wallet=WALLET,
            from_token=APT,
            to_token=USDC,
            status="active",
            amount_total=Decimal("1.5"),
            strategy="tp-apt",
            rate=Decimal("7.25"),
        )
        journal.observe_orders(
            [OrderObservation(dca, fills=fills), OrderObservation(limit)],
            observed_at=T0 + timedelta(hours=49),
            source="poll",
        )
        store_pause(journal, "grid-old", True, at=T0)
        return intent.id


def settings_for(url: str, **console: Any) -> Settings:
    """Settings with the two strategies, a wallet key and an API key (secrets to hide)."""
    return Settings(
        journal={"url": url},
        wallet={"address": WALLET, "private_key": SecretStr(WALLET_KEY)},
        api={"api_key": SecretStr(API_KEY)},
        console={"enabled": True, **console},
        strategies=[
            {
                "name": "dca-apt",
                "plugin": "recurring_dca",
                "schedule": {"interval_seconds": 3600},
                "params": {"amount": Decimal("25"), "from_token": "USDC", "to_token": "APT"},
                "budget": {"USDC": Decimal("100.50")},
            },
            {"name": "tp-apt", "plugin": "take_profit", "schedule": {"cron": "0 * * * *"}},
        ],
    )


def daemon_status() -> DaemonStatus:
    """A running daemon's status: two strategies, one with an error."""
    return DaemonStatus(
        pid=4242,
        state="running",
        started_at="2026-05-01T00:00:00+00:00",
        updated_at="2026-05-03T01:00:00+00:00",
        mode="paper",
        wallet=WALLET,
        version="test",
        strategies={
            "dca-apt": StrategyStatus(ticks=3, actions=1, last_tick="2026-05-03T00:00:00+00:00"),
            "tp-apt": StrategyStatus(ticks=2, errors=1, last_error="ValueError: no price"),
        },
        open_orders=1,
        apt_balance="12.34567891",
    )
