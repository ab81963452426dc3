"""The daemon's heartbeat: one snapshot, four outputs.

Every `[daemon].heartbeat_seconds` the daemon takes a `DaemonStatus` snapshot (strategies
and their counters, open orders from the journal, the last tick, errors since start, the
last order poll, the APT balance for gas) and turns it into a `heartbeat` log line, the
status file `bot status` reads, the `STATUS=` line `systemctl status` shows, and its
wallet's row of the journal's `daemons` table (`record_daemon`), which `bot status --all`
lists for every wallet sharing the journal.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Collection, Iterable, Mapping, Sequence, Sized
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final, Protocol

from bot import __version__
from bot.aptos.address import Address
from bot.aptos.tokens import TokenBook
from bot.chain import NodeClient
from bot.clock import parse_utc
from bot.domain import LIVE_ORDER_STATUSES, OrderStatus
from bot.engine.engine import StrategyStats
from bot.journal import DaemonView, IntentTransitionView, IntentView
from bot.logging import get_logger
from bot.money import format_decimal, from_base_units
from bot.ops.status_file import DaemonStatus, StrategyStatus

__all__ = [
    "DaemonFacts",
    "DaemonRegistry",
    "OpenWork",
    "apt_balance",
    "build_status",
    "daemon_row",
    "iso",
    "log_heartbeat",
    "missing_order_count",
    "open_order_count",
    "record_daemon",
    "status_line",
]


def iso(moment: datetime | None) -> str | None:
    """ISO-8601 UTC text with a `Z`, or None."""
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


class OpenWork(Protocol):
    """What the heartbeat reads of the journal: live orders, intents not settled."""

    def orders(self, *, status: Iterable[str] | None = None, wallet: str | None = None) -> Sized:
        """The wallet's orders with one of `status` (the heartbeat counts them)."""
        ...

    def intents(
        self, states: Iterable[str] | None = None, strategy: str | None = None
    ) -> Iterable[IntentView]:
        """Intents (oldest first), optionally only in `states`."""
        ...

    def intent_history(self, intent_id: int) -> Sequence[IntentTransitionView]:
        """An intent's state changes, oldest first."""
        ...


def open_order_count(journal: OpenWork, wallet: str | None) -> int:
    """The wallet's orders that may still trade, as the journal knows them."""
    return len(journal.orders(status=LIVE_ORDER_STATUSES, wallet=wallet))


def missing_order_count(journal: OpenWork, wallet: str | None) -> int:
    """The wallet's orders the provider no longer lists (`missing`: live, not ended)."""
    return len(journal.orders(status=[OrderStatus.MISSING], wallet=wallet))


UNSETTLED_AFTER: Final = timedelta(minutes=15)
"""An intent `unknown` longer than this (the reconciler's grace) is reported as unsettled."""


def unsettled_intents(journal: OpenWork, wallet: str | None, now: datetime) -> list[str]:
    """One line per intent of the wallet still `unknown` after `UNSETTLED_AFTER`.

    Such an intent holds its key (never blindly resent) and waits for evidence, or for a
    person (`held: …`): the daemon is `degraded` meanwhile, whether or not its strategy
    proposes the key again.
    """
    lines = []
    for intent in journal.intents(states=["unknown"]):
        if intent.wallet != wallet or now - intent.updated_at < UNSETTLED_AFTER:
            continue
        minutes = int((now - intent.updated_at).total_seconds() // 60)
        history = journal.intent_history(intent.id)
        detail = history[-1].detail if history else None
        why = f" ({detail})" if detail else ""
        lines.append(
            f"intent {intent.id} ({intent.strategy}, {intent.kind}) unknown for {minutes} min"
            f"{why}; see bot reconcile"
        )
    return lines


async def apt_balance(node: NodeClient, tokens: TokenBook, wallet: str | None) -> Decimal | None:
    """The wallet's APT (human units) from the node, or None when it cannot be read."""
    if wallet is None:
        return None
    try:
        apt = tokens.find("APT")
        units = await node.balance(Address.parse(wallet), apt.address)
    except Exception:  # informative only: no APT token, a node hiccup: never stop the beat
        return None
    return from_base_units(units, apt.decimals)


class DaemonFacts:
    """What the daemon itself knows between heartbeats (not the engine's counters)."""

    def __init__(self, *, started_at: datetime, mode: str, wallet: str | None, dry_run: bool):
        self.pid = os.getpid()
        self.started_at = started_at
        self.mode = mode
        self.wallet = wallet
        self.dry_run = dry_run
        self.errors = 0
        """Failed ticks and failed jobs since start."""
        self.reloaded_at: datetime | None = None


def build_status(
    facts: DaemonFacts,
    *,
    state: str,
    now: datetime,
    stats: Mapping[str, StrategyStats],
    open_orders: int,
    last_poll_at: datetime | None,
    last_poll_ok_at: datetime | None,
    apt: Decimal | None,
    problem: str | None,
    heartbeat_seconds: int,
    next_ticks: Mapping[str, datetime | None] | None = None,
    stuck: Mapping[str, str] | None = None,
    paused: Collection[str] = (),
    market_now: datetime | None = None,
    clock: str = "real",
) -> DaemonStatus:
    """One snapshot of the daemon.

    `next_ticks`: each strategy's next scheduled tick; `stuck`: the strategies getting
    nowhere and why; `paused`: those the user paused; `market_now` and `clock`: the
    clock those times are on.
    """
    next_ticks, stuck = next_ticks or {}, stuck or {}
    return DaemonStatus(
        pid=facts.pid,
        state=state,
        started_at=iso(facts.started_at) or "",
        updated_at=iso(now) or "",
        mode=facts.mode,
        wallet=facts.wallet,
        version=__version__,
        dry_run=facts.dry_run,
        strategies={
            name: StrategyStatus(
                ticks=s.ticks,
                errors=s.errors,
                refused=s.refused,
                actions=s.actions,
                last_tick=iso(s.last_tick),
                last_error=s.last_error,
                next_tick=iso(next_ticks.get(name)),
                stuck=stuck.get(name),
                paused=name in paused,
            )
            for name, s in sorted(stats.items())
        },
        last_poll_at=iso(last_poll_at),
        last_poll_ok_at=iso(last_poll_ok_at),
        open_orders=open_orders,
        apt_balance=None if apt is None else format_decimal(apt),
        errors=facts.errors,
        healthy=problem is None,
        problem=problem,
        heartbeat_seconds=heartbeat_seconds,
        reloaded_at=iso(facts.reloaded_at),
        market_now=iso(market_now),
        clock=clock,
    )


def _last_tick(status: DaemonStatus) -> str | None:
    ticks = [s.last_tick for s in status.strategies.values() if s.last_tick]
    return max(ticks) if ticks else None


def status_line(status: DaemonStatus) -> str:
    """The one line for `systemctl status`: `running: 5 strategies, 3 open orders, …`."""
    count = len(status.strategies)
    last = _last_tick(status)
    parts = [
        f"{count} strateg{'y' if count == 1 else 'ies'}",
        f"{status.open_orders} open order{'' if status.open_orders == 1 else 's'}",
        f"last tick {last[11:19] + 'Z' if last else 'none yet'}",
    ]
    paused = sum(1 for s in status.strategies.values() if s.paused)
    if paused:
        parts.append(f"{paused} paused")
    if status.errors:
        parts.append(f"{status.errors} error{'' if status.errors == 1 else 's'}")
    head = status.state
    if not status.healthy:
        problem = str(status.problem)
        degraded = problem.startswith("degraded")
        head += f", {problem}" if degraded else f", unhealthy ({problem})"
    return f"{head}: " + ", ".join(parts)


def log_heartbeat(status: DaemonStatus) -> None:
    """The `heartbeat` log line (info when healthy, warning when not)."""
    fields: dict[str, Any] = {
        "state": status.state,
        "strategies": sorted(status.strategies),
        "open_orders": status.open_orders,
        "last_tick": _last_tick(status),
        "errors": status.errors,
        "last_poll": status.last_poll_at,
        "last_poll_ok": status.last_poll_ok_at,
        "apt": status.apt_balance,
    }
    stuck = {name: s.stuck for name, s in status.strategies.items() if s.stuck}
    if stuck:
        fields["stuck"] = stuck
    paused = sorted(name for name, s in status.strategies.items() if s.paused)
    if paused:
        fields["paused"] = paused
    log = get_logger("daemon")
    if status.healthy:
        log.info("heartbeat", **fields)
    else:
        log.warning("heartbeat", problem=status.problem, **fields)


class DaemonRegistry(Protocol):
    """Where a daemon's heartbeat row goes: the journal's `daemons` table."""

    def record_daemon(self, daemon: DaemonView) -> None:
        """Insert or replace the wallet's row."""
        ...


def daemon_row(status: DaemonStatus, *, host: str | None = None) -> DaemonView | None:
    """The `daemons` row of a status snapshot; None without a wallet (nothing to key it by).

    Raises:
        ValueError: a time of the snapshot that is not ISO-8601.
    """
    if status.wallet is None:
        return None
    last = _last_tick(status)
    return DaemonView(
        wallet=status.wallet,
        host=host if host is not None else socket.gethostname(),
        pid=status.pid,
        mode=status.mode,
        state=status.state,
        health="ok" if status.healthy else str(status.problem or "unhealthy"),
        version=status.version,
        strategies=len(status.strategies),
        heartbeat_seconds=status.heartbeat_seconds or 0,
        started_at=parse_utc(status.started_at),
        beat_at=parse_utc(status.updated_at),
        last_tick_at=None if last is None else parse_utc(last),
    )


def record_daemon(journal: DaemonRegistry, status: DaemonStatus) -> None:
    """Write the wallet's `daemons` row from a status snapshot (no wallet: nothing).

    A failure is logged, never raised: the heartbeat goes on without its row (`bot status
    --all` then shows the row growing stale).
    """
    try:
        row = daemon_row(status)
        if row is not None:
            journal.record_daemon(row)
    except Exception as exc:  # a journal hiccup must not stop the status file or the beat
        get_logger("daemon").error("daemon_row.failed", error=f"{type(exc).__name__}: {exc}")
