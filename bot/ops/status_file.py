"""The running daemon's status, written to a small JSON file for `bot status` and Docker.

The daemon rewrites the file atomically (write a temporary file, then rename) at start,
at every heartbeat and at stop. `bot status` reads it, and tells whether the writer still
runs from the pid and the wallet lock. The file holds no secret: addresses, counters,
times (ISO-8601 UTC) and amounts as exact decimal text.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bot.journal.db import sqlite_file

__all__ = [
    "STATUS_FILE_NAME",
    "DaemonStatus",
    "StrategyStatus",
    "read_status",
    "status_path",
    "write_status",
]

STATUS_FILE_NAME = "status.json"


@dataclass
class StrategyStatus:
    """One strategy's counters as the daemon last saw them."""

    ticks: int = 0
    errors: int = 0
    refused: int = 0
    actions: int = 0
    last_tick: str | None = None
    last_error: str | None = None
    next_tick: str | None = None
    """When the daemon will tick it next (the market clock's time), if scheduled."""
    stuck: str | None = None
    """Why it gets nowhere (`bot.engine.progress`), or None."""
    paused: bool = False
    """Paused by the user (`bot strategies pause`)."""


@dataclass
class DaemonStatus:
    """What `bot status` shows of a daemon (times are ISO-8601 UTC text)."""

    pid: int
    state: str  # "starting" | "running" | "stopping" | "stopped"
    started_at: str
    updated_at: str
    mode: str
    wallet: str | None
    version: str
    dry_run: bool = False
    strategies: dict[str, StrategyStatus] = field(default_factory=dict)
    last_poll_at: str | None = None
    last_poll_ok_at: str | None = None
    open_orders: int = 0
    apt_balance: str | None = None
    errors: int = 0
    healthy: bool = True
    """The watchdog's verdict at the last write (see `problem` when False)."""
    problem: str | None = None
    heartbeat_seconds: int | None = None
    """How often the daemon rewrites the file: older than a few of these means stale."""
    reloaded_at: str | None = None
    """When SIGHUP last applied a changed config."""
    market_now: str | None = None
    """The market clock's time at this write: tick, poll and order times are on it."""
    clock: str = "real"
    """The market clock: "real", or a paper world's "accelerated" / "stepped" one."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DaemonStatus:
        """Parse what `to_json` wrote (unknown keys ignored: a newer writer)."""
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["strategies"] = {
            name: StrategyStatus(
                **{k: v for k, v in raw.items() if k in StrategyStatus.__dataclass_fields__}
            )
            for name, raw in (data.get("strategies") or {}).items()
        }
        return cls(**values)


def status_path(journal_url: str, configured: Path | None = None) -> Path:
    """The status file: the configured one, else beside the SQLite journal (else ./data)."""
    if configured is not None:
        return configured
    journal_file = sqlite_file(journal_url)
    folder = journal_file.parent if journal_file is not None else Path("data")
    return folder / STATUS_FILE_NAME


def write_status(path: Path, status: DaemonStatus) -> None:
    """Replace the status file atomically (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(status.to_json(), indent=2, sort_keys=True) + "\n")
    os.replace(temporary, path)


def read_status(path: Path) -> DaemonStatus | None:
    """The last status written at `path`, or None when there is none (or it is unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        return DaemonStatus.from_json(data)
    except TypeError:
        return None
