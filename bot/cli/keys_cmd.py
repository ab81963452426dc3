"""`bot keys new --out FILE` and `bot keys address [--key-file FILE]`.

Both print the account address and nothing else on stdout; the key itself is never
printed, logged or echoed in an error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bot.chain.errors import KeyFileError
from bot.chain.keys import account_address, load_private_key, new_key_file
from bot.cli.common import EXIT_USAGE, fail, load_or_exit

app = typer.Typer(
    help="Create a wallet key file or show the wallet's address.", no_args_is_help=True
)


@app.command("new")
def new(
    out: Annotated[
        Path, typer.Option("--out", help="Key file to create (mode 0600; never overwritten).")
    ],
) -> None:
    """Create a fresh Ed25519 key as AIP-80 text in a new 0600 file; print its address."""
    try:
        address = new_key_file(out)
    except KeyFileError as exc:
        fail(str(exc), EXIT_USAGE)
    print(f"wrote key file {out} (mode 0600); keep it secret and backed up", file=sys.stderr)
    typer.echo(str(address))


@app.command("address")
def address(
    ctx: typer.Context,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key-file",
            help="Key file (default: [wallet].key_file, or BOT_WALLET__PRIVATE_KEY).",
        ),
    ] = None,
) -> None:
    """Print the address of the wallet's key (never the key)."""
    if key_file is not None:
        try:
            key = load_private_key(key_file, None)
        except KeyFileError as exc:
            fail(str(exc), EXIT_USAGE)
        typer.echo(str(account_address(key)))
        return
    settings = load_or_exit(ctx)
    try:
        key = load_private_key(settings.wallet.key_file, settings.wallet.private_key)
    except KeyFileError as exc:
        fail(str(exc), EXIT_USAGE)
    derived = account_address(key)
    configured = settings.wallet.address
    if configured is not None and configured != str(derived):
        print(
            f"note: [wallet].address is {configured}, not this key's address (a rotated key?)",
            file=sys.stderr,
        )
    typer.echo(str(derived))
