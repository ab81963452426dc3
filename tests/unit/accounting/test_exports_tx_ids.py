"""CoinTracking skips a row whose Tx-ID it already has: every exported Tx-ID is unique.

Fills the provider gave no `txNumber` share their order's ref; without care all but the
first would vanish from the tax import without a word (found by a review of #18).
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from bot.accounting.exports import ExportFormat
from bot.app.export import ExportRequest, export_trades
from bot.journal import Journal
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot
from tests.support.console_rig import APT, T0, USDC, WALLET

LIMIT = "0x" + "e2" * 32


def test_partial_fills_without_a_number_get_their_own_tx_ids(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    with Journal.open(url) as journal:
        fills = [
            FillRecord(
                f"0x{n:064x}",
                "filled",
                None,
                Decimal("0.5"),
                Decimal("3.6"),
                None,
                T0 + timedelta(hours=n),
            )
            for n in (1, 2, 3)
        ]
        order = OrderSnapshot(
            kind="limit",
            order_id=LIMIT,
            wallet=WALLET,
            from_token=APT,
            to_token=USDC,
            status="filled",
            amount_total=Decimal("1.5"),
            strategy="tp",
            rate=Decimal("7.2"),
        )
        journal.observe_orders(
            [OrderObservation(order, fills=fills)],
            observed_at=T0 + timedelta(hours=4),
            source="poll",
        )
    out = tmp_path / "cointracking.csv"
    with Journal.open(url, readonly=True) as journal:
        export_trades(
            journal, ExportRequest(ExportFormat.COINTRACKING, out), ["tp"], lambda t: None
        )
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    ids = [row["Tx-ID"] for row in rows]
    assert ids == [f"limit:{LIMIT}", f"limit:{LIMIT}~2", f"limit:{LIMIT}~3"]
    assert sum(Decimal(row["Sell Amount"]) for row in rows) == Decimal("1.5")
