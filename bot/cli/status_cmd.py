"""`bot status [--json]`: is the daemon running, and how is it doing."""

from __future__ import annotations

from typing import Annotated

import typer

from bot.cli.common import fail


def status(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Whether the daemon runs, its strategies, open orders, spend and gas (issue 9)."""
    fail("bot status: not built yet")
