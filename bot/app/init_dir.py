"""`bot init [DIR]`: a working folder from nothing, ready for paper trading.

The folder gets a `config.toml` in paper mode (one strategy: a recurring DCA or a limit
ladder, chosen by the caller), a wallet key made by `bot.chain.new_key_file` (mode 0600,
never overwritten: an existing key is kept), `data/` (key, journal, paper world),
`strategies/` (the user's plugins, `bot strategies new`) and a `.gitignore` that keeps
keys, data and journals out of git. The config's paths are relative to the folder: the
bot is run from there (the next commands say so).

Everything is checked before anything is written: the choices (`InitChoices.parse`, one
line naming the option at fault), the strategy's parameters by its own plugin, and the
whole config by the settings loader before it takes the place of `config.toml`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from bot.app.errors import SetupError
from bot.chain import KeyFileError, account_address, load_private_key, new_key_file
from bot.config import ConfigError, Schedule, StrategyEntry, load_settings
from bot.duration import parse_duration
from bot.engine.plugins import PluginError, build_strategy
from bot.money import MoneyError, format_decimal, parse_decimal

__all__ = [
    "CONFIG_NAME",
    "DEFAULTS",
    "KEY_FILE",
    "STRATEGY_KINDS",
    "InitChoices",
    "InitResult",
    "init_folder",
    "next_commands",
]

CONFIG_NAME: Final = "config.toml"
KEY_FILE: Final = Path("data") / "wallet.key"
"""The wallet key, relative to the folder."""
STRATEGY_KINDS: Final = ("recurring_dca", "limit_ladder")
DEFAULTS: Final = {
    "strategy": "recurring_dca",
    "from_token": "USDC",
    "to_token": "APT",
    "amount": "25",
    "every": "1 day",
}
"""Each choice's default (the `--help` of `bot init` says them)."""
DCA_ORDERS: Final = 7
"""Slices per DCA order (a week of daily buys with the default `every`)."""
DCA_TICK_SECONDS: Final = 3600
"""A recurring DCA looks every hour whether its order is still running."""
LADDER_RUNGS: Final = 3
PAPER_FUNDS: Final = {"USDC": Decimal(10_000), "APT": Decimal(100)}
"""What the paper faucet gives the new wallet (as the demo's); the token spent gets at
least a hundred orders' worth."""
GITIGNORE: Final = """\
# Made by `bot init`: keys, the journal and recorded data never go into git.
*.key
data/
*.db
*.db-journal
*.db-wal
*.db-shm
*.pickle
"""
_AMOUNT_DIGITS: Final = 30
"""An amount has at most this many digits before the point (10^30: beyond any supply)."""
_TOKEN: Final = re.compile(r"^[A-Za-z0-9_.:<>, -]{1,200}$")
_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class InitChoices:
    """What the new folder's strategy does (already checked: `parse`)."""

    strategy: str
    name: str
    from_token: str
    to_token: str
    amount: Decimal
    every: str

    @classmethod
    def parse(
        cls,
        *,
        strategy: str | None = None,
        name: str | None = None,
        from_token: str | None = None,
        to_token: str | None = None,
        amount: str | None = None,
        every: str | None = None,
    ) -> InitChoices:
        """The choices from text (None: the default); one line naming the option at fault.

        Raises:
            SetupError: an unknown strategy kind, a token or name with characters a
                token or name never has, an amount that is not a positive number, a
                duration the bot cannot read.
        """
        kind = check_strategy(strategy or DEFAULTS["strategy"])
        sell = check_token(from_token or DEFAULTS["from_token"], "--from-token")
        buy = check_token(to_token or DEFAULTS["to_token"], "--to-token")
        if sell.lower() == buy.lower():
            raise SetupError(f"--to-token: {buy!r} is also the token spent (--from-token)")
        chosen_name = check_name(name or default_name(kind))
        return cls(
            kind,
            chosen_name,
            sell,
            buy,
            check_amount(amount or DEFAULTS["amount"]),
            check_every(every or DEFAULTS["every"]),
        )

    def entry(self) -> StrategyEntry:
        """The `[[strategies]]` entry these choices make."""
        if self.strategy == "recurring_dca":
            return StrategyEntry(
                name=self.name,
                plugin="recurring_dca",
                schedule=Schedule(interval_seconds=DCA_TICK_SECONDS),
                params={
                    "from_token": self.from_token,
                    "to_token": self.to_token,
                    "amount_per_order": format_decimal(self.amount),
                    "orders": DCA_ORDERS,
                    "interval": self.every,
                },
            )
        return StrategyEntry(
            name=self.name,
            plugin="limit_ladder",
            schedule=Schedule(interval_seconds=parse_duration(self.every).seconds),
            params={
                "sell_token": self.from_token,
                "buy_token": self.to_token,
                "rungs": LADDER_RUNGS,
                "spacing_percent": "1",
                "amount_per_rung": format_decimal(self.amount),
                "redrift_percent": "3",
                "expiry": "1 day",
            },
        )

    def funding(self) -> dict[str, Decimal]:
        """What the paper faucet gives the wallet: `PAPER_FUNDS` and the token spent."""
        funds = dict(PAPER_FUNDS)
        known = {symbol.lower(): symbol for symbol in funds}
        symbol = known.get(self.from_token.lower(), self.from_token)
        funds[symbol] = max(funds.get(symbol, Decimal(0)), self.amount * 100)
        return funds


def default_name(strategy: str) -> str:
    """The strategy's name when none is given: `my-dca`, `my-ladder`."""
    return "my-dca" if strategy == "recurring_dca" else "my-ladder"


def check_strategy(text: str) -> str:
    """A strategy kind `bot init` writes (`STRATEGY_KINDS`).

    Raises:
        SetupError: another one.
    """
    kind = text.strip()
    if kind not in STRATEGY_KINDS:
        raise SetupError(f"--strategy: {text!r} is not one of {', '.join(STRATEGY_KINDS)}")
    return kind


def check_token(text: str, option: str) -> str:
    """A token as a symbol (`USDC`) or an address / coin type.

    Raises:
        SetupError: empty, or characters no token name has.
    """
    token = text.strip()
    if not _TOKEN.fullmatch(token):
        raise SetupError(f"{option}: {text!r} is not a token symbol or address")
    return token


def check_name(text: str) -> str:
    """A strategy name: letters, digits, `_`, `.`, `-`.

    Raises:
        SetupError: anything else.
    """
    if not _NAME.fullmatch(text):
        raise SetupError(f"--name: {text!r}: use letters, digits, '_', '.' and '-' only")
    return text


def check_amount(text: str) -> Decimal:
    """An amount of the token spent per order (DCA) or per rung (ladder): a number > 0.

    Raises:
        SetupError: not a number, or not above 0.
    """
    try:
        amount = parse_decimal(text.strip(), field="--amount")
    except MoneyError as exc:
        raise SetupError(str(exc)) from None
    if not amount > 0:
        raise SetupError(f"--amount: must be above 0, got {text!r}")
    if amount.adjusted() > _AMOUNT_DIGITS:  # beyond any token's supply (and our arithmetic)
        raise SetupError(f"--amount: too large, got {text!r}")
    return amount


def check_every(text: str) -> str:
    """A duration in the bot's grammar (`"1 day"`, `"6h"`).

    Raises:
        SetupError: one the bot cannot read.
    """
    try:
        parse_duration(text, field="--every")
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    return text.strip()


@dataclass(frozen=True)
class InitResult:
    """What `init_folder` made."""

    folder: Path
    config: Path
    key_file: Path
    key_created: bool
    wallet: str
    strategy: str
    funding: dict[str, Decimal]


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=True)


def _inline(data: dict[str, Any]) -> str:
    parts = []
    for key, value in data.items():
        shown = str(value) if isinstance(value, int) else _toml(str(value))
        parts.append(f"{key} = {shown}")
    return "{ " + ", ".join(parts) + " }"


def config_text(choices: InitChoices, wallet: str) -> str:
    """The new folder's `config.toml`: paper mode, its key, journal, plugins, one strategy."""
    entry = choices.entry()
    funding = ",\n".join(
        f"  {{ wallet = {_toml(wallet)}, token = {_toml(token)}, "
        f"amount = {_toml(format_decimal(amount))} }}"
        for token, amount in choices.funding().items()
    )
    schedule = entry.schedule.interval_seconds
    return f"""\
# Made by `bot init`. Run the bot from this folder: the paths below are relative to it.
# Every option, its default and what it means: config.example.toml (docs/operations.md).
# Check it with `bot config check`; show the effective config with `bot config show`.

# "paper": the paper world, a simulation of the provider and of an Aptos node embedded
# in the bot (no network, no money at stake). "live" trades real money: first read the
# live checklist (README) and run `bot doctor --live`.
mode = "paper"

[wallet]
# The key `bot init` made (mode 0600). Never commit it, never share it; back it up.
key_file = {_toml(KEY_FILE.as_posix())}

[journal]
# Every order, intent and transaction (SQLite, in data/).
url = "sqlite:///data/bot.db"

[scheduler]
# Your own strategy plugins (`bot strategies new NAME` writes them here).
strategy_dirs = ["strategies"]

[paper]
# The paper world's clock: "accelerated" runs `speed` times real time (60: an hour of
# market per minute). Its state is kept beside the journal across restarts.
clock = "accelerated"
speed = 60.0
# What the paper faucet gives your wallet when the world is made.
funding = [
{funding},
]

[risk]
# Before going live, cap what one transaction and one day may spend, e.g.
# per_transaction_caps = {{ USDC = "500" }}
# daily_spend_caps = {{ USDC = "1000" }}
max_slippage_percent = "1"

[[strategies]]
name = {_toml(entry.name)}
plugin = {_toml(entry.plugin)}
schedule = {{ interval_seconds = {schedule} }}
params = {_inline(entry.params)}
"""


def _checked_entry(choices: InitChoices) -> None:
    """The strategy's parameters checked as its plugin and `bot strategies check` will.

    Its tokens in the paper world's list, its amount within their decimals.

    Raises:
        SetupError: one line per problem.
    """
    from bot.app.strategy_checks import PackagedTokens, check_strategy

    entry = choices.entry()
    try:
        strategy = build_strategy(entry)
    except PluginError as exc:
        raise SetupError(str(exc)) from None
    problems = check_strategy(strategy, entry, PackagedTokens().book()).problems
    if problems:
        raise SetupError("\n".join(problems))


def _wallet_key(key_file: Path) -> tuple[str, bool]:
    """The wallet's address and whether its key was made now (an existing one is kept).

    Raises:
        SetupError: the key cannot be made or read.
    """
    try:
        if key_file.exists() or key_file.is_symlink():
            return str(account_address(load_private_key(key_file, None))), False
        return str(new_key_file(key_file)), True
    except KeyFileError as exc:
        raise SetupError(str(exc)) from None


def _write_config(path: Path, text: str) -> None:
    """Write `text` to `path` once the settings loader accepts it (never half-written).

    Raises:
        SetupError: the loader refuses it (the problems, one line each).
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        try:
            load_settings(temporary)
        except ConfigError as exc:
            raise SetupError("\n".join(exc.problems)) from None
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def init_folder(folder: Path, choices: InitChoices, *, force: bool = False) -> InitResult:
    """Make `folder` a working folder for `choices` (see the module docstring).

    Args:
        folder: created when missing.
        choices: the strategy to configure.
        force: replace an existing `config.toml` (an existing key is always kept).

    Raises:
        SetupError: `config.toml` exists (without `force`), the strategy's parameters are
            invalid, or a file cannot be written; nothing is replaced then.
    """
    config = folder / CONFIG_NAME
    if (config.exists() or config.is_symlink()) and not force:
        raise SetupError(f"{config} exists; refusing to overwrite it (--force replaces it)")
    _checked_entry(choices)
    funding = choices.funding()  # worked out before anything is written
    try:
        for sub in ("data", "strategies"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        wallet, created = _wallet_key(folder / KEY_FILE)
        _keep_out_of_git(folder / ".gitignore")
        _write_config(config, config_text(choices, wallet))
    except OSError as exc:
        raise SetupError(f"{folder}: {exc.strerror or exc}") from None
    return InitResult(
        folder=folder,
        config=config,
        key_file=folder / KEY_FILE,
        key_created=created,
        wallet=wallet,
        strategy=choices.name,
        funding=funding,
    )


def _keep_out_of_git(gitignore: Path) -> None:
    """Make `gitignore` ignore keys, data and journals: written, or its missing lines added."""
    if not (gitignore.exists() or gitignore.is_symlink()):
        gitignore.write_text(GITIGNORE, encoding="utf-8")
        return
    held = gitignore.read_text(encoding="utf-8")
    present = {line.strip() for line in held.splitlines()}
    missing = [line for line in GITIGNORE.splitlines()[1:] if line not in present]
    if missing:
        ending = "" if not held or held.endswith("\n") else "\n"
        added = "\n".join([GITIGNORE.splitlines()[0], *missing])
        gitignore.write_text(f"{held}{ending}{added}\n", encoding="utf-8")


def next_commands(result: InitResult, cwd: Path) -> list[str]:
    """The commands to run next: into the folder (unless there), check, dry run, run."""
    commands = []
    if result.folder.resolve() != cwd.resolve():
        commands.append(f"cd {shlex.quote(str(result.folder))}")
    commands += [
        f"bot strategies check {result.strategy}",
        "bot once --dry-run --paper",
        "bot run --paper",
    ]
    return commands
