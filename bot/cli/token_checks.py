"""The token checks `bot config check` and `bot strategies check` share (printing only).

Which tokens are known: paper mode, the packaged list (what the paper world trades);
live mode, the provider's list (`bot.app.live_tokens`, cached beside the journal), or the
packaged list with `--offline` — then a name it lacks is only a warning. The checks
themselves are `bot.app.strategy_checks` and `bot.ops.config_check`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Annotated

import typer

from bot.app.strategy_checks import PackagedTokens, StrategyReport, TokenSourceError
from bot.aptos.tokens import TokenBook
from bot.config import Settings, StrategyEntry
from bot.engine.plugins import PluginError, build_strategy
from bot.engine.strategy import Strategy

__all__ = ["KnownTokens", "Offline", "built", "known_tokens", "print_lines"]

Offline = Annotated[
    bool,
    typer.Option(
        "--offline",
        help="Live mode: check token names against the packaged list only (names it lacks "
        "are warnings) instead of the provider's list (fetched, cached 6 h beside the journal).",
    ),
]


@dataclass(frozen=True)
class KnownTokens:
    """The book to check against, whether it is complete, and why the live one is missing."""

    book: TokenBook
    complete: bool
    unreachable: str | None = None


def _run(coroutine: Awaitable[TokenBook]) -> TokenBook:
    async def wait() -> TokenBook:
        return await coroutine

    return asyncio.run(wait())


def known_tokens(settings: Settings, *, offline: bool) -> KnownTokens:
    """The tokens names are checked against for `settings` (see the module docstring)."""
    packaged = PackagedTokens()
    if settings.mode != "live":
        return KnownTokens(packaged.book(), complete=True)
    if offline:
        return KnownTokens(packaged.book(), complete=False)
    from bot.api.tokens import fetch_token_book
    from bot.app.live_tokens import CACHE_NAME, ProviderTokens
    from bot.app.runtime import connect
    from bot.clock import RealClock
    from bot.journal.db import sqlite_file

    once = settings.model_copy(update={"api": settings.api.model_copy(update={"max_attempts": 1})})

    async def fetch() -> TokenBook:  # one attempt: a check says "unreachable", it does not wait
        connection = connect(once)  # an unreadable API key file: "cannot be had", said why
        try:
            async with connection.client as client:
                return await fetch_token_book(client)
        finally:
            await connection.node.aclose()

    journal_file = sqlite_file(settings.journal.url)
    cache = journal_file.parent / CACHE_NAME if journal_file is not None else None
    source = ProviderTokens(fetch, cache, RealClock().now(), _run)
    try:
        return KnownTokens(source.book(), complete=True)
    except TokenSourceError as exc:
        return KnownTokens(packaged.book(), complete=False, unreachable=str(exc))


def built(settings: Settings, entries: list[StrategyEntry]) -> list[tuple[Strategy, StrategyEntry]]:
    """(strategy, entry) of the entries that build; the others are the plugin check's."""
    pairs: list[tuple[Strategy, StrategyEntry]] = []
    for entry in entries:
        try:
            pairs.append((build_strategy(entry, settings.scheduler.strategy_dirs), entry))
        except PluginError:
            continue
    return pairs


def print_lines(report: StrategyReport, known: KnownTokens) -> int:
    """Print warnings and problems to stderr; the exit code they call for (0 when none).

    Problems exit 2 (a configuration error). A live list that could not be had exits 1
    (a runtime failure) with one line saying so: the names were not checked against it.
    """
    from bot.cli.common import EXIT_FAILURE, EXIT_USAGE

    for warning in report.warnings:
        typer.echo(f"bot: warning: {warning}", err=True)
    for problem in report.problems:
        typer.echo(f"bot: error: {problem}", err=True)
    if known.unreachable is not None:
        typer.echo(
            f"bot: error: {known.unreachable}; token names were checked against the packaged "
            "list only (--offline to accept that)",
            err=True,
        )
    if report.problems:
        return EXIT_USAGE
    return EXIT_FAILURE if known.unreachable is not None else 0
