"""`bot run [--paper | --dry-run]`, `bot once [--dry-run]`.

`bot run` is the product. The application behind both verbs lives in `bot.app` (the
engine and jobs: `bot.app.build`; the daemon: `bot.app.daemon` and `daemon_start`); this
module parses the options and prints what the application reports.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from bot.api import ApiError
from bot.chain import ChainError
from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, config_path, fail, load_or_exit, state

__all__ = ["ConsoleReporter", "once", "run"]


class ConsoleReporter:
    """The application's lines on the console: what happens on stdout, problems on stderr."""

    def say(self, line: str) -> None:
        """Print `line` on stdout."""
        typer.echo(line)

    def warn(self, line: str) -> None:
        """Print `line` on stderr."""
        typer.echo(line, err=True)


def once(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show, send nothing that spends.")
    ] = False,
) -> None:
    """Tick every strategy once; exit non-zero if any strategy failed."""
    from bot.app.build import tick_once
    from bot.app.reporter import report_lines

    settings = load_or_exit(ctx)
    try:
        reports, engine = asyncio.run(tick_once(settings, dry_run=dry_run))
    except (ApiError, ChainError) as exc:  # the provider or node unreachable at start-up
        fail(str(exc), EXIT_FAILURE)
    for report in reports:
        for line in report_lines(report, engine.convention):
            typer.echo(line)
    if any(not r.ok for r in reports):
        raise typer.Exit(1)


def run(
    ctx: typer.Context,
    paper: Annotated[bool, typer.Option("--paper", help="Trade in the paper world.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show, send nothing that spends.")
    ] = False,
) -> None:
    """Run the strategies on their schedules until stopped (SIGTERM/SIGINT; SIGHUP reloads)."""
    if paper and dry_run:
        fail("choose one of --paper and --dry-run", EXIT_USAGE)
    if paper and config_path(state(ctx)) is None:
        from bot.cli.demo import demo_settings

        settings = demo_settings(load_or_exit(ctx))
    else:
        settings = load_or_exit(ctx)
        if paper:
            settings = settings.model_copy(update={"mode": "paper"})
    if not settings.strategies:
        fail("no [[strategies]] configured (see config.example.toml)", EXIT_USAGE)
    from bot.app.daemon_start import run_daemon

    asyncio.run(
        run_daemon(
            settings,
            dry_run=dry_run,
            config_file=config_path(state(ctx)),
            force_paper=paper,
            reporter=ConsoleReporter(),
        )
    )
