"""Requests a second process hands to the running daemon through the journal's queue.

The daemon, holding the wallet lock, takes queued commands one at a time (oldest first) and
runs them itself, so only one process ever signs for the wallet or changes what runs.
Commands: `cancel` with `{kind: dca|limit, order_id}` (through the daemon's executor),
`pause` and `resume` with `{strategy}` (`bot.engine.pauses`).
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from bot.clock import Clock
from bot.domain import OrderKind
from bot.engine.actions import CancelDca, CancelLimit
from bot.engine.executor import Executor
from bot.engine.pauses import PauseStore, apply_pause
from bot.journal import CommandView

if TYPE_CHECKING:
    from bot.engine.engine import Engine

__all__ = [
    "CLI_STRATEGY",
    "CommandQueue",
    "cancel_action",
    "process_commands",
    "wait_for_command",
]

CLI_STRATEGY = "cli"
"""The strategy name intents from the command line are recorded under."""


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
    journal: CommandQueue, executor: Executor, clock: Clock, engine: Engine | None = None
) -> int:
    """Run every queued command; returns how many were taken.

    `engine`: the strategies `pause`/`resume` act on (without it they are refused).
    """
    taken = 0
    while (command := journal.take_command(at=clock.now())) is not None:
        taken += 1
        payload: dict[str, Any] = dict(command.payload)
        if command.kind in ("pause", "resume") and engine is not None:
            try:
                line = apply_pause(
                    engine,
                    journal,
                    str(payload.get("strategy")),
                    command.kind == "pause",
                    at=clock.now(),
                )
            except ValueError as exc:
                journal.finish_command(command.id, False, str(exc), at=clock.now())
            else:
                journal.finish_command(command.id, True, line, at=clock.now())
            continue
        if command.kind != "cancel" or payload.get("kind") not in tuple(OrderKind):
            journal.finish_command(
                command.id, False, f"unknown command {command.kind!r}", at=clock.now()
            )
            continue
        action = cancel_action(str(payload["kind"]), str(payload["order_id"]), clock)
        result = await executor.execute(CLI_STRATEGY, action)
        journal.finish_command(
            command.id,
            result.state == "confirmed",
            f"{result.state}: {result.detail}".rstrip(": "),
            at=clock.now(),
        )
    return taken


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
