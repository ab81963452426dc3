"""What every `bot` verb shares: the global options, loading config, one-line errors.

Exit codes: 0 success, 1 a runtime failure (network, provider), 2 a usage or
configuration error, and a journal that cannot be opened (missing for a reader, damaged,
or written by a newer bot: `open_journal`). Messages are one line each on stderr and
never contain secrets.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from bot.app import opening
from bot.app.errors import SetupError
from bot.config import ConfigError, Settings, load_settings
from bot.logging import Redactor, configure_logging, register_secret, register_url_secrets
from bot.secrets import SecretFileError

if TYPE_CHECKING:  # the client and the journal are imported only by verbs that use them
    from bot.api import PanoraClient
    from bot.journal import Journal

__all__ = [
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "CliState",
    "config_path",
    "fail",
    "load_or_exit",
    "make_client",
    "open_journal",
    "state",
]

EXIT_FAILURE = 1
EXIT_USAGE = 2
DEFAULT_CONFIG = Path("config.toml")


@dataclass
class CliState:
    """Global options, set by the top-level callback."""

    config: Path | None = None
    log_format: str | None = None
    redactor: Redactor | None = None


def state(ctx: typer.Context) -> CliState:
    """The global options of this invocation."""
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print `bot: error: …` (one line per problem) to stderr and exit."""
    for line in message.splitlines() or [message]:
        print(f"bot: error: {line}", file=sys.stderr)
    raise typer.Exit(code)


def config_path(cli: CliState, explicit: Path | None = None) -> Path | None:
    """The config file to read: explicit argument, `--config`, `$BOT_CONFIG`, `./config.toml`."""
    for candidate in (explicit, cli.config, os.environ.get("BOT_CONFIG")):
        if candidate:
            return Path(candidate)
    return DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None


def load_or_exit(ctx: typer.Context, explicit: Path | None = None) -> Settings:
    """Load and validate the configuration, or print every problem and exit 2.

    Also configures logging from `[log]` (the `--log-format` option wins) and registers
    the API key and the credentials in the node URL with the log redactor.
    """
    cli = state(ctx)
    try:
        settings = load_settings(config_path(cli, explicit))
    except ConfigError as exc:
        fail("\n".join(exc.problems), EXIT_USAGE)
    fmt = cli.log_format or settings.log.format
    cli.redactor = configure_logging(
        fmt="json" if fmt == "json" else "console", level=settings.log.level
    )
    for secret in (
        settings.api.api_key,
        settings.wallet.private_key,
        settings.alerts.webhook_url,
        settings.alerts.telegram_bot_token,
    ):
        if secret is not None:
            register_secret(secret.get_secret_value())
    register_url_secrets(settings.chain.node_url)  # providers put keys in the path
    return settings


def open_journal(url: str, *, readonly: bool = False, wallet: str | None = None) -> Journal:
    """The journal at `url` (`bot.app.opening.open_journal`), or one line naming it and exit 2.

    `wallet`: opened for that wallet (its rows only); None: the whole database.
    """
    try:
        return opening.open_journal(url, readonly=readonly, wallet=wallet)
    except SetupError as exc:
        fail(str(exc), EXIT_USAGE)


def own_wallet(settings: Settings) -> str | None:
    """The wallet the config names: the rows a reading verb shows (None: every wallet's).

    Its key's address, else `[wallet].address`. Never the paper demo's key (which the
    trading verbs fall back to): what a report shows must not depend on the folder it is
    run from. A key that cannot be read: one line, exit 2.
    """
    wallet = settings.wallet
    if wallet.key_file is None and wallet.private_key is None:
        return wallet.address  # no key to read (and no signer to import)
    from bot.app.runtime import configured_wallet

    try:
        return configured_wallet(settings)
    except SetupError as exc:
        fail(str(exc), EXIT_USAGE)


def make_client(ctx: typer.Context, settings: Settings) -> PanoraClient:
    """The API client for this configuration (live, a served or an embedded paper world)."""
    from bot.app.runtime import connect

    try:
        connection = connect(settings)
    except SecretFileError as exc:
        fail(str(exc), EXIT_USAGE)
    return connection.client
