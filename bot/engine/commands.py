"""Requests a second process hands to the running daemon through the journal's queue.

The daemon, holding the wallet lock, takes queued commands one at a time (oldest first) and
runs them itself, so only one process ever signs for the wallet or changes what runs.
Commands: `cancel` with `{kind: dca|limit, order_id}` (through the daemon's executor),
`pause` and `resume` with `{strategy}` (`bot.engine.pauses`), `stopentry` (pause every
running strategy: no new order or swap is started; orders already placed stay with the
provider, cancel them one by one), `reconcile` (settle what lost its answer now, as the
periodic reconcile job does) and `reload` (reload the config as SIGHUP does). A payload
may carry who asked (`by`: e.g. the Telegram chat and user, or the console's client); it
is kept in the journal with the command and never read here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from bot.clock import Clock
from bot.domain import OrderKind
from bot.engine.actions import CancelDca, CancelLimit
from bot.engine.executor import Executor
from bot.engine.pauses import PauseStore, apply_pause
from bot.engine.reconcile import Resolution
from bot.journal import CommandView
from bot.logging import redact

if TYPE_CHECKING:
    from bot.engine.engine import Engine

__all__ = [
    "CLI_STRATEGY",
    "CommandQueue",
    "Reconcile",
    "Reload",
    "cancel_action",
    "process_commands",
    "reconcile_line",
    "stop_entries",
    "wait_for_command",
]

CLI_STRATEGY = "cli"
"""The strategy name intents from the command line are recorded under."""

Reconcile = Callable[[], Awaitable[Sequence[Resolution]]]
"""One run of the daemon's reconciler over intents whose execution is over."""

Reload = Callable[[], str]
"""Asks the daemon to reload its config as SIGHUP does; returns the line to record.

It only asks: the reload itself waits for running jobs, the command job among them.
"""


class CommandQueue(PauseStore, Protocol):
    """The journal's command queue, and the pause flags `pause`/`resume` write.

    `bot.journal.Journal` is one; a read-only journal serves `wait_for_command`.
    """

    def take_command(self, *, at: datetime) -> CommandView | None:
        """Take the oldest queued command (now `taken`), or None."""
        ...

    def finish_command(
        self, command_id: int, ok: bool, result: str | None = None, *, at: datetime
    ) -> CommandView:
        """Mark a taken command `done` (ok) or `failed`, with a result text."""
        ...

    def command(self, command_id: int) -> CommandView | None:
        """One command by id."""
        ...


def cancel_action(kind: str, order_id: str, clock: Clock) -> CancelDca | CancelLimit:
    """The cancel action of a CLI request (a fresh key: each request is its own intent)."""
    key = f"cancel:{order_id}:{clock.now().isoformat()}:{time.monotonic_ns()}"
    if kind == "dca":
        return CancelDca(key=key, order_id=order_id)
    return CancelLimit(key=key, order_id=order_id)


async def process_commands(
    journal: CommandQueue,
    executor: Executor,
    clock: Clock,
    engine: Engine | None = None,
    *,
    reconcile: Reconcile | None = None,
    reload: Reload | None = None,
    may_go_on: Callable[[], Awaitable[bool]] | None = None,
) -> int:
    """Run every queued command; returns how many were taken.

    `engine`: the strategies `pause`/`resume`/`stopentry` act on, `reconcile`: what a
    `reconcile` command runs, `reload`: what asks the daemon to reload its config
    (without them those commands are refused). A command that raises is finished
    `failed` with the error, never left `taken`. `may_go_on`: asked after each command
    before the next is taken (the daemon's wallet lock, asked once before the first):
    False leaves the rest queued.
    """
    taken = 0
    while (command := journal.take_command(at=clock.now())) is not None:
        taken += 1
        try:
            ok, line = await _run(command, journal, executor, clock, engine, reconcile, reload)
        except Exception as exc:  # one bad command must not stop the queue
            ok, line = False, redact(f"{type(exc).__name__}: {exc}".splitlines()[0])
        journal.finish_command(command.id, ok, line, at=clock.now())
        if may_go_on is not None and not await may_go_on():
            break
    return taken


async def _run(
    command: CommandView,
    journal: CommandQueue,
    executor: Executor,
    clock: Clock,
    engine: Engine | None,
    reconcile: Reconcile | None,
    reload: Reload | None = None,
) -> tuple[bool, str]:
    """Run one command: (ok, the result line)."""
    payload: dict[str, Any] = dict(command.payload)
    kind = command.kind
    if kind in ("pause", "resume") and engine is not None:
        strategy = str(payload.get("strategy"))
        try:
            return True, apply_pause(engine, journal, strategy, kind == "pause", at=clock.now())
        except ValueError as exc:
            return False, str(exc)
    if kind == "stopentry" and engine is not None:
        return True, stop_entries(engine, journal, at=clock.now())
    if kind == "reconcile" and reconcile is not None:
        return True, reconcile_line(await reconcile())
    if kind == "reload" and reload is not None:
        return True, reload()
    if kind != "cancel" or payload.get("kind") not in tuple(OrderKind):
        return False, f"unknown command {kind!r}"
    action = cancel_action(str(payload["kind"]), str(payload["order_id"]), clock)
    result = await executor.execute(CLI_STRATEGY, action)
    return result.state == "confirmed", f"{result.state}: {result.detail}".rstrip(": ")


def stop_entries(engine: Engine, journal: PauseStore, *, at: datetime) -> str:
    """Pause every running strategy (journaled: it outlives a restart); one line.

    Nothing new is started; what is already placed with the provider stays (cancel it).
    """
    running = sorted(engine.strategies)
    if not running:
        return "no strategy runs: nothing to stop"
    newly = [n for n in running if n not in engine.paused]
    for name in running:
        apply_pause(engine, journal, name, True, at=at)
    line = "entries stopped: " + (f"paused {', '.join(newly)}" if newly else "all were paused")
    already = [n for n in running if n not in newly]
    if newly and already:
        line += f" (already paused: {', '.join(already)})"
    return line + "; placed orders stay open; resume each strategy to trade again"


def reconcile_line(resolutions: Sequence[Resolution]) -> str:
    """One line: how many intents a reconciler run settled, by outcome."""
    if not resolutions:
        return "reconciled: nothing to settle"
    counts: dict[str, int] = {}
    for resolution in resolutions:
        counts[resolution.state] = counts.get(resolution.state, 0) + 1
    parts = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    return f"reconciled {len(resolutions)} intent{'s' if len(resolutions) != 1 else ''}: {parts}"


async def wait_for_command(
    journal: CommandQueue, command_id: int, seconds: float, *, every: float = 0.5
) -> CommandView | None:
    """The command once the daemon finished it (`done` or `failed`), or None.

    None: no answer within `seconds` (the command stays queued).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        command = journal.command(command_id)
        if command is not None and command.state in ("done", "failed"):
            return command
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(every)
