"""`bot api check FOLDER`: do recorded provider answers still parse, what is new, what is gone."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, load_or_exit

app = typer.Typer(
    help="The provider's API as the bot reads it: check recorded answers.",
    no_args_is_help=True,
)


@app.command("check")
def check(
    ctx: typer.Context,
    folder: Annotated[
        Path,
        typer.Argument(
            help="Answers recorded by [api].record_answers_dir (*.jsonl), or plain *.json "
            "bodies in folders named by endpoint (prices/, swap/, dca/getOrders/…).",
            show_default=False,
        ),
    ],
) -> None:
    """Replay every answer through the client: what does not parse, new fields, gone ones.

    Exit 0 when every answer parses, 1 when one does not, 2 for a folder without answers.
    """
    from bot.api.answer_check import FolderError, check_answers, load_answers

    settings = load_or_exit(ctx)
    try:
        answers, notes = load_answers(folder)
    except FolderError as exc:
        fail(str(exc), EXIT_USAGE)
    report = asyncio.run(
        check_answers(
            answers,
            prefix=settings.api.provider_prefix,
            order_amount_units=settings.api.order_amount_units,
        )
    )
    for line in [*notes, *report.lines()]:
        typer.echo(line)
    if report.failures:
        raise typer.Exit(EXIT_FAILURE)
