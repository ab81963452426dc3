"""The daemon's reports off the loop (Telegram, the periodic summary) count its wallet only.

Two wallets share one journal file and both run a strategy named `dca-apt`: the report
built for one wallet must hold that wallet's trades, never the other's.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from bot.app.report import ReportRequest, build_report_off_loop
from bot.app.summaries import StrategySummaries
from bot.journal import Journal
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot
from bot.price_view import PriceConvention
from tests.support.trade_journal import APT, T0, USDC, WALLET, write_trades

OTHER = "0x" + "cd" * 32


def _journal_of_two_wallets(path: Path) -> str:
    """WALLET's two 25 USDC slices, and OTHER's one slice of 1,000 USDC, both `dca-apt`."""
    write_trades(path, [(Decimal(5), Decimal(5)), (Decimal(5), Decimal(5))])
    url = f"sqlite:///{path}"
    other = OrderSnapshot(
        kind="dca",
        order_id="0xdca-other",
        wallet=OTHER,
        from_token=USDC,
        to_token=APT,
        status="completed",
        amount_total=Decimal(1000),
        strategy="dca-apt",
    )
    fill = FillRecord("0xo1", "filled", 1, Decimal(1000), Decimal(200), None, T0)
    with Journal.open(url) as journal:
        journal.observe_orders(
            [OrderObservation(other, fills=[fill])],
            observed_at=T0 + timedelta(hours=97),
            source="poll",
        )
    return url


async def test_a_report_off_the_loop_counts_the_given_wallet_only(tmp_path: Path) -> None:
    url = _journal_of_two_wallets(tmp_path / "bot.db")
    request = ReportRequest()
    ours = await build_report_off_loop(url, request, ["dca-apt"], wallet=WALLET)
    theirs = await build_report_off_loop(url, request, ["dca-apt"], wallet=OTHER)
    assert ours.summaries["dca-apt"].totals.invested == {USDC: Decimal(50)}
    assert theirs.summaries["dca-apt"].totals.invested == {USDC: Decimal(1000)}
    both = await build_report_off_loop(url, request, ["dca-apt"], wallet=None)
    assert both.summaries["dca-apt"].totals.invested == {USDC: Decimal(1050)}


async def test_the_periodic_summary_reads_its_journals_wallet(tmp_path: Path) -> None:
    url = _journal_of_two_wallets(tmp_path / "bot.db")
    with Journal.open(url, wallet=WALLET) as journal:
        summaries = StrategySummaries(journal, PriceConvention(), lambda: ["dca-apt"], url=url)
        (line,) = await summaries.lines_off_loop()
    assert "invested 50 " in line and "1000" not in line and "1050" not in line, line
