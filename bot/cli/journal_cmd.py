"""`bot journal migrate | export | copy`: the journal database's schema and contents."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from bot.cli.common import EXIT_USAGE, fail, load_or_exit, open_journal
from bot.journal import JournalError
from bot.journal.copy import BATCH_ROWS, CopyMismatch, copy_journal
from bot.journal.db import check_url, driver_message, journal_name
from bot.journal.export import EXPORT_TABLES
from bot.journal.migrate import MigrationError, head_revision, upgrade

app = typer.Typer(
    help="Migrate, export or copy the journal (the bot's record of orders and money).",
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
        name = journal_name(check_url(target))  # never with its password
        before, after = upgrade(target)
    except JournalError as exc:  # damaged, a newer bot's, an unknown engine: one line
        fail(str(exc), EXIT_USAGE)
    except OperationalError as exc:  # the database cannot be reached
        fail(f"journal at {name}: cannot open it: {driver_message(exc)}", EXIT_USAGE)
    except (SQLAlchemyError, MigrationError, OSError) as exc:
        fail(f"journal at {name}: migration failed: {exc}")
    typer.echo(f"journal at {name}: {before or 'empty'} → {after or head_revision()}")


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
            help=f"Only these tables, repeated or comma-separated: {', '.join(EXPORT_TABLES)}. "
            "Default: every table.",
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


@app.command("copy")
def copy(
    source: Annotated[str, typer.Argument(help="The journal to copy (SQLAlchemy URL).")],
    destination: Annotated[
        str, typer.Argument(help="Where to copy it (created or migrated; may hold a partial copy).")
    ],
    batch: Annotated[
        int, typer.Option("--batch", min=1, help="Rows per committed batch.")
    ] = BATCH_ROWS,
) -> None:
    """Copy a journal (SQLite ↔ PostgreSQL) exactly, verified row by row; run again to resume.

    Stop the daemon first. The source is only read; the destination gets every table in
    batches, each committed, so an interrupted copy continues where it stopped.
    """
    try:
        source_name = journal_name(check_url(source))
        name = journal_name(check_url(destination))
    except JournalError as exc:  # an engine the journal does not support: one line
        fail(str(exc), EXIT_USAGE)
    if source_name == name:
        fail("the source and the destination are the same journal", EXIT_USAGE)
    reader = open_journal(source, readonly=True)  # or one line and exit 2
    with reader:
        writer = open_journal(destination)
        with writer:
            try:
                tables = copy_journal(reader.engine, writer.engine, size=batch)
            except CopyMismatch as exc:
                fail(f"journal at {name}: verification failed: {exc}")
            except JournalError as exc:
                fail(str(exc))
    for table in tables:
        typer.echo(
            f"{table.table}: {table.rows} rows ({table.copied} copied now), sha256 {table.digest}"
        )
    typer.echo(f"journal at {name}: verified, row by row, equal to the journal at {source_name}")
