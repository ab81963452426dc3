"""The `bot` command line. The only place that wires the parts together."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot import __version__
from bot.cli import (
    backtest_cmd,
    config_cmd,
    doctor_cmd,
    journal_cmd,
    keys_cmd,
    market,
    orders_cmd,
    paper_cmd,
    record_cmd,
    run_cmd,
    status_cmd,
)
from bot.cli.common import state

__all__ = ["app", "main"]

app = typer.Typer(
    name="bot",
    help="An automated DCA / limit-order trading bot for Aptos (trades through Panora).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(config_cmd.app, name="config")
app.add_typer(paper_cmd.app, name="paper")
app.add_typer(journal_cmd.app, name="journal")
app.add_typer(keys_cmd.app, name="keys")
app.add_typer(orders_cmd.app, name="orders")
app.command("cancel")(orders_cmd.cancel)
app.command("reconcile")(orders_cmd.reconcile)
app.command("run")(run_cmd.run)
app.command("once")(run_cmd.once)
app.add_typer(run_cmd.strategies_app, name="strategies")
app.command("prices")(market.prices)
app.command("quote")(market.quote)
app.command("status")(status_cmd.status)
app.command("doctor")(doctor_cmd.doctor)
app.command("record")(record_cmd.record)
app.add_typer(record_cmd.series_app, name="series")
app.command("backtest")(backtest_cmd.backtest)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"bot {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="Config file (TOML). Default: $BOT_CONFIG, ./config.toml."
        ),
    ] = None,
    log_format: Annotated[
        str | None,
        typer.Option("--log-format", help="console or json (default: [log].format)."),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Global options."""
    if log_format not in (None, "console", "json"):
        raise typer.BadParameter("must be console or json", param_hint="--log-format")
    cli = state(ctx)
    cli.config = config
    cli.log_format = log_format


def main() -> None:
    """Entry point of the `bot` console script and `python -m bot`."""
    app()
