"""`bot backtest`: replay recorded prices through a strategy, report what it would have done."""

from __future__ import annotations

import typer

from bot.cli.common import fail


def backtest(ctx: typer.Context) -> None:
    """Backtest one strategy on a price series (issue 10)."""
    fail("bot backtest: not built yet")
