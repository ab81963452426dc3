"""The heartbeat's snapshot: what the status file and `systemctl status` show."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from bot.engine.engine import StrategyStats
from bot.ops.heartbeat import DaemonFacts, build_status, status_line
from bot.ops.status_file import DaemonStatus, read_status, write_status

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def snapshot(problem: str | None = None, errors: int = 0) -> DaemonStatus:
    facts = DaemonFacts(started_at=START, mode="paper", wallet="0x1", dry_run=False)
    facts.errors = errors
    stats = {
        "dca": StrategyStats(ticks=3, last_tick=datetime(2026, 3, 1, 12, 0, 3, tzinfo=UTC)),
        "ladder": StrategyStats(ticks=1, errors=1, last_error="timed out"),
    }
    return build_status(
        facts,
        state="running",
        now=datetime(2026, 3, 1, 12, 1, tzinfo=UTC),
        stats=stats,
        open_orders=3,
        last_poll_at=START,
        last_poll_ok_at=None,
        apt=Decimal("0.12345678"),
        problem=problem,
        heartbeat_seconds=60,
    )


def test_the_status_line_says_what_an_operator_looks_for() -> None:
    status = snapshot()
    assert status_line(status) == ("running: 2 strategies, 3 open orders, last tick 12:00:03Z")
    unhealthy = snapshot(problem="job tracker running for 130 s", errors=2)
    assert status_line(unhealthy) == (
        "running, unhealthy (job tracker running for 130 s): 2 strategies, 3 open orders, "
        "last tick 12:00:03Z, 2 errors"
    )


def test_the_snapshot_round_trips_through_the_status_file_exactly(tmp_path: Path) -> None:
    status = snapshot()
    path = tmp_path / "status.json"
    write_status(path, status)
    back = read_status(path)
    assert back == status
    assert back is not None and back.apt_balance == "0.12345678"  # exact text, not a float
    assert back.strategies["ladder"].last_error == "timed out"
    assert back.updated_at == "2026-03-01T12:01:00Z" and back.healthy
