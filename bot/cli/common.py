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
    "PAPER_READ_HELP",
    "CliState",
    "config_path",
    "demo_settings_or_exit",
    "fail",
    "load_or_exit",
    "make_client",
    "open_journal",
    "reading_settings",
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


PAPER_READ_HELP = (
    "With no config file: read the paper demo's journal (what `bot run --paper` recorded)."
)
"""The help of `--paper` on the verbs that read the journal (`reading_settings`)."""


def reading_settings(ctx: typer.Context, *, paper: bool) -> Settings:
    """The config of a verb that reads the journal (`report`, `orders`, `export`).

    `paper` (`--paper`) with no config file: the paper demo's (its journal and wallet in
    `data/`, as `bot run --paper` with no config file keeps them); with a paper config,
    that config; with a live config, refused (exit 2). With no config file and no
    `--paper`, when the default journal is missing but the demo's is there: one line
    saying that `--paper` reads it (exit 2).
    """
    if config_path(state(ctx)) is not None:
        settings = load_or_exit(ctx)
        if paper and settings.mode == "live":
            fail(_LIVE_PAPER, EXIT_USAGE)
        return settings
    # Only without a config file: the demo's module loads the signer's (7 MB more).
    from bot.app.paper_key import demo_key_file
    from bot.cli.demo import DEMO_DIR, DEMO_JOURNAL

    demo = DEMO_DIR / DEMO_JOURNAL
    found = demo.exists() and demo_key_file(DEMO_DIR, create=False) is not None
    if paper and not found:
        fail(
            f"--paper: no paper demo in {DEMO_DIR}/ (run `bot run --paper` with no config "
            "file first)",
            EXIT_USAGE,
        )
    settings = load_or_exit(ctx)
    if paper:
        if settings.mode == "live":  # live through the environment alone (`BOT_MODE`)
            fail(_LIVE_PAPER, EXIT_USAGE)
        return demo_settings_or_exit(settings)
    missing = _missing_journal(settings.journal.url) if found else None
    if missing is not None:
        fail(
            f"no config file, and no journal at {missing}; the paper demo's journal is "
            f"{demo}: add --paper to read it",
            EXIT_USAGE,
        )
    return settings


_LIVE_PAPER = "--paper reads a paper journal, and the config is live: drop --paper"


def demo_settings_or_exit(base: Settings) -> Settings:
    """The paper demo's config over `base` (`bot.cli.demo.demo_settings`).

    Its key cannot be made or read (a mode other than 0600, not a key, a dangling link):
    one line naming it, exit 2.
    """
    from bot.chain import KeyFileError
    from bot.cli.demo import demo_settings

    try:
        return demo_settings(base)
    except (KeyFileError, SetupError) as exc:
        fail(str(exc), EXIT_USAGE)


def _missing_journal(url: str) -> Path | None:
    """The file of a SQLite journal `url` when it does not exist (else None)."""
    from sqlalchemy.exc import ArgumentError

    from bot.journal.db import sqlite_file

    try:
        path = sqlite_file(url)
    except ArgumentError:  # not a URL at all: `open_journal` says so in its own words
        return None
    return path if path is not None and not path.exists() else None


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
