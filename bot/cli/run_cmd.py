"""`bot run [--paper | --dry-run]`, `bot once [--dry-run] [--paper]`.

`bot run` is the product. The application behind both verbs lives in `bot.app` (the
engine and jobs: `bot.app.build`; the daemon: `bot.app.daemon` and `daemon_start`); this
module parses the options and prints what the application reports.

One output format at a time (`[log].format`, `--log-format`): with `console`, the
reporter's lines on stdout (what happened, in numbers) and the structured log on stderr
only for warnings and errors (everything at `[log].level = "debug"`); with `json`, `bot
run` writes the JSON log only, its lines as `console` events (`running_log_level`).
`bot once` prints its lines (the command's output) in either format.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from bot.api import ApiError
from bot.chain import ChainError
from bot.cli.common import (
    EXIT_FAILURE,
    EXIT_USAGE,
    config_path,
    demo_settings_or_exit,
    fail,
    load_or_exit,
    state,
)
from bot.config import Settings
from bot.logging import configure_logging, get_logger, running_log_level

__all__ = ["ConsoleReporter", "once", "run"]


class ConsoleReporter:
    """The application's lines on the console: what happens on stdout, problems on stderr.

    `json=True` (the JSON log format): nothing on stdout; each line is a `console` event
    of the JSON log (`text`; a problem at level warning), beside the structured events
    with the exact numbers (`action`, `order.fill`, `order.end`, `strategy.summary`).
    """

    def __init__(self, *, json: bool = False) -> None:
        self.json = json

    def say(self, line: str) -> None:
        """Print `line` on stdout (JSON format: a `console` event of the log)."""
        if self.json:
            get_logger().info("console", text=line)
        else:
            typer.echo(line)

    def warn(self, line: str) -> None:
        """Print `line` on stderr (JSON format: a `console` warning of the log)."""
        if self.json:
            get_logger().warning("console", text=line)
        else:
            typer.echo(line, err=True)


def _one_format(ctx: typer.Context, settings: Settings) -> bool:
    """Set the running bot's log level for its format; True for the JSON format."""
    json = (state(ctx).log_format or settings.log.format) == "json"
    level = running_log_level("json" if json else "console", settings.log.level)
    configure_logging(fmt="json" if json else "console", level=level)
    return json


def _settings(ctx: typer.Context, *, paper: bool) -> Settings:
    """The config; `--paper`: in paper mode, and the demo's when there is no config file.

    `--paper` on a live config is refused (exit 2): the paper world's orders would go into
    the live journal, under the live wallet.
    """
    if paper and config_path(state(ctx)) is None:
        return demo_settings_or_exit(load_or_exit(ctx))
    settings = load_or_exit(ctx)
    if paper and settings.mode == "live":  # its journal and key are the live ones
        fail(
            "--paper with a live config would record paper orders in its journal under the "
            "live wallet: use a paper config (`bot init` makes one), or drop --paper",
            EXIT_USAGE,
        )
    return settings.model_copy(update={"mode": "paper"}) if paper else settings


def once(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show, send nothing that spends.")
    ] = False,
    paper: Annotated[
        bool,
        typer.Option(
            "--paper",
            help="In the paper world (with no config file: the demo's, as `bot run --paper`).",
        ),
    ] = False,
) -> None:
    """Tick every strategy once; exit non-zero if any strategy failed."""
    from bot.app.build import tick_once
    from bot.app.reporter import report_lines

    settings = _settings(ctx, paper=paper)
    if not settings.strategies:
        fail(
            "no [[strategies]] configured: `bot init` makes a config; "
            "`bot once --dry-run --paper` with no config ticks the demo's",
            EXIT_USAGE,
        )
    _one_format(ctx, settings)  # its lines are the command's output, in either format
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
    settings = _settings(ctx, paper=paper)
    if not settings.strategies:
        fail("no [[strategies]] configured (see config.example.toml)", EXIT_USAGE)
    json = _one_format(ctx, settings)
    from bot.app.daemon_start import run_daemon

    asyncio.run(
        run_daemon(
            settings,
            dry_run=dry_run,
            config_file=config_path(state(ctx)),
            force_paper=paper,
            reporter=ConsoleReporter(json=json),
        )
    )
