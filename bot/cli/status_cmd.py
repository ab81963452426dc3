"""`bot status [--json] [--all]`: is the daemon running, and how is it doing.

Exit codes (the Docker HEALTHCHECK relies on them): 0 the daemon runs and looks healthy,
1 not running, stale or unhealthy, 2 a configuration error or a journal no bot can use
(damaged, or written by a newer bot). Reads local files only (the status file, the wallet
lock, the journal): no network connection is opened.

`--all`: every wallet's daemon sharing the journal (its `daemons` table: host, pid,
health, last tick, last beat, stale or not; `bot.ops.status_all`), from the journal alone;
exit 0 when every one listed is ok, 1 otherwise (or none listed).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, NoReturn, Protocol

import typer

from bot.cli.common import EXIT_USAGE, fail, load_or_exit
from bot.clock import RealClock


def status(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    every: Annotated[
        bool,
        typer.Option(
            "--all", help="Every wallet's daemon sharing the journal (its heartbeat rows)."
        ),
    ] = False,
) -> None:
    """Whether the daemon runs, its strategies, open orders, spend and gas.

    Exit 0 when it runs and looks healthy, 1 when not running or stale, 2 on a config error
    or a journal no bot can use.
    """
    from bot.ops.status_view import read_view
    from bot.paper.core.registry import PaperTokens

    settings = load_or_exit(ctx)
    _refuse_unusable_journal(settings.journal.url)
    if every:
        _all(settings.journal.url, settings.daemon.heartbeat_seconds, as_json=as_json)
    # Cap symbols are resolved offline by the packaged token list (status opens no
    # connection); caps given by address need no list at all.
    tokens = PaperTokens.from_token_list().book
    _show(read_view(settings, now=RealClock().now(), tokens=tokens), as_json=as_json)


def _all(url: str, heartbeat_seconds: int, *, as_json: bool) -> None:
    """`--all`: list every wallet's daemon of the journal and exit with the verdict."""
    from bot.ops.status_all import read_all

    view = read_all(url, now=RealClock().now(), default_heartbeat_seconds=heartbeat_seconds)
    _show(view, as_json=as_json)


class _StatusView(Protocol):
    """A status to print: one wallet's (`bot status`) or every wallet's (`--all`)."""

    @property
    def exit_code(self) -> int: ...
    def lines(self) -> list[str]: ...
    def to_json(self) -> dict[str, Any]: ...


def _show(view: _StatusView, *, as_json: bool) -> NoReturn:
    """Print `view` as lines or JSON, then exit with its verdict."""
    if as_json:
        typer.echo(json.dumps(view.to_json(), indent=2, sort_keys=True))
    else:
        for line in view.lines():
            typer.echo(line)
    raise typer.Exit(view.exit_code)


def _refuse_unusable_journal(url: str) -> None:
    """One line and exit 2 for a damaged journal or a newer bot's.

    A missing journal, or one not migrated yet, is only a remark in the status (`bot run`
    creates or migrates it).
    """
    from bot.journal import Journal, JournalError, JournalUnusable

    try:
        Journal.open(url, readonly=True).close()
    except JournalUnusable as exc:
        fail(str(exc), EXIT_USAGE)
    except JournalError:
        pass  # shown as the status's journal remark (`read_view`)
