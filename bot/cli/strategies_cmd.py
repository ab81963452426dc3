"""`bot strategies list | check NAME | pause NAME | resume NAME`.

A pause is kept in the journal (`bot.engine.pauses`) and outlives restarts. When the daemon
runs (it holds the wallet lock) the request goes through its command queue, so the daemon
stops asking the strategy at once and answers; otherwise the journal is written here and
the daemon reads it when it starts.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from bot.app.opening import wallet_lock
from bot.app.runtime import configured_wallet
from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, load_or_exit, open_journal
from bot.cli.token_checks import Offline, known_tokens, print_lines
from bot.clock import RealClock
from bot.config import Settings, StrategyEntry
from bot.engine.commands import wait_for_command
from bot.engine.pauses import paused_strategies, store_pause
from bot.engine.plugins import PluginError, available_plugins, build_strategy
from bot.engine.wallet_lock import WalletLockError

__all__ = ["app"]

app = typer.Typer(help="Strategy plugins.", no_args_is_help=True)

_WAIT_SECONDS = 30.0
"""How long `pause`/`resume` wait for the running daemon's answer."""


@app.command("list")
def strategies_list(ctx: typer.Context) -> None:
    """The plugins available, and the strategies configured (paused ones say so)."""
    settings = load_or_exit(ctx)
    try:
        plugins = available_plugins(settings.scheduler.strategy_dirs)
    except PluginError as exc:
        fail(str(exc), EXIT_USAGE)
    paused = _paused(settings)
    typer.echo("plugins:")
    for name, description in sorted(plugins.items()):
        typer.echo(f"  {name:<16} {description}")
    typer.echo("configured:")
    for entry in settings.strategies:
        when = (
            f"every {entry.schedule.interval_seconds}s"
            if entry.schedule.interval_seconds
            else f"cron {entry.schedule.cron}"
        )
        flag = "" if entry.enabled else " (disabled)"
        if entry.name in paused:
            flag += f" (paused: bot strategies resume {entry.name})"
        typer.echo(f"  {entry.name:<16} {entry.plugin} {when}{flag}")


@app.command("check")
def strategies_check(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A configured strategy's name.")],
    offline: Offline = False,
) -> None:
    """Load one configured strategy and check it before it trades; exit 2 if it cannot run.

    Its params validate; every token it names is known (paper: the packaged list; live:
    the provider's list, cached 6 h beside the journal), with the closest known symbols
    for one that is not; its amounts fit their token's decimals; a DCA slice or order
    expiry shorter than its ticks is warned about. A provider that cannot be reached is
    said in one line, exit 1 (`--offline`: packaged list only).
    """
    from bot.app.strategy_checks import check_strategy

    settings = load_or_exit(ctx)
    entry = _entry(settings, name)
    try:
        strategy = build_strategy(entry, settings.scheduler.strategy_dirs)
    except PluginError as exc:
        fail(str(exc), EXIT_USAGE)
    known = known_tokens(settings, offline=offline)
    report = check_strategy(strategy, entry, known.book, complete=known.complete)
    code = print_lines(report, known)
    if code:
        raise typer.Exit(code)
    warned = f", {len(report.warnings)} warning(s)" if report.warnings else ""
    typer.echo(
        f"{name}: OK ({entry.plugin}, params {strategy.params.model_dump(mode='json')}{warned})"
    )


@app.command("pause")
def pause(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A configured strategy's name.")],
) -> None:
    """Stop ticking a strategy (its open orders stay; the pause outlives restarts)."""
    _set_pause(ctx, name, paused=True)


@app.command("resume")
def resume(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A paused strategy's name.")],
) -> None:
    """Tick a paused strategy again, from its next scheduled tick."""
    _set_pause(ctx, name, paused=False)


def _paused(settings: Settings) -> dict[str, object]:
    """The paused strategies, or none when there is no usable journal yet."""
    from bot.journal import Journal, JournalError

    try:
        wallet = configured_wallet(settings)  # its pauses only (a journal of many wallets)
        with Journal.open(
            settings.journal.url, migrate=False, readonly=True, wallet=wallet
        ) as journal:
            return dict(paused_strategies(journal))
    except JournalError:
        return {}


def _entry(settings: Settings, name: str) -> StrategyEntry:
    entry = next((e for e in settings.strategies if e.name == name), None)
    if entry is None:
        known = ", ".join(e.name for e in settings.strategies) or "none"
        fail(f"no configured strategy named {name!r} (configured: {known})", EXIT_USAGE)
    return entry


def _set_pause(ctx: typer.Context, name: str, *, paused: bool) -> None:
    from bot.journal import JournalError

    settings = load_or_exit(ctx)
    if paused or name not in _paused(settings):  # a removed strategy may still be resumed
        _entry(settings, name)
    try:
        _change_pause(settings, name, paused=paused)
    except JournalError as exc:
        fail(f"journal {settings.journal.url}: {str(exc).splitlines()[0]}", EXIT_USAGE)


def _change_pause(settings: Settings, name: str, *, paused: bool) -> None:
    wallet = configured_wallet(settings)
    lock = None if wallet is None else wallet_lock(settings, wallet)
    try:
        daemon_runs = lock is not None and not lock.try_acquire()
    except WalletLockError as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        if daemon_runs:
            typer.echo(asyncio.run(_through_daemon(settings, name, paused)))
            return
        with open_journal(settings.journal.url) as journal:
            if wallet is not None:
                journal.bind_wallet(wallet)  # the pause is this wallet's
            changed = store_pause(journal, name, paused, at=RealClock().now())
    finally:
        if lock is not None and not daemon_runs:
            lock.release()
    verb = "paused" if paused else "resumed"
    if not changed:
        typer.echo(f"{name} was already {verb}")
    else:
        typer.echo(f"{name} {verb} (no daemon runs now: it applies when the daemon starts)")


async def _through_daemon(settings: Settings, name: str, paused: bool) -> str:
    kind = "pause" if paused else "resume"
    with open_journal(settings.journal.url) as journal:
        command_id = journal.enqueue_command(
            kind, {"strategy": name}, at=RealClock().now(), wallet=configured_wallet(settings)
        )
        command = await wait_for_command(journal, command_id, _WAIT_SECONDS)
    if command is None:
        fail(
            f"the daemon holds the wallet but did not answer within {_WAIT_SECONDS:.0f} s; "
            f"the request stays queued (command {command_id})",
            EXIT_FAILURE,
        )
    if command.state == "failed":
        fail(f"the daemon refused: {command.result}", EXIT_FAILURE)
    return f"{command.result} (by the running daemon)"


@app.command("new")
def new(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The plugin's name: a Python identifier.")],
    template: Annotated[
        str, typer.Option("--from", help="The template it starts from: recurring_dca.")
    ] = "recurring_dca",
    directory: Annotated[
        str, typer.Option("--dir", help="Where the plugin goes ([scheduler].strategy_dirs).")
    ] = "strategies",
    tests: Annotated[str, typer.Option("--tests", help="Where its test goes.")] = "tests",
    force: Annotated[bool, typer.Option("--force", help="Replace existing files.")] = False,
) -> None:
    """Write a strategy plugin from a template, and its test (a short backtest)."""
    from pathlib import Path

    from bot.app.strategy_template import config_entry, write_strategy

    made = write_strategy(
        name, template=template, directory=Path(directory), tests=Path(tests), force=force
    )  # a SetupError: one line, exit 2
    typer.echo(f"wrote {made.plugin} (plugin {name}) and {made.test}")
    typer.echo(f"add to config.toml ({directory} must be in [scheduler].strategy_dirs):")
    typer.echo("")
    typer.echo(config_entry(name))
    typer.echo("then:")
    typer.echo(f"  bot strategies check {name}")
    typer.echo(f"  python -m pytest {made.test}")
