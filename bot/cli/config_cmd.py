"""`bot config check [FILE]` and `bot config show`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli.common import config_path, load_or_exit, state
from bot.cli.token_checks import Offline, built, known_tokens, print_lines
from bot.logging import mask_url

app = typer.Typer(help="Check or show the configuration.", no_args_is_help=True)


@app.command("check")
def check(
    ctx: typer.Context,
    path: Annotated[
        Path | None, typer.Argument(help="Config file (default: --config, $BOT_CONFIG).")
    ] = None,
    offline: Offline = False,
) -> None:
    """Validate a configuration file plus BOT_* environment overrides; exit 2 if invalid.

    Checks every key, then what the config needs to run: every enabled strategy's plugin
    loads and its params validate (as `bot strategies check` and `bot run` do); every
    token named by [risk] (caps, allowed_tokens, pyth_feeds), by the strategies' budgets
    and by the strategies themselves (`tokens()`) is known, with the closest known
    symbols for one that is not; every amount fits its token's decimals; and a DCA slice
    or order expiry shorter than the strategy's ticks is warned about. Paper mode looks
    tokens up in the packaged list (the paper world's own); live mode in the provider's
    list (fetched, cached 6 h beside the journal). When the provider cannot be reached,
    one line says so and the exit code is 1 (`--offline`: packaged list only, unknown
    names are warnings). Secret files (keys) are not read: `bot doctor` checks them.
    One line per problem, exit 2; `config OK` and exit 0 otherwise.
    """
    from bot.app.strategy_checks import StrategyReport, check_strategies
    from bot.ops.config_check import check_settings

    settings = load_or_exit(ctx, path)
    known = known_tokens(settings, offline=offline)
    found = check_settings(settings, known.book, complete=known.complete)
    report = StrategyReport(found.problems, found.warnings)
    enabled = [entry for entry in settings.strategies if entry.enabled]
    report.extend(check_strategies(built(settings, enabled), known.book, complete=known.complete))
    code = print_lines(report, known)
    if code:
        raise typer.Exit(code)
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
