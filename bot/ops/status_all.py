"""`bot status --all`: every wallet's daemon sharing the journal, from its `daemons` table.

Each daemon upserts its wallet's row at every heartbeat (`bot.ops.heartbeat.
record_daemon`): where it runs (host, pid), its mode, state and health as it judged
them, its version, how many strategies it runs, its last tick and when it last beat. Read
from the journal alone (SQLite or PostgreSQL), so any machine that reaches the database
sees every wallet's daemon; no lock file or process is probed (they may be on other
machines).

A daemon is **stale** when its last beat is older than `STALE_HEARTBEATS` (3) × its own
heartbeat interval: it stopped beating without saying "stopped" (killed, its machine
down, its connection to the database lost, or stuck). A daemon is **ok** when it is
`starting`/`running`, healthy by its own verdict, and not stale. `beat_at` is the wall
clock of the daemon's machine: compared with this machine's clock, so the machines'
clocks should agree (NTP) to well within a heartbeat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.journal import DaemonView, Journal, JournalError
from bot.journal.db import journal_name
from bot.ops.status_view import HEALTHY_STATES, STALE_HEARTBEATS, ago

__all__ = ["AllStatus", "DaemonLine", "read_all"]


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class DaemonLine:
    """One wallet's daemon and the verdict on it at `now`."""

    daemon: DaemonView
    beat_age_seconds: int
    stale_after_seconds: int

    @property
    def stale(self) -> bool:
        """True when its last beat is older than 3 × its heartbeat interval (not stopped)."""
        return self.daemon.state != "stopped" and self.beat_age_seconds > self.stale_after_seconds

    @property
    def ok(self) -> bool:
        """Starting or running, healthy by its own verdict, and not stale."""
        d = self.daemon
        return d.state in HEALTHY_STATES and d.health == "ok" and not self.stale

    def verdict(self) -> str:
        """`ok`, `STALE: …`, `stopped`, or the daemon's own problem."""
        if self.stale:
            return (
                f"STALE: last beat {ago(self.beat_age_seconds)} "
                f"(more than {self.stale_after_seconds} s)"
            )
        if self.daemon.state == "stopped":
            return "stopped"
        if self.daemon.state not in HEALTHY_STATES:
            return f"the daemon is {self.daemon.state}"
        return self.daemon.health

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (times ISO-8601 UTC with `Z`)."""
        d = self.daemon
        return {
            "wallet": d.wallet,
            "host": d.host,
            "pid": d.pid,
            "mode": d.mode,
            "state": d.state,
            "health": d.health,
            "version": d.version,
            "strategies": d.strategies,
            "heartbeat_seconds": d.heartbeat_seconds,
            "started_at": _iso(d.started_at),
            "last_tick_at": _iso(d.last_tick_at),
            "beat_at": _iso(d.beat_at),
            "beat_age_seconds": self.beat_age_seconds,
            "stale_after_seconds": self.stale_after_seconds,
            "stale": self.stale,
            "ok": self.ok,
        }


@dataclass
class AllStatus:
    """Every wallet's daemon in one journal, and the verdict on them all."""

    journal: str
    """The journal as people see it (its file, or its URL without the password)."""
    daemons: list[DaemonLine] = field(default_factory=list)
    problem: str | None = None
    """Why the journal could not be read (then no daemon is listed)."""

    @property
    def exit_code(self) -> int:
        """0 when at least one daemon is listed and every one is ok, else 1."""
        return 0 if self.problem is None and self.daemons and self.all_ok else 1

    @property
    def all_ok(self) -> bool:
        """True when every listed daemon is ok."""
        return all(line.ok for line in self.daemons)

    def to_json(self) -> dict[str, Any]:
        """The `--all --json` document."""
        return {
            "journal": self.journal,
            "problem": self.problem,
            "healthy": self.exit_code == 0,
            "daemons": [line.to_json() for line in self.daemons],
        }

    def lines(self) -> list[str]:
        """The human-readable listing: a head line, then two lines per wallet."""
        if self.problem is not None:
            return [f"journal at {self.journal}: {self.problem}"]
        if not self.daemons:
            return [f"no daemon has written a heartbeat to the journal at {self.journal}"]
        bad = sum(1 for line in self.daemons if not line.ok)
        count = len(self.daemons)
        head = f"{count} daemon{'' if count == 1 else 's'} in the journal at {self.journal}"
        out = [head + (f", {bad} not ok" if bad else ", all ok")]
        for line in self.daemons:
            d = line.daemon
            out.append(f"  {d.wallet}  {line.verdict()}")
            out.append(
                f"    {d.host} pid {d.pid}, {d.mode} mode, {d.state}, {d.strategies} "
                f"strateg{'y' if d.strategies == 1 else 'ies'}, version {d.version}; "
                f"last tick {_iso(d.last_tick_at) or 'none yet'}, "
                f"last beat {_iso(d.beat_at)} ({ago(line.beat_age_seconds)})"
            )
        return out


def read_all(url: str, *, now: datetime, default_heartbeat_seconds: int) -> AllStatus:
    """Every daemon row of the journal at `url`, judged at `now` (this machine's clock).

    `default_heartbeat_seconds`: the interval for a row that names none.
    """
    name = journal_name(url)
    try:
        with Journal.open(url, readonly=True) as journal:
            rows = journal.daemons()
    except JournalError as exc:
        return AllStatus(name, problem=str(exc).splitlines()[0])
    lines = []
    for row in rows:
        interval = row.heartbeat_seconds or default_heartbeat_seconds
        age = max(0, int((now - row.beat_at).total_seconds()))
        lines.append(DaemonLine(row, age, STALE_HEARTBEATS * interval))
    return AllStatus(name, lines)
