"""`bot journal migrate | export`: the journal database's schema and contents."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.exc import SQLAlchemyError

from bot.cli.common import EXIT_USAGE, fail, load_or_exit, open_journal
from bot.journal import JournalError
from bot.journal.export import EXPORT_TABLES
from bot.journal.migrate import MigrationError, head_revision, upgrade

app = typer.Typer(
    help="Migrate or export the journal (the bot's record of orders and money).",
    no_args_is_help=True,
)

UrlOption = Annotated[
    str | None, typer.Option("--url", help="Journal database URL (default: [journal].url).")
]


class ExportFormat(StrEnum):
    """Output formats of `bot journal export`."""

    CSV = "csv"
    JSON = "json"


@app.command("migrate")
def migrate(ctx: typer.Context, url: UrlOption = None) -> None:
    """Create the journal or bring its schema up to date (safe to run again)."""
    settings = load_or_exit(ctx)
    target = url or settings.journal.url
    try:
        before, after = upgrade(target)
    except JournalError as exc:  # damaged, or a newer bot's: one line naming it
        fail(str(exc), EXIT_USAGE)
    except (SQLAlchemyError, MigrationError, OSError) as exc:
        fail(f"journal at {target}: migration failed: {exc}")
    typer.echo(f"journal at {target}: {before or 'empty'} → {after or head_revision()}")


def _tables(given: list[str] | None) -> list[str] | None:
    """`-t a,b -t c` as `[a, b, c]` (each once, in the order given); None: every table.

    Exits 2 naming the unknown ones (and on an empty name, `-t a,,b`).
    """
    if not given:
        return None
    names = [name.strip() for value in given for name in value.split(",")]
    unknown = [n or repr(n) for n in names if n not in EXPORT_TABLES]
    if unknown:
        fail(f"unknown table {', '.join(unknown)}; known: {', '.join(EXPORT_TABLES)}", EXIT_USAGE)
    return list(dict.fromkeys(names))


@app.command("export")
def export(
    ctx: typer.Context,
    format: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="csv or json.", case_sensitive=False)
    ],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output file (default: stdout).")
    ] = None,
    table: Annotated[
        list[str] | None,
        typer.Option(
            "--table",
            "-t",
            help=f"Only these tables, repeated or comma-separated: {', '.join(EXPORT_TABLES)}.",
        ),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Write every journal table with exact values (amounts as text) as CSV or JSON."""
    settings = load_or_exit(ctx)
    target = url or settings.journal.url
    table = _tables(table)
    journal = open_journal(target, readonly=True)  # or one line and exit 2
    try:
        with journal:
            if out is None:
                journal.export(format.value, sys.stdout, tables=table or None)
            else:
                with out.open("w", encoding="utf-8", newline="") as handle:
                    journal.export(format.value, handle, tables=table or None)
    except (JournalError, SQLAlchemyError, OSError) as exc:
        fail(f"journal at {target}: {exc}")
