"""The running bot's one-line summary never shows a P&L that counts unpriced trades as gain."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from bot.accounting import PriceBook, PricePoint, Trade, account
from bot.app.summaries import summary_line
from bot.price_view import PriceConvention

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def _trade(hours: int) -> Trade:
    return Trade(
        time=T0 + timedelta(hours=hours),
        strategy="dca",
        wallet="0xa",
        ref=f"dca:1#{hours}",
        sold_token="USDC",
        sold=Decimal(25),
        bought_token="APT",
        bought=Decimal(5),
    )


def test_with_every_trade_priced_the_line_shows_the_pnl() -> None:
    book = PriceBook.of_points(
        {"USDC": [PricePoint(T0, Decimal(1))], "APT": [PricePoint(T0, Decimal("5.2"))]}
    )
    summary = account([_trade(0), _trade(1)], book, valued_at=T0 + timedelta(hours=2), name="dca")
    line = summary_line(summary, PriceConvention(["USDC"]))
    assert line.endswith("value 52.00 USD; P&L +2.00 USD (FIFO)"), line


def test_an_unpriced_trade_makes_the_pnl_not_available_instead_of_a_false_gain() -> None:
    # APT is priced, USDC only from the second trade on: the first trade has no value, so
    # its lot would cost nothing and the P&L would count its 5 APT as pure gain.
    book = PriceBook.of_points(
        {
            "USDC": [PricePoint(T0 + timedelta(hours=1), Decimal(1))],
            "APT": [PricePoint(T0 + timedelta(hours=1), Decimal("5.2"))],
        }
    )
    summary = account([_trade(0), _trade(1)], book, valued_at=T0 + timedelta(hours=2), name="dca")
    assert summary.unvalued == ("dca:1#0",)
    line = summary_line(summary, PriceConvention(["USDC"]))
    assert line.endswith("value 52.00 USD; P&L n/a (1 trade without a USD price)"), line
