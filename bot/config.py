"""Configuration: one TOML file plus `BOT_…` environment overrides (nested with `__`).

`load_settings(path)` reads the file chosen at run time (`--config`), lets the environment
override any key (`BOT_API__API_KEY`, `BOT_JOURNAL__URL`…) and validates everything at once.
Problems come back as `ConfigError`, one line per problem naming the key and the bad value;
secret values are never echoed. Unknown keys are errors (a typo must not pass silently).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bot.aptos.address import Address, AddressError, FunctionId
from bot.aptos.pyth import PYTH_MAINNET
from bot.config_base import Section as _Section
from bot.config_console import RemoteConsoleSettings, check_remote_names
from bot.config_display import DisplaySettings
from bot.config_paper import (
    PaperFaultSettings,
    PaperFunding,
    PaperNodeSettings,
    PaperSettings,
    paper_start,
)
from bot.cron import cron_trigger
from bot.domain import ROUTER_FUNCTION

__all__ = [
    "ALERT_EVENT_NAMES",
    "PRICE_CREDIT",
    "SECRET_FILE_KEYS",
    "SECRET_KEYS",
    "AccountingSettings",
    "AlertSettings",
    "ApiSettings",
    "ChainSettings",
    "ConfigError",
    "ConsoleSettings",
    "DaemonSettings",
    "DisplaySettings",
    "JournalSettings",
    "LogSettings",
    "PaperFaultSettings",
    "PaperFunding",
    "PaperNodeSettings",
    "PaperSettings",
    "RecordSettings",
    "RiskSettings",
    "SchedulerSettings",
    "Settings",
    "StrategyEntry",
    "WalletSettings",
    "load_settings",
    "paper_start",
]

_FEED_ID: Final = re.compile(r"0x[0-9a-fA-F]{64}")

SECRET_KEYS: Final = frozenset(
    {"api_key", "api_keys", "private_key", "bot_token", "telegram_bot_token", "webhook_url"}
)
"""Keys whose values are never shown, in errors or in `bot config show`.

`api_keys` are the paper world's: in paper mode the bot sends the first as its API key,
and the same key is often the live one."""

PRICE_CREDIT: Final = "Prices by Panora"
"""The credit line the provider asks for wherever its prices are shown (spec: overview)."""

ALERT_EVENT_NAMES: Final = frozenset(
    {
        "fill",
        "order_filled",
        "order_expired",
        "order_cancelled",
        "transaction_failed",
        "strategy_error",
        "strategy_stuck",
        "risk_cap_hit",
        "daemon_started",
        "daemon_stopped",
        "low_apt_for_gas",
        "no_poll",
        "foreign_order",
        "foreign_signer",
        "wallet_lock",
    }
)
"""The alert kinds `[alerts].events` may name (besides "all")."""

MAINNET_CHAIN_ID: Final = 1


class ApiSettings(_Section):
    """`[api]`: the provider's HTTP API."""

    base_url: str = "https://api.panora.exchange"
    api_key: SecretStr | None = None
    api_key_file: Path | None = None
    chain_id: int = Field(default=MAINNET_CHAIN_ID, ge=0)
    provider_prefix: str = Field(default="panora", pattern=r"^[a-z][a-zA-Z0-9]*$")
    swap_variant: Literal["current", "legacy"] = "current"
    connect_timeout_seconds: float = Field(default=5.0, gt=0)
    read_timeout_seconds: float = Field(default=20.0, gt=0)
    request_deadline_seconds: float = Field(default=30.0, gt=0)
    """Whole exchange (connect, headers, body) of one attempt, however slowly bytes trickle."""
    max_response_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """Larger answers are refused while they stream, never read whole."""
    rate_limit_per_second: float = Field(default=4.0, gt=0)
    rate_limit_burst: int = Field(default=4, ge=1)
    max_attempts: int = Field(default=4, ge=1, le=20)
    backoff_base_seconds: float = Field(default=0.5, gt=0)
    backoff_cap_seconds: float = Field(default=30.0, gt=0)
    order_amount_units: Literal["human", "base"] = "human"
    limit_from_wallet_field: Literal["token", "wallet"] = "token"
    orders_page_size: int = Field(default=50, ge=1, le=1000)
    record_answers_dir: Path | None = None
    """Record every provider answer here (JSON lines; key and wallet replaced), for
    `bot api check`; None records nothing. Paper mode records the paper world's answers."""
    record_answers_max_mb: int = Field(default=50, ge=1, le=100_000)
    """The folder's files together stay under about this many MiB (oldest deleted)."""
    record_answers_max_files: int = Field(default=20, ge=2, le=10_000)
    """At most this many files (one or more a day); the oldest are deleted."""
    record_answers_max_body_kb: int = Field(default=128, ge=1, le=100_000)
    """A larger body keeps its first records (a list), else only its size."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")


class ChainSettings(_Section):
    """`[chain]`: the Aptos node. The bot refuses to run when the node's chain id differs."""

    node_url: str = "https://api.mainnet.aptoslabs.com/v1"
    chain_id: int = Field(default=MAINNET_CHAIN_ID, ge=0, le=255)
    request_timeout_seconds: float = Field(default=20.0, gt=0)
    request_deadline_seconds: float = Field(default=30.0, gt=0)
    """Whole exchange (connect, headers, body) of one node request, however slow the bytes."""
    max_response_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """Larger node answers are refused while they stream."""
    allowed_functions: list[str] = Field(default_factory=lambda: [ROUTER_FUNCTION])
    """The only entry functions the signer will sign (add the order modules' here)."""
    gas_margin: Decimal = Field(default=Decimal("1.5"), ge=1)
    expiration_seconds: int = Field(default=60, ge=1)
    poll_interval_seconds: float = Field(default=1.0, gt=0)
    first_poll_delay_seconds: float = Field(default=0.5, ge=0)
    max_submit_attempts: int = Field(default=5, ge=1)
    max_sequence_retries: int = Field(default=3, ge=0)
    wait_timeout_seconds: float = Field(default=300.0, gt=0)
    gas_price_ttl_seconds: float = Field(default=30.0, ge=0)

    @field_validator("allowed_functions")
    @classmethod
    def _function_ids(cls, values: list[str]) -> list[str]:
        try:
            return [str(FunctionId.parse(v)) for v in values]
        except AddressError as exc:
            raise ValueError(str(exc)) from None


class WalletSettings(_Section):
    """`[wallet]`: the account that trades. The key comes from a 0600 file or the environment."""

    address: str | None = None
    key_file: Path | None = None
    private_key: SecretStr | None = None

    @field_validator("address")
    @classmethod
    def _valid_address(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(Address.parse(value))
        except AddressError as exc:
            raise ValueError(str(exc)) from None


class JournalSettings(_Section):
    """`[journal]`: where every order, intent and transaction is recorded."""

    url: str = "sqlite:///data/bot.db"


class SchedulerSettings(_Section):
    """`[scheduler]`: timing of the daemon's own jobs."""

    tracker_interval_seconds: int = Field(default=60, ge=1)
    commands_interval_seconds: int = Field(default=2, ge=1)
    reconcile_interval_seconds: int = Field(default=60, ge=1)
    """How often the daemon settles intents whose outcome was unknown (a lost answer)."""
    strategy_dirs: list[Path] = Field(default_factory=list)
    """Folders of user strategy plugins (`*.py` files defining Strategy subclasses)."""
    strategy_timeout_seconds: int = Field(default=30, ge=1)
    misfire_grace_seconds: int = Field(default=30, ge=1)
    tick_at_start: bool = True
    """Every strategy ticks once when the daemon starts (a strategy's own
    `schedule.tick_at_start` overrides it); otherwise its first tick is its first slot."""
    allow_no_strategies: bool = False
    """A reload (SIGHUP) may remove every strategy only when the new file says this: a file
    emptied or cut short by an editor or a failed copy must not stop all trading."""


class RiskSettings(_Section):
    """`[risk]`: limits checked before an intent is written and before anything is signed."""

    max_slippage_percent: Decimal = Field(default=Decimal("1"), ge=0, le=100)
    max_reference_deviation_percent: Decimal = Field(default=Decimal("3"), ge=0, le=50)
    """How far a swap quote's rate may stray from the bot's reference price (percent); also
    the room below the reference that a swap's own minimum out allows for fees and impact."""
    reference: Literal["provider", "pyth"] = "provider"
    """The swap reference price: the provider's /prices feed, or Pyth's on-chain prices."""
    pyth_contract: str = PYTH_MAINNET
    pyth_feeds: dict[str, str] = Field(default_factory=dict)
    """Token name → Pyth USD feed id, added to the published APT, USDC and USDT feeds."""
    pyth_max_age_seconds: int = Field(default=60, ge=1, le=3600)
    max_gas_amount: int = Field(default=200_000, ge=1)
    max_open_orders: int = Field(default=20, ge=0)
    per_transaction_caps: dict[str, Decimal] = Field(default_factory=dict)
    daily_spend_caps: dict[str, Decimal] = Field(default_factory=dict)
    allowed_tokens: list[str] = Field(default_factory=list)

    @field_validator("pyth_contract")
    @classmethod
    def _contract_address(cls, value: str) -> str:
        try:
            return str(Address.parse(value))
        except AddressError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("pyth_feeds")
    @classmethod
    def _feed_ids(cls, feeds: dict[str, str]) -> dict[str, str]:
        for name, feed in feeds.items():
            if not _FEED_ID.fullmatch(feed):
                raise ValueError(f"feed id of {name} must be 0x followed by 64 hex digits")
        return {name: feed.lower() for name, feed in feeds.items()}

    @field_validator("per_transaction_caps", "daily_spend_caps")
    @classmethod
    def _non_negative(cls, caps: dict[str, Decimal]) -> dict[str, Decimal]:
        for token, cap in caps.items():
            if not cap.is_finite() or cap < 0:
                raise ValueError(f"cap for {token} must be a non-negative amount")
        return caps


class LogSettings(_Section):
    """`[log]`: output format and level."""

    format: Literal["console", "json"] = "console"
    level: Literal["debug", "info", "warning", "error"] = "info"


class DaemonSettings(_Section):
    """`[daemon]`: the long-running service (systemd, Docker, `bot status`)."""

    heartbeat_seconds: int = Field(default=60, ge=1)
    """A heartbeat log line (and a status file refresh) this often, in real seconds."""
    status_file: Path | None = None
    """Where the daemon writes its status for `bot status`; unset: beside the journal."""
    watchdog_stall_seconds: int = Field(default=120, ge=1)
    """The main loop counts as stuck (no WATCHDOG=1 sent) after this long without progress."""
    gas_reserve_transactions: int = Field(default=20, ge=1)
    """APT for this many transactions at the simulated gas cost is "enough for gas"."""
    stuck_ticks: int = Field(default=3, ge=1, le=10_000)
    """A strategy whose every action was refused or failed this many ticks in a row makes
    the daemon `degraded` (status, STATUS line, heartbeat, one alert)."""
    lock_dir: Path | None = None
    """The wallet locks' folder (one file per wallet address, whatever the journal); unset:
    `~/.local/state/aptos-dca-bot/locks` of the user running the bot (`engine.wallet_lock`)."""

    @field_validator("lock_dir")
    @classmethod
    def _absolute_lock_dir(cls, value: Path | None) -> Path | None:
        if value is None:
            return None
        path = value.expanduser()
        if not path.is_absolute():
            raise ValueError("must be an absolute path (every process must find the same lock)")
        return path


class AlertSettings(_Section):
    """`[alerts]`: notifications through a JSON webhook and/or Telegram (each optional)."""

    webhook_url: SecretStr | None = None
    webhook_url_file: Path | None = None
    telegram_bot_token: SecretStr | None = None
    telegram_bot_token_file: Path | None = None
    telegram_chat_id: str | None = None
    telegram_api_url: str = "https://api.telegram.org"
    events: list[str] = Field(default_factory=lambda: ["all"])
    """Which alerts to send: "all" or a list of kinds (see docs/operations.md)."""
    max_per_minute: int = Field(default=20, ge=1)
    """Most alerts sent per minute per channel; the rest are counted and summarised."""
    max_attempts: int = Field(default=5, ge=1, le=20)
    timeout_seconds: float = Field(default=10.0, gt=0)
    queue_size: int = Field(default=1000, ge=1)
    low_apt_for_gas: Decimal = Field(default=Decimal("0.2"), ge=0)
    """Alert when the wallet holds less APT than this (for gas)."""
    no_poll_minutes: int = Field(default=15, ge=1)
    """Alert when no order poll has succeeded for this long."""
    control_enabled: bool = False
    """Answer commands (`/status`, `/pause`…) from Telegram (`bot.ops.telegram_control`)."""
    control_chat_ids: list[str] = Field(default_factory=list)
    """The chats allowed to command the bot; empty: `telegram_chat_id` only."""
    control_user_ids: list[int] = Field(default_factory=list)
    """The Telegram users allowed to command it (and tap Confirm) in those chats; empty:
    every member of an allowed chat — in a group, list yourselves."""
    control_poll_seconds: int = Field(default=30, ge=1, le=50)
    """The long poll's wait for new messages (`getUpdates` timeout)."""
    control_confirm_seconds: int = Field(default=60, ge=5, le=3600)
    """How long a control's confirmation button can be tapped."""

    @field_validator("control_chat_ids")
    @classmethod
    def _chat_ids(cls, value: list[str]) -> list[str]:
        ids = [v.strip() for v in value]
        digits = [v.removeprefix("-") for v in ids]
        bad = [v for v, d in zip(ids, digits, strict=True) if not (d.isascii() and d.isdigit())]
        if bad:
            raise ValueError(f"chat id {bad[0]!r} is not a number")
        return ids

    @field_validator("telegram_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("events")
    @classmethod
    def _known_events(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - ALERT_EVENT_NAMES - {"all"})
        if unknown:
            raise ValueError(
                f"unknown alert kind {unknown[0]!r} (known: all, "
                f"{', '.join(sorted(ALERT_EVENT_NAMES))})"
            )
        return value

    @model_validator(mode="after")
    def _telegram_pair(self) -> AlertSettings:
        token = self.telegram_bot_token is not None or self.telegram_bot_token_file is not None
        if token != bool(self.telegram_chat_id):
            raise ValueError("telegram needs telegram_bot_token (or _file) and telegram_chat_id")
        if self.control_enabled and not token:
            raise ValueError("control_enabled needs telegram_bot_token (or _file)")
        return self


class RecordSettings(_Section):
    """`[record]`: the price recorder (`bot record`, or a side job of the daemon)."""

    enabled: bool = False
    """Record prices as a side job of `bot run`."""
    tokens: list[str] = Field(default_factory=list)
    """Symbols or addresses; empty: the tokens the configured strategies use."""
    every_seconds: int = Field(default=60, ge=1)
    to_journal: bool = True
    out: Path | None = None
    """Also append to this file (`.csv` or `.parquet`)."""
    retention_days: int | None = Field(default=90, ge=1)
    """Ticks older than this are downsampled (or dropped); None keeps everything."""
    downsample_seconds: int | None = Field(default=3600, ge=60)
    """Older ticks keep one per token per this many seconds; None drops them instead."""


class Schedule(_Section):
    """When a strategy ticks: every N seconds, or a crontab(5) line in UTC (`bot.cron`)."""

    interval_seconds: int | None = Field(default=None, ge=1)
    cron: str | None = None
    tick_at_start: bool | None = None
    """Tick once when the daemon starts; unset: `[scheduler].tick_at_start`."""

    @model_validator(mode="after")
    def _exactly_one(self) -> Schedule:
        if (self.interval_seconds is None) == (self.cron is None):
            raise ValueError("give exactly one of interval_seconds and cron")
        if self.cron is not None:
            cron_trigger(self.cron)  # a line the scheduler cannot run is a config error
        return self


class StrategyEntry(_Section):
    """One `[[strategies]]` entry: a named instance of a plugin with its parameters."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    plugin: str
    schedule: Schedule
    enabled: bool = True
    params: dict[str, Any] = Field(default_factory=dict)
    budget: dict[str, Decimal] = Field(default_factory=dict)
    """Most this strategy may spend per UTC day, by token (counted from the journal)."""


class ConsoleSettings(_Section):
    """`[console]`: the operator's REST API served by the daemon (docs/console.md)."""

    enabled: bool = False
    host: str = "127.0.0.1"
    """Where it listens; anything but loopback needs a token (refused at start without)."""
    port: int = Field(default=8787, ge=1, le=65535)
    token: SecretStr | None = None
    """The bearer token, from `BOT_CONSOLE__TOKEN` (never the config file) or `token_file`;
    neither on loopback: a fresh one per start, written 0600 beside the journal."""
    token_file: Path | None = None
    reports_dir: Path | None = None
    """The folder of HTML reports the dashboard's Reports page opens (`bot backtest
    --report DIR`, `bot report --html DIR` under it); None: `reports` beside the journal."""
    remotes: list[RemoteConsoleSettings] = Field(default_factory=list)
    """Other bots' consoles shown read-only on the overview (`bot.config_console`)."""

    @field_validator("remotes")
    @classmethod
    def _remote_names(cls, value: list[RemoteConsoleSettings]) -> list[RemoteConsoleSettings]:
        return check_remote_names(value)

    @model_validator(mode="after")
    def _token_beyond_loopback(self) -> ConsoleSettings:
        from bot.console.hosts import is_loopback

        tokenless = self.token is None and self.token_file is None
        if self.enabled and tokenless and not is_loopback(self.host):
            raise ValueError(
                f"host {self.host!r} is not loopback: set token_file or BOT_CONSOLE__TOKEN"
            )
        return self


class AccountingSettings(_Section):
    """`[accounting]`: how `bot report` counts (docs/accounting.md)."""

    time_zone: str = "UTC"
    """The IANA time zone day/week/month buckets follow (`Europe/Berlin`); default UTC."""
    cost_basis: Literal["fifo", "average"] = "fifo"
    """How the cost of what is sold is taken: `fifo` (oldest lots first) or `average`."""

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from bot.accounting.buckets import zone_of

        zone_of(value)  # ValueError naming the zone
        return value.strip()


class Settings(BaseSettings):
    """The whole configuration. Build it with `load_settings`."""

    model_config = SettingsConfigDict(
        env_prefix="BOT_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    mode: Literal["paper", "live"] = "paper"
    """`paper` (default): the simulated market, no money at stake. `live`: real money."""
    api: ApiSettings = Field(default_factory=ApiSettings)
    chain: ChainSettings = Field(default_factory=ChainSettings)
    wallet: WalletSettings = Field(default_factory=WalletSettings)
    journal: JournalSettings = Field(default_factory=JournalSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    risk: RiskSettings = Field(default_factory=RiskSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    paper: PaperSettings = Field(default_factory=PaperSettings)
    daemon: DaemonSettings = Field(default_factory=DaemonSettings)
    alerts: AlertSettings = Field(default_factory=AlertSettings)
    record: RecordSettings = Field(default_factory=RecordSettings)
    display: DisplaySettings = Field(default_factory=DisplaySettings)
    accounting: AccountingSettings = Field(default_factory=AccountingSettings)
    console: ConsoleSettings = Field(default_factory=ConsoleSettings)
    strategies: list[StrategyEntry] = Field(default_factory=list)

    @field_validator("strategies")
    @classmethod
    def _unique_strategy_names(cls, entries: list[StrategyEntry]) -> list[StrategyEntry]:
        # A field validator, so the problem is reported at `strategies`, not the top level.
        seen: set[str] = set()
        for entry in entries:
            if entry.name in seen:
                raise ValueError(f"strategy name {entry.name!r} is used twice")
            seen.add(entry.name)
        return entries

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Sources in priority order: the environment, then the TOML file's values."""
        # The TOML file arrives as init values; the environment overrides it.
        return (env_settings, init_settings)

    def masked(self) -> dict[str, Any]:
        """The settings as plain data with every secret replaced by `********`."""
        masked: dict[str, Any] = _mask(self.model_dump(mode="json"))
        return masked


class ConfigError(Exception):
    """The configuration is invalid; `problems` has one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _mask(data: Any, key: str = "") -> Any:
    if isinstance(data, dict):
        return {k: _mask(v, k) for k, v in data.items()}
    if isinstance(data, list):
        return [_mask(v, key) for v in data]
    if key in SECRET_KEYS and data not in (None, ""):
        return "********"
    return data


def _describe(error: Mapping[str, Any]) -> str:
    location = ".".join(str(part) for part in error.get("loc", ())) or "(top level)"
    message = str(error.get("msg", "invalid"))
    if error.get("type") == "extra_forbidden":
        return f"{location}: unknown key (check the spelling; see config.example.toml)"
    if any(str(part) in SECRET_KEYS for part in error.get("loc", ())):
        return f"{location}: {message} (value hidden)"
    value = error.get("input")
    if isinstance(value, str) and "://" in value:  # a URL: its user info, query… hidden
        from bot.logging import mask_url

        value = mask_url(value)
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{location}: {message} (got {shown})"


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file; raise `ConfigError` with the file, line and column on a syntax error."""
    try:
        with path.open("rb") as handle:
            # Decimal, not float: money settings (caps, slippage) stay exact.
            data: dict[str, Any] = tomllib.load(handle, parse_float=Decimal)
            return data
    except FileNotFoundError:
        raise ConfigError([f"{path}: no such config file"]) from None
    except IsADirectoryError:
        raise ConfigError([f"{path}: is a directory, not a config file"]) from None
    except PermissionError:
        raise ConfigError([f"{path}: permission denied"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{path}: invalid TOML: {exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{path}: not UTF-8 text"]) from None


SECRET_FILE_KEYS: Final = {
    ("api", "api_key"): "api_key_file",
    ("wallet", "private_key"): "key_file",
    ("alerts", "webhook_url"): "webhook_url_file",
    ("alerts", "telegram_bot_token"): "telegram_bot_token_file",
    ("console", "token"): "token_file",
}
"""Every secret setting (a `SecretStr`) and the setting naming the 0600 file that holds it.

A secret may come from the environment (`BOT_API__API_KEY`) or that file, never from the
config file itself: config files get copied, committed and pasted into bug reports."""


def _secrets_in_file(path: Path, data: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """One problem per secret written in the file, and the data with those values blanked.

    Blanked rather than dropped, so the rest validates as the user meant it (a Telegram
    chat id without its token would be a second, misleading problem).
    """
    problems: list[str] = []
    cleaned = dict(data)
    for (section, key), file_key in SECRET_FILE_KEYS.items():
        table = cleaned.get(section)
        if not isinstance(table, dict) or key not in table:
            continue
        problems.append(
            f"{path}: [{section}].{key}: secrets may not be written in the config file; "
            f"use BOT_{section.upper()}__{key.upper()} or [{section}].{file_key}"
        )
        cleaned[section] = {**table, key: ""}
    return problems, cleaned


def load_settings(path: Path | None) -> Settings:
    """Load the settings from `path` (or defaults only) and the `BOT_…` environment.

    Args:
        path: the TOML file; None means built-in defaults plus environment.

    Raises:
        ConfigError: every problem, one line each, secrets masked; a secret written in the
            file itself is one (`SECRET_FILE_KEYS`), whatever its value.
    """
    data = read_toml(path) if path is not None else {}
    problems: list[str] = []
    if path is not None:
        problems, data = _secrets_in_file(path, data)
    try:
        settings = Settings(**data)
    except ValidationError as exc:
        problems += [_describe(e) for e in exc.errors()]
    else:
        key = settings.api.api_key
        empty = key is not None and not key.get_secret_value().strip()
        if empty and not problems and settings.mode == "live":
            # Live never goes without a key: unset gets the SDK's public key (bot.secrets).
            problems.append(
                "api.api_key: is empty; unset BOT_API__API_KEY to use the public shared key, "
                "or set your own (value hidden)"
            )
    if problems:
        raise ConfigError(problems)
    return settings
