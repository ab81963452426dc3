"""The `bot` command line: parses arguments and prints; what the verbs run is `bot.app`.

A `SetupError` the application raises under any verb is one line and exit 2 (`_Verbs`).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Annotated, Any, ClassVar

import typer

from bot import __version__
from bot.app.errors import SetupError
from bot.cli.common import EXIT_USAGE, fail, state
from bot.cli.lazy import LazyGroup, LazyVerb

__all__ = ["app", "main"]

_OPTIONS = {"add_completion": False, "pretty_exceptions_enable": False, "rich_markup_mode": None}


class _Verbs(LazyGroup):
    """Every verb of `bot`, by module; each is imported only when used."""

    verbs: ClassVar[dict[str, LazyVerb]] = {
        name: LazyVerb(target, **_OPTIONS)
        for name, target in {
            "init": "bot.cli.init_cmd:init",
            "run": "bot.cli.run_cmd:run",
            "once": "bot.cli.run_cmd:once",
            "status": "bot.cli.status_cmd:status",
            "doctor": "bot.cli.doctor_cmd:doctor",
            "prices": "bot.cli.market:prices",
            "quote": "bot.cli.market:quote",
            "orders": "bot.cli.orders_cmd:app",
            "report": "bot.cli.report_cmd:report",
            "export": "bot.cli.export_cmd:app",
            "cancel": "bot.cli.orders_cmd:cancel",
            "reconcile": "bot.cli.orders_cmd:reconcile",
            "strategies": "bot.cli.strategies_cmd:app",
            "record": "bot.cli.record_cmd:record",
            "series": "bot.cli.record_cmd:series_app",
            "backtest": "bot.cli.backtest_cmd:backtest",
            "hyperopt": "bot.cli.hyperopt_cmd:hyperopt",
            "config": "bot.cli.config_cmd:app",
            "paper": "bot.cli.paper_cmd:app",
            "journal": "bot.cli.journal_cmd:app",
            "keys": "bot.cli.keys_cmd:app",
            "alerts": "bot.cli.alerts_cmd:app",
            "api": "bot.cli.api_cmd:app",
        }.items()
    }

    def invoke(self, ctx: Any) -> Any:
        """Run the verb; a `SetupError` of the application is one line and exit 2."""
        try:
            return super().invoke(ctx)
        except SetupError as exc:
            fail(str(exc), EXIT_USAGE)


app = typer.Typer(
    name="bot",
    help="An automated DCA / limit-order trading bot for Aptos (trades through Panora).",
    no_args_is_help=True,
    cls=_Verbs,
    **{**_OPTIONS, "add_completion": True},  # type: ignore[arg-type]  # `bot --install-completion`
)


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
    try:
        app()
    finally:
        # The process ends now. At exit, the cycle collector walks every object still
        # alive (the imported libraries', a backtest's results): 60 ms of a 1 s `bot
        # backtest`. Frozen, they are left to the exit itself; files are closed by then.
        gc.freeze()
