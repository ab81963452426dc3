"""`bot status`: whether the daemon runs and looks healthy, from files only (no network).

Sources, all local: the status file the daemon rewrites every heartbeat (`status_file`),
the wallet lock it holds while it trades (`engine.wallet_lock`), and the journal (open
orders, today's spend against the caps, counted as the risk check counts it).

Running: the wallet lock is held (probed with a non-blocking shared `flock`, released at
once; skipped when the pid written in the lock file is gone, so a daemon starting up almost
never finds its lock briefly taken). A dry run takes no lock: then, as without any lock
file, the status file's pid must be alive and its state not "stopped".

Healthy (exit 0): running, a status file written by that process, state "starting" or
"running", the daemon's own verdict healthy, and the file updated within 3 × the heartbeat
interval. `updated_at` is wall-clock time and is judged against the real clock.

Spend is counted for the current UTC day; for a paper world on a simulated clock, for the
simulation's day (its latest tick in the status file, else its latest intent).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from bot.aptos.address import Address, AddressError
from bot.aptos.tokens import TokenBook
from bot.clock import parse_utc
from bot.config import Settings
from bot.domain import LIVE_ORDER_STATUSES
from bot.engine import risk
from bot.engine.ports import SpendLedger
from bot.engine.risk import RiskChecker
from bot.engine.wallet_lock import WalletLock, lock_dir
from bot.journal import Journal, JournalError
from bot.money import format_decimal
from bot.ops.status_file import DaemonStatus, StrategyStatus, read_status, status_path

__all__ = [
    "HEALTHY_STATES",
    "STALE_HEARTBEATS",
    "LockState",
    "SpendLine",
    "StatusView",
    "ago",
    "find_lock",
    "judge",
    "probe_lock",
    "process_alive",
    "read_view",
    "spend_lines",
]

STALE_HEARTBEATS: Final = 3
"""The status file is stale when older than this many heartbeat intervals."""
HEALTHY_STATES: Final = ("starting", "running")
ALL_STRATEGIES: Final = "all strategies"


def process_alive(pid: int) -> bool:
    """True when a process with this pid exists (in this pid namespace)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


@dataclass(frozen=True)
class LockState:
    """What a wallet lock file says: held by a live process or not, and whose pid it names."""

    path: Path
    exists: bool
    held: bool | None
    """True: a process holds it; False: nobody does; None: could not be probed."""
    pid: int | None


def _read_pid(fd: int) -> int | None:
    text = os.read(fd, 64).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def probe_lock(path: Path) -> LockState:
    """Probe a wallet lock without creating, writing or keeping it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return LockState(path, exists=False, held=False, pid=None)
    except OSError:
        return LockState(path, exists=True, held=None, pid=None)
    try:
        pid = _read_pid(fd)
        if pid is not None and not process_alive(pid):
            return LockState(path, exists=True, held=False, pid=pid)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return LockState(path, exists=True, held=True, pid=pid)
        except OSError:
            return LockState(path, exists=True, held=None, pid=pid)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return LockState(path, exists=True, held=False, pid=pid)
    finally:
        os.close(fd)


def find_lock(directory: Path, wallet: str | None) -> LockState | None:
    """The wallet's lock; without a wallet, the held one among `wallet-*.lock` (or None)."""
    if wallet is not None:
        return probe_lock(WalletLock(directory, wallet).path)
    probes = [probe_lock(p) for p in sorted(directory.glob("wallet-*.lock"))]
    held = [p for p in probes if p.held]
    return held[0] if held else (probes[0] if probes else None)


@dataclass(frozen=True)
class SpendLine:
    """Today's spend of one token against one cap (`scope`: all strategies, or one)."""

    scope: str
    token: str
    spent: Decimal | None
    """None when the token cannot be resolved offline or the journal is unavailable."""
    cap: Decimal

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data, amounts as exact decimal text."""
        return {
            "scope": self.scope,
            "token": self.token,
            "spent": None if self.spent is None else format_decimal(self.spent),
            "cap": format_decimal(self.cap),
        }


def spend_lines(
    settings: Settings,
    journal: SpendLedger | None,
    tokens: TokenBook,
    wallet: str | None,
    day: date,
) -> list[SpendLine]:
    """Spend on UTC `day` against `[risk].daily_spend_caps` and each strategy's budget.

    Counted as `RiskChecker` counts it (the same token resolution and intent states), so
    the figure shown is the one the next risk check will use.
    """
    budgets = {e.name: e.budget for e in settings.strategies if e.enabled and e.budget}
    scopes: list[tuple[str | None, dict[str, Decimal]]] = [
        (None, dict(settings.risk.daily_spend_caps)),
        *((name, dict(budget)) for name, budget in budgets.items()),
    ]
    checker = RiskChecker(settings.risk, journal, tokens, budgets=budgets) if journal else None
    lines = []
    for strategy, caps in scopes:
        for name, cap in caps.items():
            spent = None
            if checker is not None and journal is not None and wallet is not None:
                token = checker.resolve(name)
                try:
                    spent = journal.spent_today(
                        strategy, wallet, token, day, states=risk.COUNTED_STATES
                    )
                except JournalError:  # a symbol the offline token list does not know
                    spent = None
            lines.append(SpendLine(strategy or ALL_STRATEGIES, name, spent, cap))
    return lines


@dataclass
class StatusView:
    """Everything `bot status` shows, and its verdict."""

    running: bool
    healthy: bool
    problem: str | None
    pid: int | None
    status: DaemonStatus | None
    status_file: Path
    lock: LockState | None
    now: datetime
    stale_after_seconds: int
    mode: str
    wallet: str | None
    open_orders: int | None = None
    journal_problem: str | None = None
    spend_day: date | None = None
    spend: list[SpendLine] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when the daemon runs and looks healthy, else 1."""
        return 0 if self.running and self.healthy else 1

    def _seconds_since(self, text: str | None) -> int | None:
        if not text:
            return None
        try:
            return max(0, int((self.now - parse_utc(text)).total_seconds()))
        except ValueError:
            return None

    def to_json(self) -> dict[str, Any]:
        """The `--json` document (keys documented in docs/operations.md; stable)."""
        status = self.status
        strategies = status.strategies if status else {}
        return {
            "running": self.running,
            "healthy": self.healthy,
            "problem": self.problem,
            "pid": self.pid,
            "state": status.state if status else None,
            "mode": self.mode,
            "wallet": self.wallet,
            "version": status.version if status else None,
            "dry_run": status.dry_run if status else None,
            "started_at": status.started_at if status else None,
            "updated_at": status.updated_at if status else None,
            "uptime_seconds": self._seconds_since(status.started_at)
            if status and self.running
            else None,
            "status_age_seconds": self._seconds_since(status.updated_at) if status else None,
            "stale_after_seconds": self.stale_after_seconds,
            "strategies": {name: _strategy_json(s) for name, s in sorted(strategies.items())},
            "clock": status.clock if status else None,
            "market_now": status.market_now if status else None,
            "errors": status.errors if status else None,
            "last_poll_at": status.last_poll_at if status else None,
            "last_poll_ok_at": status.last_poll_ok_at if status else None,
            "open_orders": self.open_orders,
            "apt_balance": status.apt_balance if status else None,
            "spend_day": self.spend_day.isoformat() if self.spend_day else None,
            "spend_today": [line.to_json() for line in self.spend],
            "status_file": str(self.status_file),
            "lock_file": str(self.lock.path) if self.lock else None,
            "journal_problem": self.journal_problem,
        }

    def lines(self) -> list[str]:
        """The human-readable report, one fact per line."""
        status = self.status
        out = [self._headline()]
        if self.running:
            problem = str(self.problem)
            verdict = problem if problem.startswith("degraded") else "UNHEALTHY: " + problem
            out.append(f"  health      {'ok' if self.healthy else verdict}")
        if status is not None:
            age = self._seconds_since(status.updated_at)
            out.append(
                f"  status      {status.state}, updated {ago(age)} "
                f"(stale after {self.stale_after_seconds} s), {self.status_file}"
            )
            out.extend(_strategy_lines(status))
            poll = status.last_poll_at or "never"
            ok = status.last_poll_ok_at or "never"
            out.append(f"  last poll   {poll} (last successful {ok})")
            out.append(f"  APT (gas)   {status.apt_balance or 'unknown'}")
        if self.open_orders is not None:
            out.append(f"  open orders {self.open_orders} (journal)")
        else:
            out.append(f"  open orders unknown: {self.journal_problem}")
        out.extend(self._spend_lines())
        return out

    def _headline(self) -> str:
        if not self.running:
            return f"bot not running ({self.problem})"
        status = self.status
        uptime = self._seconds_since(status.started_at) if status else None
        parts = [f"pid {self.pid}"]
        if uptime is not None:
            parts.append(f"up {_duration(uptime)}")
        parts.append(f"{self.mode} mode")
        if self.wallet:
            parts.append(f"wallet {self.wallet}")
        return f"bot running ({', '.join(parts)})"

    def _spend_lines(self) -> list[str]:
        if not self.spend:
            return ["  spend       no daily caps or budgets configured"]
        day = self.spend_day.isoformat() if self.spend_day else "today"
        out = [f"  spend       {day} (UTC day), against the caps"]
        for line in self.spend:
            spent = "unknown" if line.spent is None else format_decimal(line.spent)
            out.append(f"    {line.scope:<18} {spent} of {format_decimal(line.cap)} {line.token}")
        return out


def _strategy_json(s: StrategyStatus) -> dict[str, Any]:
    return {
        "ticks": s.ticks,
        "errors": s.errors,
        "refused": s.refused,
        "actions": s.actions,
        "last_tick": s.last_tick,
        "last_error": s.last_error,
        "next_tick": s.next_tick,
        "stuck": s.stuck,
        "paused": s.paused,
    }


def _strategy_lines(status: DaemonStatus) -> list[str]:
    strategies = status.strategies
    if not strategies:
        return ["  strategies  none"]
    head = "  strategies"
    if status.clock != "real":
        head += f" (times on the paper world's {status.clock} clock, now {status.market_now})"
    out = [head]
    for name, s in sorted(strategies.items()):
        line = (
            f"    {name:<18} last tick {s.last_tick or 'never'}, "
            f"next {_next_tick(s, status.market_now)}, {s.ticks} ticks, "
            f"{s.actions} actions, {s.errors} errors, {s.refused} refused"
        )
        if s.last_error:
            line += f" (last error: {s.last_error})"
        out.append(line)
        if s.paused:
            out.append(f"    {'':<18} PAUSED: bot strategies resume {name}")
        if s.stuck:
            out.append(f"    {'':<18} STUCK: {s.stuck}")
    return out


def _next_tick(s: StrategyStatus, market_now: str | None) -> str:
    """`2026-… (in 42m 10s)`, on the clock the daemon ticks on."""
    if s.paused:
        return "none (paused)"
    if not s.next_tick:
        return "not scheduled"
    try:
        wait = int((parse_utc(s.next_tick) - parse_utc(market_now or "")).total_seconds())
    except ValueError:
        return s.next_tick
    return f"{s.next_tick} (in {_duration(max(0, wait))})"


def _duration(seconds: int) -> str:
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def ago(seconds: int | None) -> str:
    """How long ago, as `bot status` says it (`1h 2m ago`; None: an unreadable time)."""
    return "at an unreadable time" if seconds is None else f"{_duration(seconds)} ago"


def _canonical(wallet: str | None) -> str | None:
    if wallet is None:
        return None
    try:
        return str(Address.parse(wallet))
    except AddressError:
        return None


def judge(
    status: DaemonStatus | None,
    lock: LockState | None,
    *,
    now: datetime,
    stale_after_seconds: int,
) -> tuple[bool, int | None, str | None]:
    """(running, pid, problem): problem is None when the daemon runs and looks healthy."""
    dry_run = status is not None and status.dry_run  # a dry run takes no wallet lock
    if lock is not None and lock.held:
        running, pid = True, lock.pid or (status.pid if status else None)
    elif lock is not None and lock.exists and lock.held is False and not dry_run:
        running, pid = False, None
    else:
        running = status is not None and status.state != "stopped" and process_alive(status.pid)
        pid = status.pid if status else None
    if not running:
        if status is None:
            return False, None, "no status file"
        return False, None, f"last status: {status.state} at {status.updated_at}"
    if status is None:
        return True, pid, "running, but it has written no status file yet"
    if pid is not None and status.pid != pid:
        return True, pid, f"the status file is from pid {status.pid}, not the running pid {pid}"
    if status.state not in HEALTHY_STATES:
        return True, pid, f"the daemon is {status.state}"
    try:
        age = (now - parse_utc(status.updated_at)).total_seconds()
    except ValueError:
        return True, pid, f"unreadable updated_at {status.updated_at!r} in the status file"
    if age > stale_after_seconds:
        return (
            True,
            pid,
            f"stale: the status file was last updated {int(age)} s ago "
            f"(more than {stale_after_seconds} s); the daemon may be stuck",
        )
    if not status.healthy:
        return True, pid, status.problem or "the daemon reports itself unhealthy"
    return True, pid, None


def _spend_day(view: StatusView, settings: Settings, journal: Journal) -> date:
    """The UTC day the caps count now: today, or a simulated paper world's own day.

    On a simulated clock that is the latest tick the status file shows, else the day of
    the journal's latest intent.
    """
    if view.mode != "paper" or settings.paper.clock == "real":
        return view.now.date()
    ticks = []
    for strategy in view.status.strategies.values() if view.status else []:
        try:
            ticks.append(parse_utc(strategy.last_tick or ""))
        except ValueError:
            continue
    times = ticks or [i.created_at for i in journal.intents()]
    return max(times).date() if times else view.now.date()


def read_view(settings: Settings, *, now: datetime, tokens: TokenBook) -> StatusView:
    """Read the status file, the wallet lock and the journal; never touches the network.

    Args:
        settings: the configuration (`[daemon]`, `[journal]`, `[risk]`, strategies).
        now: the current real time (aware UTC).
        tokens: a token book available offline, to resolve cap symbols.
    """
    path = status_path(settings.journal.url, settings.daemon.status_file)
    status = read_status(path)
    wallet = _canonical(status.wallet if status and status.wallet else settings.wallet.address)
    lock = find_lock(lock_dir(settings.daemon.lock_dir), wallet)
    if wallet is None and lock is not None and lock.held:
        wallet = _wallet_of_lock(lock.path)
    heartbeat = (status.heartbeat_seconds if status else None) or settings.daemon.heartbeat_seconds
    stale_after = STALE_HEARTBEATS * heartbeat
    running, pid, problem = judge(status, lock, now=now, stale_after_seconds=stale_after)
    view = StatusView(
        running=running,
        healthy=running and problem is None,
        problem=problem,
        pid=pid,
        status=status,
        status_file=path,
        lock=lock,
        now=now,
        stale_after_seconds=stale_after,
        mode=status.mode if status else settings.mode,
        wallet=wallet,
    )
    _add_journal_facts(view, settings, tokens)
    return view


def _wallet_of_lock(path: Path) -> str | None:
    return _canonical("0x" + path.stem.removeprefix("wallet-"))


def _add_journal_facts(view: StatusView, settings: Settings, tokens: TokenBook) -> None:
    try:
        # The wallet's rows only (a journal shared by several wallets' daemons).
        journal = Journal.open(settings.journal.url, readonly=True, wallet=view.wallet)
    except JournalError as exc:
        view.journal_problem = str(exc)
        view.spend = spend_lines(settings, None, tokens, view.wallet, view.now.date())
        return
    try:
        if view.wallet is not None:
            view.open_orders = len(journal.orders(status=LIVE_ORDER_STATUSES, wallet=view.wallet))
        else:
            view.journal_problem = "no wallet known (set [wallet].address)"
        view.spend_day = _spend_day(view, settings, journal)
        view.spend = spend_lines(settings, journal, tokens, view.wallet, view.spend_day)
    finally:
        journal.close()
