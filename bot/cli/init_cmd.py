"""`bot init [DIR]`: make a working folder (config, wallet key, folders), say what is next.

A few questions when run on a terminal (each with its default; a flag given is not asked
again), none with `--non-interactive` (scripts, Docker). What the folder holds and how it
is checked: `bot.app.init_dir`. The key is never printed: only the wallet's address.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from bot.app.errors import SetupError
from bot.app.init_dir import (
    DEFAULTS,
    KEY_FILE,
    STRATEGY_KINDS,
    InitChoices,
    check_amount,
    check_every,
    check_strategy,
    check_token,
    init_folder,
    next_commands,
)
from bot.money import format_decimal

__all__ = ["init"]


def _ask(question: str, default: str, check: Callable[[str], object]) -> str:
    """Ask until `check` accepts the answer (a `SetupError` is shown and asked again)."""

    def accept(text: str) -> str:
        try:
            check(text)
        except SetupError as exc:
            raise typer.BadParameter(str(exc)) from None
        return text

    answer: str = typer.prompt(question, default=default, value_proc=accept)
    return answer


def _questions(
    strategy: str | None,
    from_token: str | None,
    to_token: str | None,
    amount: str | None,
    every: str | None,
) -> tuple[str, str, str, str, str]:
    """The answers to what the flags left open."""
    kinds = " or ".join(STRATEGY_KINDS)
    strategy = strategy or _ask(f"Strategy ({kinds})", DEFAULTS["strategy"], check_strategy)
    spend = "spent" if strategy == "recurring_dca" else "sold by the ladder"
    from_token = from_token or _ask(
        f"Token {spend}", DEFAULTS["from_token"], lambda t: check_token(t, "--from-token")
    )
    to_token = to_token or _ask(
        "Token bought", DEFAULTS["to_token"], lambda t: check_token(t, "--to-token")
    )
    per = "per buy" if strategy == "recurring_dca" else "per rung"
    amount = amount or _ask(f"Amount {per} (in {from_token})", DEFAULTS["amount"], check_amount)
    when = "Time between buys" if strategy == "recurring_dca" else "How often the ladder looks"
    every = every or _ask(f"{when} (e.g. 1 day, 6h)", DEFAULTS["every"], check_every)
    return strategy, from_token, to_token, amount, every


def _said(choices: InitChoices) -> str:
    """The strategy in words."""
    amount = f"{format_decimal(choices.amount)} {choices.from_token}"
    if choices.strategy == "recurring_dca":
        return f"recurring_dca, {amount} → {choices.to_token} every {choices.every}"
    return f"limit_ladder, rungs of {amount} → {choices.to_token}, looks every {choices.every}"


def init(
    directory: Annotated[
        Path, typer.Argument(help="The folder to make (created if missing).")
    ] = Path("."),
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy", help=f"recurring_dca or limit_ladder. Default: {DEFAULTS['strategy']}."
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="The strategy's name. Default: my-dca or my-ladder."),
    ] = None,
    from_token: Annotated[
        str | None,
        typer.Option(
            "--from-token",
            help=f"Token spent (symbol or address). Default: {DEFAULTS['from_token']}.",
        ),
    ] = None,
    to_token: Annotated[
        str | None,
        typer.Option(
            "--to-token", help=f"Token bought (symbol or address). Default: {DEFAULTS['to_token']}."
        ),
    ] = None,
    amount: Annotated[
        str | None,
        typer.Option(
            "--amount",
            help=f"Amount per buy (DCA) or per rung (ladder). Default: {DEFAULTS['amount']}.",
        ),
    ] = None,
    every: Annotated[
        str | None,
        typer.Option(
            "--every",
            help="Time between buys (DCA) or between the ladder's looks. "
            f"Default: {DEFAULTS['every']}.",
        ),
    ] = None,
    interactive: Annotated[
        bool | None,
        typer.Option(
            "--interactive/--non-interactive",
            help="Ask for what the flags leave open. Default: ask on a terminal only.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing config.toml (never a key).")
    ] = False,
) -> None:
    """Make a working folder: config.toml (paper), a wallet key, data/, strategies/."""
    ask = sys.stdin.isatty() if interactive is None else interactive
    if ask:
        strategy, from_token, to_token, amount, every = _questions(
            strategy, from_token, to_token, amount, every
        )
    choices = InitChoices.parse(
        strategy=strategy,
        name=name,
        from_token=from_token,
        to_token=to_token,
        amount=amount,
        every=every,
    )
    result = init_folder(directory, choices, force=force)  # SetupError: one line, exit 2
    made = "made now, mode 0600" if result.key_created else "existing key kept"
    funds = ", ".join(f"{format_decimal(a)} {t}" for t, a in result.funding.items())
    typer.echo(
        f"made {directory}: config.toml (paper mode), {KEY_FILE.as_posix()} ({made}), "
        "data/, strategies/, .gitignore"
    )
    typer.echo(f"wallet {result.wallet} (the paper world gives it {funds})")
    typer.echo(f"strategy {result.strategy}: {_said(choices)}")
    typer.echo("next (the config's paths are relative to its folder):")
    for command in next_commands(result, Path.cwd()):
        typer.echo(f"  {command}")
