"""`degraded`: orders disappearing from the provider show in the status, not in WATCHDOG=1.

Issue 22, item 3: a paper daemon whose orders kept disappearing said `health ok`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.journal import Journal
from bot.ops.heartbeat import DaemonFacts, build_status, status_line, unsettled_intents
from bot.ops.status_file import status_path
from bot.ops.status_view import StatusView
from bot.ops.watchdog import DISAPPEARED_WINDOW_SECONDS, HealthMonitor

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_disappeared_order_degrades_for_a_while_but_the_watchdog_stays_fed() -> None:
    clock = FakeMonotonic()
    monitor = HealthMonitor(10, monotonic=clock)
    assert monitor.degraded() is None
    monitor.order_disappeared("dca", "0x" + "ab" * 32, "lost")
    monitor.order_disappeared("limit", "0x" + "cd" * 32, "missing")
    assert monitor.degraded() == (
        "degraded: 2 orders disappeared from the provider in the last 15 min "
        "(latest: limit 0xcdcdcdcdcd → missing; see bot orders)"
    )
    assert monitor.problem() is None  # a restart would not bring an order back
    clock.now += DISAPPEARED_WINDOW_SECONDS + 1
    assert monitor.degraded() is None
    # Still `missing` in the journal, long after: still degraded, saying so.
    assert monitor.degraded(missing=1) == (
        "degraded: 1 order missing: the provider no longer lists it (see bot orders --status all)"
    )


def status_with(problem: str | None) -> StatusView:
    facts = DaemonFacts(started_at=NOW, mode="paper", wallet="0x1", dry_run=False)
    status = build_status(
        facts,
        state="running",
        now=NOW,
        stats={},
        open_orders=1,
        last_poll_at=None,
        last_poll_ok_at=None,
        apt=None,
        problem=problem,
        heartbeat_seconds=60,
    )
    assert status.healthy is (problem is None)
    return StatusView(
        running=True,
        healthy=status.healthy,
        problem=status.problem,
        pid=status.pid,
        status=status,
        status_file=status_path("sqlite://"),
        lock=None,
        now=NOW,
        stale_after_seconds=180,
        mode="paper",
        wallet="0x1",
    )


def test_bot_status_and_the_systemd_line_say_degraded_with_the_reason() -> None:
    reason = "degraded: 1 order disappeared from the provider in the last 15 min (latest: …)"
    view = status_with(reason)
    assert f"  health      {reason}" in view.lines()
    assert view.exit_code == 1
    assert view.status is not None
    assert status_line(view.status).startswith(f"running, {reason}: 0 strategies")
    stalled = status_with("job tracker running for 130 s")
    assert "  health      UNHEALTHY: job tracker running for 130 s" in stalled.lines()
    assert "  health      ok" in status_with(None).lines()


def test_stuck_strategies_are_named_beside_disappeared_orders() -> None:
    monitor = HealthMonitor(60, monotonic=lambda: 1000.0)
    stuck = {"dca": "no progress for 3 ticks in a row (refused: budget)"}
    assert monitor.degraded(stuck=stuck) == (
        "degraded: strategy dca stuck: no progress for 3 ticks in a row (refused: budget)"
    )
    monitor.order_disappeared("limit", "0xabcdef0123456789", "lost")
    line = monitor.degraded(stuck=stuck)
    assert line is not None and line.startswith("degraded: 1 order disappeared")
    assert line.endswith("; strategy dca stuck: no progress for 3 ticks in a row (refused: budget)")


def test_an_intent_unknown_past_the_grace_degrades_with_its_reason(tmp_path: Path) -> None:
    wallet = "0x" + "ab" * 32
    start = datetime(2026, 3, 1, tzinfo=UTC)
    with Journal.open(f"sqlite:///{tmp_path / 'j.db'}") as journal:
        intent = journal.record_intent("dca", wallet, "create_dca", "dca:dca:0", {}, at=start)
        journal.set_intent_state(intent.id, "sent", at=start)
        held = "held: order 0x12 of this wallet looks like it: settle it by hand"
        journal.set_intent_state(intent.id, "unknown", at=start, detail=held)
        other = journal.record_intent("x", "0x" + "cd" * 32, "swap", "k", {}, at=start)
        journal.set_intent_state(other.id, "sent", at=start)
        journal.set_intent_state(other.id, "unknown", at=start)  # another wallet's
        assert unsettled_intents(journal, wallet, start + timedelta(minutes=14)) == []
        [line] = unsettled_intents(journal, wallet, start + timedelta(minutes=20))
    assert line == (
        f"intent {intent.id} (dca, create_dca) unknown for 20 min ({held}); see bot reconcile"
    )
    verdict = HealthMonitor(60, monotonic=lambda: 0.0).degraded(unsettled=[line])
    assert verdict == f"degraded: {line}"
