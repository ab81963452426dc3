"""`bot status --all`: every wallet's daemon from the shared journal's `daemons` rows, one
stale; the heartbeat writes its wallet's row (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.journal import DaemonView, Journal
from bot.ops.heartbeat import daemon_row, record_daemon
from bot.ops.status_all import read_all
from bot.ops.status_file import DaemonStatus, StrategyStatus
from tests.support.cli import run_bot

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
A = "0x" + "ab" * 32
B = "0x" + "cd" * 32


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bot.db'}"
    return str(request.getfixturevalue("pg_database_url"))


def status(wallet: str, updated: datetime, **changes: object) -> DaemonStatus:
    values: dict[str, object] = {
        "pid": 4242,
        "state": "running",
        "started_at": (updated - timedelta(hours=2)).isoformat().replace("+00:00", "Z"),
        "updated_at": updated.isoformat().replace("+00:00", "Z"),
        "mode": "live",
        "wallet": wallet,
        "version": "1.2.3",
        "strategies": {
            "dca": StrategyStatus(last_tick="2026-03-01T11:00:00Z"),
            "ladder": StrategyStatus(last_tick="2026-03-01T11:30:00Z"),
        },
        "heartbeat_seconds": 60,
    }
    values.update(changes)
    return DaemonStatus(**values)  # type: ignore[arg-type]


def two_daemons(url: str) -> None:
    """Wallet A beat 30 s ago; wallet B's last beat is 10 minutes old (3 × 60 s: stale)."""
    with Journal.open(url, wallet=A) as a:
        record_daemon(a, status(A, NOW - timedelta(seconds=30)))
    with Journal.open(url, wallet=B) as b:
        record_daemon(b, status(B, NOW - timedelta(minutes=10), pid=77))


def test_the_heartbeat_row_is_the_status_snapshot() -> None:
    row = daemon_row(status(A, NOW, healthy=False, problem="degraded: x"), host="box")
    assert row == DaemonView(
        wallet=A,
        host="box",
        pid=4242,
        mode="live",
        state="running",
        health="degraded: x",
        version="1.2.3",
        strategies=2,
        heartbeat_seconds=60,
        started_at=NOW - timedelta(hours=2),
        beat_at=NOW,
        last_tick_at=datetime(2026, 3, 1, 11, 30, tzinfo=UTC),
    )
    assert daemon_row(replace(status(A, NOW), wallet=None)) is None


def test_two_daemons_one_stale(url: str) -> None:
    two_daemons(url)
    # A second beat of A replaces its row, never adds one.
    with Journal.open(url, wallet=A) as a:
        record_daemon(a, status(A, NOW - timedelta(seconds=20)))
    view = read_all(url, now=NOW, default_heartbeat_seconds=60)
    assert [(line.daemon.wallet, line.stale, line.ok) for line in view.daemons] == [
        (A, False, True),
        (B, True, False),
    ]
    assert view.daemons[0].beat_age_seconds == 20
    assert view.exit_code == 1
    lines = view.lines()
    assert lines[0].startswith("2 daemons in the journal at ") and lines[0].endswith("1 not ok")
    assert lines[1] == f"  {A}  ok"
    assert lines[3] == f"  {B}  STALE: last beat 10m 0s ago (more than 180 s)"
    assert "pid 77, live mode, running, 2 strategies" in lines[4]
    assert "last tick 2026-03-01T11:30:00Z" in lines[4]
    document = view.to_json()
    assert document["healthy"] is False
    assert [d["stale"] for d in document["daemons"]] == [False, True]


def test_all_fresh_and_healthy_exits_0_a_stopped_one_does_not(url: str) -> None:
    with Journal.open(url, wallet=A) as a:
        record_daemon(a, status(A, NOW))
    assert read_all(url, now=NOW, default_heartbeat_seconds=60).exit_code == 0
    with Journal.open(url, wallet=B) as b:
        record_daemon(b, status(B, NOW - timedelta(days=3), state="stopped"))
    view = read_all(url, now=NOW, default_heartbeat_seconds=60)
    assert [line.verdict() for line in view.daemons] == ["ok", "stopped"]
    assert view.exit_code == 1


def test_no_journal_and_no_daemon_are_said(tmp_path: Path) -> None:
    missing = read_all(f"sqlite:///{tmp_path / 'none.db'}", now=NOW, default_heartbeat_seconds=60)
    assert missing.exit_code == 1 and "no journal at" in missing.lines()[0]
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    Journal.open(url).close()
    empty = read_all(url, now=NOW, default_heartbeat_seconds=60)
    assert empty.exit_code == 1
    assert empty.lines() == [
        f"no daemon has written a heartbeat to the journal at {tmp_path / 'empty.db'}"
    ]


def test_bot_status_all_on_the_command_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    now = datetime.now(UTC)
    with Journal.open(url, wallet=A) as a:
        record_daemon(a, status(A, now))
    with Journal.open(url, wallet=B) as b:
        record_daemon(b, status(B, now - timedelta(hours=1)))
    config = tmp_path / "bot.toml"
    config.write_text(f'[journal]\nurl = "{url}"\n\n[daemon]\nheartbeat_seconds = 60\n')
    human = run_bot("-c", str(config), "status", "--all", timeout=60)
    assert human.returncode == 1, human.stderr
    assert human.stdout.splitlines()[1] == f"  {A}  ok"
    assert human.stdout.splitlines()[3].startswith(f"  {B}  STALE: last beat 1h 0m ago")
    machine = run_bot("-c", str(config), "status", "--all", "--json", timeout=60)
    data = json.loads(machine.stdout)
    assert [(d["wallet"], d["stale"]) for d in data["daemons"]] == [(A, False), (B, True)]
    assert machine.returncode == 1
