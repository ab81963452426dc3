"""`fills_page`: the console's fills across orders, scoped to the journal's wallet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from bot.journal import Journal
from bot.journal.fill_pages import FillQuery, fills_page
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot

T0 = datetime(2026, 5, 1, tzinfo=UTC)
MINE = "0x" + "ab" * 32
THEIRS = "0x" + "cd" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def _order(n: int, wallet: str) -> OrderObservation:
    snapshot = OrderSnapshot(
        kind="dca",
        order_id=f"0x{n:064x}",
        wallet=wallet,
        from_token=USDC,
        to_token=APT,
        status="active",
        amount_total=Decimal(100),
        strategy="dca-apt",
    )
    fills = [
        FillRecord(f"0x{n}{k}", "filled", k, Decimal(25), Decimal(5), None, T0 + timedelta(hours=k))
        for k in (1, 2)
    ]
    return OrderObservation(snapshot, fills=fills)


def test_a_wallets_journal_pages_its_own_fills_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    with Journal.open(url) as journal:
        journal.observe_orders([_order(1, MINE), _order(2, THEIRS)], observed_at=T0, source="poll")
    with Journal.open(url, readonly=True) as every:
        assert fills_page(every, FillQuery())[1] == 4
    with Journal.open(url, readonly=True, wallet=MINE) as mine:
        rows, total = fills_page(mine, FillQuery(), limit=1)
        assert total == 2 and [r.order_id for r in rows] == [f"0x{1:064x}"]
        rest, _ = fills_page(mine, FillQuery(), before_row_id=rows[0].row_id, limit=5)
        assert [r.fill.tx_number for r in rows + rest] == [2, 1]  # newest first
        later = FillQuery(start=T0 + timedelta(hours=2))
        assert [r.fill.tx_number for r in fills_page(mine, later)[0]] == [2]
