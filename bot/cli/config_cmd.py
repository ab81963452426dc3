"""`bot config check [FILE]` and `bot config show`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli.common import config_path, load_or_exit, state
from bot.logging import mask_url

app = typer.Typer(help="Check or show the configuration.", no_args_is_help=True)


@app.command("check")
def check(
    ctx: typer.Context,
    path: Annotated[
        Path | None, typer.Argument(help="Config file (default: --config, $BOT_CONFIG).")
    ] = None,
) -> None:
    """Validate a configuration file plus BOT_* environment overrides; exit 2 if invalid."""
    settings = load_or_exit(ctx, path)
    source = config_path(state(ctx), path)
    where = str(source) if source else "built-in defaults"
    strategies = len(settings.strategies)
    plural = "y" if strategies == 1 else "ies"
    typer.echo(f"config OK: {where} (mode {settings.mode}, {strategies} strateg{plural})")


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
