"""Issue 22, "health means progress": which strategies tick without getting anywhere."""

from __future__ import annotations

from decimal import Decimal

from bot.engine.actions import Swap
from bot.engine.brokers import ActionOutcome
from bot.engine.engine import TickReport
from bot.engine.progress import ProgressTracker
from bot.engine.risk import RiskRefusal

SWAP = Swap(key="buy-1", sell="USDC", buy="APT", sell_amount=Decimal("25"))
CAP = RiskRefusal("daily spend cap", "USDC 25 over the 10 left today")


def refused() -> TickReport:
    return TickReport("dca", ok=True, refusals=[(SWAP, CAP)])


def outcome(state: str, *, duplicate: bool = False, detail: str = "") -> TickReport:
    done = ActionOutcome(state, detail=detail, duplicate=duplicate)
    return TickReport("dca", ok=True, outcomes=[(SWAP, done)])


def test_refused_on_every_tick_is_stuck_after_the_configured_count() -> None:
    tracker = ProgressTracker(stuck_after=3)
    tracker.record(refused())
    tracker.record(refused())
    assert tracker.stuck() == {}
    tracker.record(refused())
    assert tracker.stuck() == {
        "dca": "no progress for 3 ticks in a row "
        "(refused: daily spend cap: USDC 25 over the 10 left today)"
    }


def test_failed_actions_count_and_failed_ticks_count_apart() -> None:
    tracker = ProgressTracker(stuck_after=2)
    tracker.record(outcome("failed", detail="insufficient balance"))
    tracker.record(outcome("failed", detail="insufficient balance"))
    assert tracker.stuck() == {
        "dca": "no progress for 2 ticks in a row (failed: insufficient balance)"
    }
    other = ProgressTracker(stuck_after=2)
    other.record(TickReport("dca", ok=False, error="TimeoutError: timed out"))
    other.record(TickReport("dca", ok=False, error="TimeoutError: timed out"))
    assert other.stuck() == {"dca": "its last 2 ticks failed (failed: TimeoutError: timed out)"}


def test_sparse_failed_ticks_between_quiet_ones_are_not_a_spell() -> None:
    tracker = ProgressTracker(stuck_after=3)
    for tick in range(21):  # a resting strategy whose tick fails now and then
        if tick % 10 == 0:
            tracker.record(TickReport("dca", ok=False, error="timed out"))
        else:
            tracker.record(TickReport("dca", ok=True))
    assert tracker.stuck() == {}


def test_a_key_already_done_does_not_hide_a_failing_one() -> None:
    tracker = ProgressTracker(stuck_after=3)
    resting = ActionOutcome("confirmed", duplicate=True)
    failing = ActionOutcome("failed", detail="no route")
    for _ in range(3):
        tracker.record(TickReport("dca", ok=True, outcomes=[(SWAP, resting), (SWAP, failing)]))
    assert tracker.stuck() == {"dca": "no progress for 3 ticks in a row (failed: no route)"}


def test_an_action_carried_out_ends_the_spell_and_an_idle_tick_changes_nothing() -> None:
    tracker = ProgressTracker(stuck_after=2)
    tracker.record(refused())
    tracker.record(TickReport("dca", ok=True))  # nothing proposed: neither counts nor resets
    tracker.record(refused())
    assert "dca" in tracker.stuck()
    tracker.record(outcome("confirmed"))
    assert tracker.stuck() == {}
    tracker.record(refused())
    assert tracker.stuck() == {}  # a new spell starts from one


def test_a_key_held_by_an_unknown_intent_is_stuck_at_once_until_it_is_settled() -> None:
    tracker = ProgressTracker(stuck_after=10)
    tracker.record(outcome("unknown", duplicate=True))
    [why] = tracker.stuck().values()
    assert why.startswith("key 'buy-1' held by an intent still unknown")
    assert why.endswith("settle it with bot reconcile")
    tracker.record(outcome("confirmed", duplicate=True))  # reconciled: the key is done
    assert tracker.stuck() == {}


def test_a_dry_run_is_progress_and_an_already_done_key_is_quiet() -> None:
    tracker = ProgressTracker(stuck_after=1)
    tracker.record(outcome("dry-run"))
    for _ in range(3):
        tracker.record(outcome("confirmed", duplicate=True))
    assert tracker.stuck() == {}


def test_a_removed_strategy_is_forgotten_and_names_filter() -> None:
    tracker = ProgressTracker(stuck_after=1)
    tracker.record(refused())
    assert tracker.stuck(["other"]) == {}
    tracker.forget("dca")
    assert tracker.stuck() == {}
