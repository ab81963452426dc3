"""`bot config check [FILE]` and `bot config show`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli.common import EXIT_USAGE, config_path, fail, load_or_exit, state
from bot.logging import mask_url

app = typer.Typer(help="Check or show the configuration.", no_args_is_help=True)


@app.command("check")
def check(
    ctx: typer.Context,
    path: Annotated[
        Path | None, typer.Argument(help="Config file (default: --config, $BOT_CONFIG).")
    ] = None,
) -> None:
    """Validate a configuration file plus BOT_* environment overrides; exit 2 if invalid.

    Checks every key, then what the config needs to run: every enabled strategy's plugin
    loads and its params validate (as `bot strategies check` and `bot run` do), and every
    token named by [risk] (caps, allowed_tokens, pyth_feeds) and by the strategies'
    budgets is known. Tokens are looked up offline, in the packaged token list: in paper
    mode that is the paper world's own list, so an unknown name is an error; in live mode
    the provider's list may know more, so an unknown name is only a warning ("not checked
    against the live list"). Secret files (keys) are not read: `bot doctor` checks them.
    One line per problem, exit 2; `config OK` and exit 0 otherwise.
    """
    from bot.ops.config_check import check_settings

    settings = load_or_exit(ctx, path)
    report = check_settings(settings)
    for warning in report.warnings:
        typer.echo(f"bot: warning: {warning}", err=True)
    if report.problems:
        fail("\n".join(report.problems), EXIT_USAGE)
    source = config_path(state(ctx), path)
    where = str(source) if source else "built-in defaults"
    strategies = len(settings.strategies)
    plural = "y" if strategies == 1 else "ies"
    warned = len(report.warnings)
    extra = f", {warned} warning{'s' if warned > 1 else ''}" if warned else ""
    typer.echo(f"config OK: {where} (mode {settings.mode}, {strategies} strateg{plural}{extra})")


@app.command("show")
def show(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="Config file (default: --config).")] = None,
) -> None:
    """Print the effective configuration as JSON, with every secret masked.

    HTTP URLs (`[chain].node_url`, `[api].base_url`…) are shown with `mask_url`: node
    providers put keys in the path, the query or the user info.
    """
    settings = load_or_exit(ctx, path)
    typer.echo(json.dumps(_mask_urls(settings.masked()), indent=2, sort_keys=True))


def _mask_urls(data: Any) -> Any:
    if isinstance(data, dict):
        return {key: _mask_urls(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_mask_urls(value) for value in data]
    if isinstance(data, str) and data.startswith(("http://", "https://")):
        return mask_url(data)
    return data
