"""`bot doctor`: read-only checks before going live, each a PASS/FAIL line.

Every check is a function returning `CheckResult`s; `Doctor.run` calls them in order and
skips what a failed check makes meaningless (no balances without a reachable node on the
right chain). Nothing here writes: the journal is opened read-only and never migrated, the
key is loaded but never used to sign, the API and the node are only read.

Outcomes: PASS, FAIL (exit 1; exit 2 for a configuration problem), WARN (shown, not a
failure: e.g. unknown response fields), SKIP (the check does not apply or depends on a
failed one). Details never contain a secret: key errors name the file, never the content;
URLs are shown without user info or query string (node providers put keys there).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Final

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from bot.api import OrderFilter, PanoraClient
from bot.api.client import ClientStats
from bot.api.errors import ApiError, NotSent, Unauthorized, UnexpectedStatus
from bot.api.paging import iter_orders
from bot.api.tokens import fetch_token_book
from bot.aptos.address import Address
from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.chain import ChainError, ChainIdMismatch, KeyFileError, LedgerInfo, NodeClient, NodeError
from bot.chain.keys import ENV_VARIABLE, account_address, load_private_key
from bot.clock import Clock
from bot.config import Settings, WalletSettings
from bot.domain import OrderKind
from bot.engine.plugins import PluginError, build_strategies
from bot.engine.strategy import Strategy, needed_tokens
from bot.journal import Journal, JournalError, current_revision, head_revision
from bot.journal.db import sqlite_file
from bot.journal.migrate import unknown_revision
from bot.logging import mask_url
from bot.money import format_decimal, from_base_units

__all__ = [
    "CLOCK_SKEW_LIMIT_SECONDS",
    "FAIL",
    "GAS_HISTORY",
    "PASS",
    "SKIP",
    "WARN",
    "CheckResult",
    "Doctor",
    "check_clock_skew",
    "check_config",
    "check_journal",
    "check_key",
    "check_key_file",
    "check_reference",
    "check_strategies",
    "check_unknown_fields",
    "config_failures",
    "exit_code",
    "gas_per_transaction",
    "public_url",
    "summary",
]

PASS: Final = "PASS"  # noqa: S105 - an outcome label, not a password
FAIL: Final = "FAIL"
WARN: Final = "WARN"
SKIP: Final = "SKIP"
NAME_WIDTH: Final = 23
CLOCK_SKEW_LIMIT_SECONDS: Final = 30
"""Local time and the node's ledger time may differ by this much (expirations use both)."""
GAS_HISTORY: Final = 20
"""Committed transactions looked at to size a typical transaction's gas."""


@dataclass(frozen=True)
class CheckResult:
    """One line of the doctor's report."""

    name: str
    outcome: str
    detail: str
    config_error: bool = False
    """A failure of the configuration itself (exit code 2)."""

    @property
    def failed(self) -> bool:
        """True for a FAIL."""
        return self.outcome == FAIL

    def line(self) -> str:
        """`PASS  key file permissions     /etc/bot/wallet.key is 0600`."""
        return f"{self.outcome:<4}  {self.name:<{NAME_WIDTH}}  {self.detail}"


def _pass(name: str, detail: str) -> CheckResult:
    return CheckResult(name, PASS, detail)


def _fail(name: str, detail: str, *, config_error: bool = False) -> CheckResult:
    return CheckResult(name, FAIL, detail, config_error)


def _skip(name: str, detail: str) -> CheckResult:
    return CheckResult(name, SKIP, detail)


def summary(results: Sequence[CheckResult]) -> str:
    """`12 checks: 10 passed, 1 failed, 1 skipped`."""
    counts = {o: sum(r.outcome == o for r in results) for o in (PASS, FAIL, WARN, SKIP)}
    parts = [f"{counts[PASS]} passed", f"{counts[FAIL]} failed"]
    if counts[WARN]:
        parts.append(f"{counts[WARN]} warning{'s' if counts[WARN] > 1 else ''}")
    if counts[SKIP]:
        parts.append(f"{counts[SKIP]} skipped")
    return f"{len(results)} checks: " + ", ".join(parts)


def exit_code(results: Iterable[CheckResult]) -> int:
    """2 for a configuration failure, 1 for any other failure, else 0."""
    failures = [r for r in results if r.failed]
    if any(r.config_error for r in failures):
        return 2
    return 1 if failures else 0


def public_url(url: str) -> str:
    """`url` fit to print: user info, query and token-like path segments masked.

    Providers put keys in all three (`bot.logging.mask_url`).
    """
    return mask_url(url)


# --- configuration, key, journal: local checks ------------------------------------------


def check_config(path: Path | None, settings: Settings, *, live: bool) -> CheckResult:
    """The configuration parsed and validated (it did, or this is never called)."""
    where = str(path) if path is not None else "defaults and BOT_* environment"
    enabled = sum(e.enabled for e in settings.strategies)
    mode = f"mode {settings.mode}"
    if live and settings.mode != "live":
        mode += ", checked as live (--live)"
    strategies = f"{enabled} strateg{'y' if enabled == 1 else 'ies'} enabled"
    return _pass("config valid", f"{where} ({mode}, {strategies})")


def config_failures(path: Path | None, problems: Sequence[str]) -> list[CheckResult]:
    """One FAIL line per configuration problem (exit 2)."""

    def located(problem: str) -> str:
        if path is None or problem.startswith(str(path)):
            return problem
        return f"{path}: {problem}"

    return [_fail("config valid", located(p), config_error=True) for p in problems]


def check_strategies(settings: Settings) -> tuple[CheckResult, list[Strategy]]:
    """Every enabled strategy's plugin loads and its parameters validate (`build_strategies`)."""
    name = "strategies load"
    try:
        built = build_strategies(settings.strategies, settings.scheduler.strategy_dirs)
    except PluginError as exc:
        return _fail(name, "; ".join(exc.problems), config_error=True), []
    if not built:
        return CheckResult(name, WARN, "no strategy is enabled: the daemon would do nothing"), []
    listed = ", ".join(f"{s.instance} ({type(s).name})" for s in built)
    return _pass(name, listed), built


def check_reference(settings: Settings) -> CheckResult:
    """Which reference price judges swaps; a warning when it is the provider's own feed."""
    name = "swap reference price"
    risk = settings.risk
    if risk.reference == "pyth":
        return _pass(
            name,
            f"Pyth on-chain prices ({risk.pyth_contract}::pyth, no older than "
            f"{risk.pyth_max_age_seconds} s), independent of the provider",
        )
    return CheckResult(
        name,
        WARN,
        "the provider's own /prices feed: it cannot catch a provider whose prices lie too; "
        'set [risk].reference = "pyth" for an independent on-chain reference '
        "(docs/signer.md, Trust model)",
    )


def check_key_file(wallet: WalletSettings) -> CheckResult:
    """The key file exists, is a regular file and only its owner may read it (0600/0400)."""
    name = "key file permissions"
    path = wallet.key_file
    if path is None:
        if wallet.private_key is not None and wallet.private_key.get_secret_value().strip():
            return _skip(name, f"the key comes from {ENV_VARIABLE}, not a file")
        return _fail(
            name,
            f"no private key: set [wallet].key_file to a 0600 key file (or {ENV_VARIABLE}); "
            "create one with: bot keys new --out FILE",
        )
    # A configured key file that cannot be used is a configuration error (exit 2), as
    # for every verb that loads the key (`bot once`, `bot run`…).
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return _fail(name, f"{path} does not exist", config_error=True)
    except OSError as exc:
        return _fail(name, f"{path} cannot be read ({type(exc).__name__})", config_error=True)
    if not stat.S_ISREG(mode):
        return _fail(name, f"{path} is not a regular file", config_error=True)
    bits = stat.S_IMODE(mode)
    if bits & (stat.S_IRWXG | stat.S_IRWXO):
        return _fail(
            name,
            f"{path} is {bits:04o}, open to group or others; run: chmod 600 {path}",
            config_error=True,
        )
    return _pass(name, f"{path} is {bits:04o}")


def check_key(wallet: WalletSettings, file_check: CheckResult) -> tuple[CheckResult, str | None]:
    """The key loads; its address (and that it matches `[wallet].address`, if set)."""
    name = "key loads"
    if file_check.failed:
        return _skip(name, "see key file permissions"), wallet.address
    try:
        key = load_private_key(wallet.key_file, wallet.private_key)
    except KeyFileError as exc:  # names the source, never the content
        return _fail(name, str(exc), config_error=True), wallet.address
    address = str(account_address(key))  # public
    if wallet.address is not None and Address.parse(wallet.address) != Address.parse(address):
        return (
            _fail(name, f"the key is for {address}, but [wallet].address is {wallet.address}"),
            address,
        )
    return _pass(name, f"address {address}"), address


def check_journal(url: str) -> CheckResult:
    """The journal exists at the latest schema and is writable (never migrated here).

    A journal not created yet passes when its folder is writable: `bot run` creates it.
    """
    name = "journal"
    path = sqlite_file(url)
    shown = str(path) if path is not None else make_url(url).render_as_string(hide_password=True)
    if path is not None and not path.exists():
        folder = _existing_parent(path)
        if os.access(folder, os.W_OK | os.X_OK):
            return _pass(name, f"{path} does not exist yet; `bot run` creates it")
        return _fail(name, f"{path} does not exist and {folder} is not writable")
    try:
        revision = current_revision(url)
    except JournalError as exc:  # not a database, or damaged: the message names it
        return _fail(name, str(exc))
    except SQLAlchemyError as exc:
        return _fail(name, f"{shown} cannot be read ({type(exc).__name__})")
    head = head_revision()
    newer = unknown_revision(shown, revision)
    if newer is not None:
        return _fail(name, newer)
    if revision != head:
        return _fail(
            name,
            f"{shown} is at revision {revision or 'none (empty)'}, this bot needs {head}: "
            "back it up, then run `bot journal migrate`",
        )
    try:
        Journal.open(url, readonly=True).close()  # reads every page (SQLite quick_check)
    except JournalError as exc:
        return _fail(name, str(exc))
    if path is not None and not (
        os.access(path, os.R_OK | os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)
    ):
        return _fail(name, f"{path} (or its folder, for the WAL files) is not writable")
    return _pass(name, f"{shown} at revision {head} (latest), writable")


def _existing_parent(path: Path) -> Path:
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def gas_history(url: str, wallet: str) -> list[int]:
    """Gas used by `wallet`'s last committed transactions (empty without a journal).

    The wallet's own: on a journal several wallets share, another's transactions say
    nothing of what this one's strategies send.
    """
    try:
        journal = Journal.open(url, readonly=True, wallet=wallet)
    except (JournalError, SQLAlchemyError):
        return []
    try:
        done = journal.transactions(states=("committed",))
    finally:
        journal.close()
    return [t.gas_used for t in done[-GAS_HISTORY:] if t.gas_used]


def gas_per_transaction(settings: Settings, history: Sequence[int]) -> tuple[int, str]:
    """Gas units to reserve per transaction, and where the figure comes from.

    The signer sets `max_gas_amount` = simulated gas × `[chain].gas_margin`, capped by
    `[risk].max_gas_amount`; the node wants that much gas paid for up front. With a
    history, size it from the largest recent transaction; without, the cap (worst case).
    """
    cap = settings.risk.max_gas_amount
    if not history:
        return cap, "[risk].max_gas_amount, no transaction history yet"
    wanted = (Decimal(max(history)) * settings.chain.gas_margin).to_integral_value(ROUND_CEILING)
    return min(int(wanted), cap), (
        f"largest of the last {len(history)} transactions × [chain].gas_margin"
    )


def check_clock_skew(
    ledger: LedgerInfo, local_now: datetime, *, paper_clock: str | None
) -> CheckResult:
    """Local UTC against the node's ledger time (skipped for a simulated paper clock)."""
    name = "clock skew"
    if paper_clock is not None:
        return _skip(name, f"skipped (paper clock: {paper_clock})")
    skew = (local_now - ledger.timestamp).total_seconds()
    side = "ahead of" if skew >= 0 else "behind"
    detail = f"local clock {abs(skew):.1f} s {side} the node's ledger time"
    if abs(skew) > CLOCK_SKEW_LIMIT_SECONDS:
        return _fail(
            name,
            f"{detail} (limit {CLOCK_SKEW_LIMIT_SECONDS} s): sync the clock (NTP) "
            "or use a node that is not behind",
        )
    return _pass(name, detail)


def check_unknown_fields(stats: ClientStats) -> CheckResult:
    """Fields the provider sent that the spec does not name, and records set aside."""
    name = "unknown response fields"
    notes = [f"{field} ×{count}" for field, count in stats.unknown_fields.most_common(5)]
    if len(stats.unknown_fields) > 5:
        notes.append(f"and {len(stats.unknown_fields) - 5} more")
    if stats.rejected_records:
        notes.append(f"{stats.rejected_records} records did not match the spec")
    if notes:
        return CheckResult(name, WARN, "; ".join(notes) + " (see docs/wire-decisions.md)")
    return _pass(name, "none seen")


# --- the node and the API --------------------------------------------------------------


def referenced_tokens(strategies: Iterable[Strategy], book: TokenBook) -> list[Token]:
    """The tokens the strategies declare (`tokens()`), as the engine finds them."""
    names = (name for s in strategies for name in sorted(needed_tokens(s)))
    return list(book.tokens_named(names).values())


@dataclass
class Doctor:
    """The checks that need the network, run in order against one config's services.

    Attributes:
        settings: the configuration as checked (mode forced to live by `--live`).
        client: the provider client, or None when its API key could not be read.
        api_problem: why there is no client.
        node: the node client of the mode (paper node in paper mode).
        api_url, node_url: what to show for them.
        chain_id: the chain id the config expects.
        paper_clock: the paper world's clock kind when it is simulated (skew skipped).
        clock: the real clock (aware UTC).
    """

    settings: Settings
    client: PanoraClient | None
    api_problem: str | None
    node: NodeClient
    api_url: str
    node_url: str
    chain_id: int
    paper_clock: str | None
    clock: Clock

    async def run(self, strategies: Sequence[Strategy]) -> list[CheckResult]:
        """Key, node, API, balances, gas, journal, clock and wire checks (after config)."""
        wallet_settings = self.settings.wallet
        file_check = check_key_file(wallet_settings)
        key_check, wallet = check_key(wallet_settings, file_check)
        results = [file_check, key_check]
        node_checks, ledger, local_now = await self.check_node()
        results += node_checks
        from bot.ops.doctor_key import check_api_key_source  # it imports this module

        api_check, book = await self.check_api()
        results += [check_api_key_source(self.settings), api_check]
        results.append(await self.check_orders(book, wallet))
        balances_check, units = await self.check_balances(ledger, book, wallet, strategies)
        results.append(balances_check)
        results.append(await self.check_gas(ledger, book, wallet, units))
        results.append(check_journal(self.settings.journal.url))
        if ledger is None:
            results.append(_skip("clock skew", "node not usable"))
        else:
            results.append(check_clock_skew(ledger, local_now, paper_clock=self.paper_clock))
        if self.client is None or book is None:
            results.append(_skip("unknown response fields", "the API check failed"))
        else:
            results.append(check_unknown_fields(self.client.stats))
        return results

    async def check_node(self) -> tuple[list[CheckResult], LedgerInfo | None, datetime]:
        """Reachable (ledger info), and on the configured chain id."""
        reach, chain = "node reachable", "node chain id"
        try:
            info = await self.node.ledger_info()
        except ChainIdMismatch as exc:  # the node's header names another chain
            mismatch = f"node says {exc.actual}, config says {exc.expected}"
            return [_pass(reach, self.node_url), _fail(chain, mismatch)], None, self.clock.now()
        except ChainError as exc:
            failed = _fail(reach, f"{self.node_url}: {exc}")
            return [failed, _skip(chain, "node not reachable")], None, self.clock.now()
        local_now = self.clock.now()
        reached = _pass(reach, f"{self.node_url} (ledger version {info.ledger_version})")
        ids = f"node says {info.chain_id}, config says {self.chain_id}"
        if info.chain_id != self.chain_id:
            return [reached, _fail(chain, ids)], None, local_now
        return [reached, _pass(chain, ids)], info, local_now

    async def check_api(self) -> tuple[CheckResult, TokenBook | None]:
        """An authenticated read (`GET /prices`, the token list the bot needs anyway)."""
        name = "API key accepted"
        if self.client is None:
            return _fail(name, self.api_problem or "no API client"), None
        try:
            book = await fetch_token_book(self.client)
        except (Unauthorized, UnexpectedStatus) as exc:
            if exc.status_code not in (401, 403):  # another status: not about the key
                return _fail(name, f"{self.api_url}: {exc}"), None
            where = "[api].api_key, BOT_API__API_KEY or [api].api_key_file"
            where = "[paper].api_keys" if self.settings.mode == "paper" else where
            refused = f"{self.api_url} refused the API key ({exc.status_code})"
            return _fail(name, f"{refused}: check {where}"), None
        except NotSent as exc:
            return _fail(name, f"{self.api_url} not reachable: {exc}"), None
        except ApiError as exc:
            return _fail(name, f"{self.api_url}: {exc}"), None
        return _pass(name, f"{self.api_url}: GET /prices listed {len(book)} tokens"), book

    async def check_orders(self, book: TokenBook | None, wallet: str | None) -> CheckResult:
        """The wallet's active DCA and limit orders can be listed (what the tracker polls)."""
        name = "order lists"
        if self.client is None or book is None:
            return _skip(name, "the API check failed")
        if wallet is None:
            return _skip(name, "no wallet address (no key loaded, [wallet].address unset)")
        counts = []
        kinds = ((OrderKind.DCA, "DCA"), (OrderKind.LIMIT, "limit"))
        for kind, label in kinds:
            pages = iter_orders(self.client, kind, wallet, OrderFilter.ACTIVE, max_pages=1)
            try:
                page = await anext(aiter(pages))
            except ApiError as exc:
                return _fail(name, f"cannot list {label} orders: {exc}")
            more = "+" if page.total_pages > 1 else ""
            counts.append(f"{len(page.orders)}{more} {label}")
        return _pass(name, f"active orders of {wallet}: {', '.join(counts)}")

    async def _units(self, wallet: str, token: Token) -> int:
        try:
            return await self.node.balance(Address.parse(wallet), token.address)
        except NodeError as exc:
            if exc.status == 404:  # no store of this asset (or no account) yet: nothing held
                return 0
            raise

    async def check_balances(
        self,
        ledger: LedgerInfo | None,
        book: TokenBook | None,
        wallet: str | None,
        strategies: Sequence[Strategy],
    ) -> tuple[CheckResult, dict[str, int]]:
        """The wallet's balance of every token the strategies name; FAIL if all are zero."""
        name = "token balances"
        if ledger is None or book is None or wallet is None:
            return _skip(name, _missing(ledger, book, wallet)), {}
        tokens = referenced_tokens(strategies, book)
        if not tokens:
            return _skip(name, "no strategy names a token"), {}
        units: dict[str, int] = {}
        try:
            for token in tokens:
                units[token.address] = await self._units(wallet, token)
        except ChainError as exc:
            return _fail(name, f"cannot read balances: {exc}"), units
        shown = ", ".join(
            f"{format_decimal(from_base_units(units[t.address], t.decimals))} {t.symbol}"
            for t in tokens
        )
        if not any(units.values()):
            return _fail(name, f"{wallet} holds none of its strategies' tokens ({shown})"), units
        return _pass(name, shown), units

    async def check_gas(
        self,
        ledger: LedgerInfo | None,
        book: TokenBook | None,
        wallet: str | None,
        units: dict[str, int],
    ) -> CheckResult:
        """APT enough for `[daemon].gas_reserve_transactions` transactions."""
        name = "APT for gas"
        if ledger is None or book is None or wallet is None:
            return _skip(name, _missing(ledger, book, wallet))
        try:
            apt = book.find("APT")
        except TokenLookupError:
            return _fail(name, "APT is not in the provider's token list")
        count = self.settings.daemon.gas_reserve_transactions
        try:
            have = units[apt.address] if apt.address in units else await self._units(wallet, apt)
            price = await self.node.estimate_gas_price()
        except ChainError as exc:
            return _fail(name, f"cannot read the APT balance or gas price: {exc}")
        gas, basis = gas_per_transaction(
            self.settings, gas_history(self.settings.journal.url, wallet)
        )
        need = count * gas * price
        held = format_decimal(from_base_units(have, apt.decimals))
        needed = format_decimal(from_base_units(need, apt.decimals))
        each = f"{gas} gas × {price} octas each: {basis}"
        if have < need:
            return _fail(
                name,
                f"{held} APT is less than {needed} APT for {count} transactions ({each}); "
                "fund the wallet or lower [daemon].gas_reserve_transactions",
            )
        return _pass(name, f"{held} APT covers {count} transactions ({needed} APT; {each})")


def _missing(ledger: LedgerInfo | None, book: TokenBook | None, wallet: str | None) -> str:
    if ledger is None:
        return "node not usable"
    if book is None:
        return "no token list (the API check failed)"
    if wallet is None:
        return "no wallet address (no key loaded, [wallet].address unset)"
    return ""
