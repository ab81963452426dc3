"""`bot record` (the price recorder) and `bot series import | synth`."""

from __future__ import annotations

import typer

from bot.cli.common import fail

series_app = typer.Typer(
    help="Price series: import from elsewhere, synthesise.", no_args_is_help=True
)


def record(ctx: typer.Context) -> None:
    """Record prices of the configured tokens on a schedule (issue 10)."""
    fail("bot record: not built yet")


@series_app.command("synth")
def synth(ctx: typer.Context) -> None:
    """Write a seeded synthetic series (issue 10)."""
    fail("bot series synth: not built yet")


def daemon_record_jobs(settings: object, runtime: object, start: object) -> list[object]:
    """The daemon's side jobs for `[record]` (recording, retention); none when disabled.

    Args:
        settings: the `Settings`.
        runtime: the open `Runtime`.
        start: the first fire time.
    """
    return []
