"""`bot doctor [--live]`: read-only checks before going live, a pass/fail line each."""

from __future__ import annotations

from typing import Annotated

import typer

from bot.cli.common import fail


def doctor(
    ctx: typer.Context,
    live: Annotated[bool, typer.Option("--live", help="Check the live config.")] = False,
) -> None:
    """Check config, key, node, API key, balances, gas, journal and clock (issue 9)."""
    fail("bot doctor: not built yet")
