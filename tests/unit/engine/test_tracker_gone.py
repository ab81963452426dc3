"""Orders the provider no longer knows: recorded once, reported once, closed when it is sure.

Issue 22, item 3: after a restart the embedded paper world did not know the journal's
orders; the tracker logged `OrderDisappeared` at every poll (the journal set the `missing`
mark aside as older than the order's last sighting) and the order stayed `active`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.clock import SteppedClock
from bot.engine.events import OrderDisappeared
from bot.engine.tracker import LOST, MISSING, OrderTracker
from bot.journal import Journal
from tests.support.tracker_rig import limit_page, poll, record, rig, snapshot

START = datetime(2026, 1, 1, tzinfo=UTC)  # the fuzz rig's stepped clock
REASON = "unknown to the test world"


def nothing_listed(method: str, path: str, body: Any) -> tuple[int, str]:
    return 200, limit_page([])


def history(journal: Journal, order_id: str) -> list[tuple[str | None, str]]:
    return [(t.from_status, t.to_status) for t in journal.transitions("limit", order_id)]


def test_an_authoritative_provider_closes_an_order_it_does_not_know_once(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        if "panoraTxId" in body:
            asked.append(body["panoraTxId"])
        return 200, limit_page([])

    tracker, journal = rig(tmp_path, handler)
    tracker.close_unknown = REASON
    with journal:
        journal.upsert_order(snapshot("0xgone"), observed_at=START, source="create")
        first = poll(tracker)
        assert asked == ["0xgone", "0xgone"]  # by id, in both lists
        assert first.report.events == [
            OrderDisappeared("limit", "0xgone", "active", status=LOST, reason=REASON)
        ]
        [line] = first.logged("tracker.order_disappeared")
        assert (line["status"], line["reason"]) == (LOST, REASON)
        for _ in range(5):  # many polls later: no line, no event, no transition
            again = poll(tracker)
            assert again.report.events == [] and not again.logged("tracker.order_disappeared")
        gone = journal.order("limit", "0xgone")
        assert gone is not None and gone.status == LOST
        assert history(journal, "0xgone") == [(None, "active"), ("active", LOST)]
        assert asked == ["0xgone", "0xgone"]  # `lost` is final: never asked about again


def test_without_authority_the_order_is_kept_live_as_missing(tmp_path: Path) -> None:
    tracker, journal = rig(tmp_path, nothing_listed)
    with journal:
        journal.upsert_order(snapshot("0xgone"), observed_at=START, source="create")
        [event] = poll(tracker).report.events
        assert event == OrderDisappeared("limit", "0xgone", "active", status=MISSING)
        assert poll(tracker).report.events == []
        gone = journal.order("limit", "0xgone")
        assert gone is not None and gone.status == MISSING


def test_a_clock_behind_the_last_sighting_still_records_it_once(tmp_path: Path) -> None:
    """The restarted world's clock stood hours behind the journal: every poll reported."""
    tracker, journal = rig(tmp_path, nothing_listed)
    seen_at = START + timedelta(hours=3)  # the journal's time is ahead of the clock
    with journal:
        journal.upsert_order(snapshot("0xgone"), observed_at=seen_at, source="poll")
        runs = [poll(tracker) for _ in range(5)]
        assert [len(r.report.events) for r in runs] == [1, 0, 0, 0, 0]
        assert sum(len(r.logged("tracker.order_disappeared")) for r in runs) == 1
        gone = journal.order("limit", "0xgone")
        assert gone is not None and gone.status == MISSING
        assert gone.last_seen_at == seen_at + timedelta(microseconds=1)
        assert history(journal, "0xgone") == [(None, "active"), ("active", MISSING)]


def test_a_malformed_answer_is_no_proof_the_order_is_gone(tmp_path: Path) -> None:
    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        if body.get("panoraTxId") == "0xgone":  # asked by id: an unreadable record
            return 200, limit_page([record("0xgone", fromTokenAmount="NaN")])
        return 200, limit_page([])

    tracker, journal = rig(tmp_path, handler)
    tracker.close_unknown = REASON
    with journal:
        journal.upsert_order(snapshot("0xgone"), observed_at=START, source="create")
        [event] = poll(tracker).report.events
        assert isinstance(event, OrderDisappeared) and event.status == MISSING
        gone = journal.order("limit", "0xgone")
        assert gone is not None and gone.status == MISSING  # live: it may come back


@pytest.mark.parametrize("fresh_tracker", [False, True])
def test_a_missing_order_is_closed_once_the_provider_is_known_authoritative(
    tmp_path: Path, fresh_tracker: bool
) -> None:
    tracker, journal = rig(tmp_path, nothing_listed)
    with journal:
        journal.upsert_order(snapshot("0xgone"), observed_at=START, source="create")
        assert len(poll(tracker).report.events) == 1  # missing
        if fresh_tracker:  # a restart: the journal says `missing`, this process nothing yet
            tracker = OrderTracker(
                tracker.client, journal, tracker.clock, tracker.wallet, kinds=("limit",)
            )
        tracker.close_unknown = REASON
        events = poll(tracker).report.events
        assert len(events) == (1 if fresh_tracker else 0)  # one report per process
        gone = journal.order("limit", "0xgone")
        assert gone is not None and gone.status == LOST
        assert history(journal, "0xgone") == [
            (None, "active"),
            ("active", MISSING),
            (MISSING, LOST),
        ]


def test_an_order_seen_again_is_news_again_when_it_disappears_again(tmp_path: Path) -> None:
    listed: list[dict[str, Any]] = []

    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        return 200, limit_page(listed if body["status"] == "active" else [])

    tracker, journal = rig(tmp_path, handler)
    clock = tracker.clock
    assert isinstance(clock, SteppedClock)
    with journal:
        journal.upsert_order(snapshot("0xo1"), observed_at=START, source="create")
        assert len(poll(tracker).report.events) == 1  # gone
        assert poll(tracker).report.events == []
        listed.append(record("0xo1"))
        clock.advance(timedelta(minutes=1))
        back = poll(tracker).report.events
        assert [type(e).__name__ for e in back] == ["OrderReappeared"]
        listed.clear()
        clock.advance(timedelta(minutes=1))
        assert [type(e).__name__ for e in poll(tracker).report.events] == ["OrderDisappeared"]
        assert history(journal, "0xo1") == [
            (None, "active"),
            ("active", MISSING),
            (MISSING, "active"),
            ("active", MISSING),
        ]
