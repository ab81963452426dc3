"""Requests a second process hands to the running daemon through the journal's queue.

The daemon, holding the wallet lock, takes queued commands one at a time (oldest first) and
runs them through its own executor, so only one process ever signs for the wallet.
Commands: `cancel` with `{kind: dca|limit, order_id}`.
"""

from __future__ import annotations

import time
from typing import Any

from bot.clock import Clock
from bot.engine.actions import CancelDca, CancelLimit
from bot.engine.executor import Executor
from bot.journal import Journal

__all__ = ["CLI_STRATEGY", "cancel_action", "process_commands"]

CLI_STRATEGY = "cli"
"""The strategy name intents from the command line are recorded under."""


def cancel_action(kind: str, order_id: str, clock: Clock) -> CancelDca | CancelLimit:
    """The cancel action of a CLI request (a fresh key: each request is its own intent)."""
    key = f"cancel:{order_id}:{clock.now().isoformat()}:{time.monotonic_ns()}"
    if kind == "dca":
        return CancelDca(key=key, order_id=order_id)
    return CancelLimit(key=key, order_id=order_id)


async def process_commands(journal: Journal, executor: Executor, clock: Clock) -> int:
    """Run every queued command; returns how many were taken."""
    taken = 0
    while (command := journal.take_command(at=clock.now())) is not None:
        taken += 1
        payload: dict[str, Any] = dict(command.payload)
        if command.kind != "cancel" or payload.get("kind") not in ("dca", "limit"):
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
