"""Bad input: the order tracker fed arbitrary getOrders pages, with a real SQLite journal.

The provider (the client's real HTTP stack against a scripted app) lists orders whose records
may be damaged anywhere (wrong types, missing fields, huge numbers, `Infinity`/`NaN`,
negative amounts, unknown statuses, text that is not Unicode), in pages that repeat, with
`totalPages` that lie, and ids that recur across pages and lists. Each snapshot of the world
is polled twice in a row. Whatever it sees, the tracker:
* never raises;
* records nothing new when the same pages are polled again (no transition, fill or event);
* keeps each order's transitions a chain (from = the previous to, never from = to);
* records every readable order it was shown, or counts and logs its refusal;
* logs every record it skipped, as many as `PollReport` counts.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from bot.api.models import DcaOrder, LimitOrder
from bot.clock import SteppedClock
from bot.journal import Journal, JournalError
from bot.money import loads_exact
from tests.support.json_strategies import (
    WALLET,
    ScriptedApi,
    any_records,
    dumps,
    junk,
)
from tests.support.tracker_rig import (
    MAX_ACTIVE_PAGES,
    MAX_COMPLETED_PAGES,
    Run,
    limit_page,
    make_tracker,
    poll,
    record,
    rig,
    snapshot,
)

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
KINDS = ("dca", "limit")
FILTERS = ("active", "completed")


@dataclass
class Listing:
    """One list (kind, filter) of one snapshot: its pages and how the provider misbehaves."""

    pages: list[list[Any]]
    total_pages: Any  # honest: len(pages); else whatever the provider claims
    repeats: bool = False  # answers page 1 whatever page is asked for
    ignores_id_filter: bool = False

    @property
    def honest(self) -> bool:
        return not self.repeats and self.total_pages == len(self.pages)


Snapshot = dict[tuple[str, str], Listing]


@st.composite
def listings(draw: st.DrawFn, kind: str) -> Listing:
    pages = draw(st.lists(st.lists(any_records(kind), max_size=4), max_size=3))
    total = draw(st.one_of(st.just(len(pages)), st.just(len(pages)), junk))
    repeats = draw(st.sampled_from([False, False, False, True]))
    if repeats:
        total = draw(st.sampled_from([10**9, len(pages) + 5, total]))
    return Listing(pages, total, repeats, draw(st.booleans()))


snapshots: st.SearchStrategy[Snapshot] = st.fixed_dictionaries(
    {(kind, f): listings(kind) for kind in KINDS for f in FILTERS}
)


def answer(snapshot: Snapshot, path: str, body: Any) -> tuple[int, str]:
    """A getOrders page of the snapshot, as the (misbehaving) provider serves it."""
    kind = "dca" if path.startswith("/dca/") else "limit"
    listing = snapshot[(kind, str(body.get("status")))]
    order_id = body.get("panoraTxId")
    number = body.get("pageNumber", 1)
    if order_id is not None and not listing.ignores_id_filter:
        orders = [r for page in listing.pages for r in page if _raw_id(r) == order_id][:1]
        total: Any = 1
    else:
        index = 0 if listing.repeats or order_id is not None else number - 1
        orders = listing.pages[index] if 0 <= index < len(listing.pages) else []
        total = listing.total_pages
    page = {"chainId": 1, "toWalletAddress": WALLET, "pageNumber": number, "totalPages": total}
    return 200, dumps({**page, "orders": orders})


def _raw_id(record: Any) -> Any:
    if not isinstance(record, dict):
        return None
    return record.get("panoraTxId", record.get("svcTxId"))


def readable(kind: str, record: Any) -> str | None:
    """The order id of a record the client's model accepts, else None (the oracle)."""
    model = DcaOrder if kind == "dca" else LimitOrder
    try:
        return model.model_validate(
            loads_exact(dumps(record)), context={"prefix": "panora"}
        ).order_id
    except ValidationError:
        return None


def shown(snapshot: Snapshot, kind: str, *, first_poll: bool) -> set[str]:
    """Ids the tracker is certain to have read this poll (every readable record it fetched).

    Page 1 of each list always; on the first poll of a fresh journal, every page of an honest
    list up to its first empty one (each completed page is then new to the journal).
    """
    ids: set[str] = set()
    for list_filter, limit in (("active", MAX_ACTIVE_PAGES), ("completed", MAX_COMPLETED_PAGES)):
        listing = snapshot[(kind, list_filter)]
        pages = listing.pages[:limit] if first_poll and listing.honest else listing.pages[:1]
        for page in pages:
            if not page:
                break
            ids |= {i for r in page if (i := readable(kind, r)) is not None}
    return ids


def check_counts(run: Run) -> None:
    """Every record skipped, observation refused and unknown status is logged and counted."""
    assert len(run.logged("api.record_rejected")) == run.report.rejected_records
    assert len(run.logged("tracker.observation_refused")) == run.report.refused_observations
    assert len(run.logged("tracker.unknown_status")) == run.report.unknown_statuses


def history(journal: Journal) -> dict[tuple[str, str], list[tuple[str | None, str]]]:
    return {
        (o.kind, o.order_id): [
            (t.from_status, t.to_status) for t in journal.transitions(o.kind, o.order_id)
        ]
        for o in journal.orders()
    }


def fill_count(journal: Journal) -> int:
    return sum(len(journal.fills(o.kind, o.order_id)) for o in journal.orders())


@FUZZ
@given(
    worlds=st.lists(snapshots, min_size=1, max_size=3),
    plan=st.lists(st.integers(0, 2), min_size=1, max_size=3),
)
def test_whatever_the_provider_lists_the_tracker_keeps_a_clean_journal(
    tmp_path_factory: Any, worlds: list[Snapshot], plan: list[int]
) -> None:
    path: Path = tmp_path_factory.mktemp("journal") / "bot.db"
    app = ScriptedApi()
    clock = SteppedClock(datetime(2026, 1, 1, tzinfo=UTC))
    with Journal.open(f"sqlite:///{path}") as journal:
        tracker = make_tracker(app, journal, clock)
        for step, index in enumerate(plan):
            snapshot = worlds[index % len(worlds)]
            app.handler = lambda method, path, body, s=snapshot: answer(s, path, body)
            first = poll(tracker)  # never raises
            clock.advance(timedelta(minutes=1))
            check_counts(first)
            stored = {(o.kind, o.order_id) for o in journal.orders()}
            refused_ids = {e["order_id"] for e in first.logged("tracker.observation_refused")}
            for kind in KINDS:
                for order_id in shown(snapshot, kind, first_poll=step == 0):
                    assert (kind, order_id) in stored or order_id in refused_ids, (kind, order_id)
            log, fills = history(journal), fill_count(journal)
            again = poll(tracker)  # the very same pages: nothing new to say
            clock.advance(timedelta(minutes=1))
            check_counts(again)
            assert (again.report.transitions, again.report.fills) == (0, 0)
            assert again.report.events == []
            assert history(journal) == log and fill_count(journal) == fills
        for (kind, order_id), transitions in history(journal).items():
            assert transitions and transitions[0][0] is None
            assert all(a[1] == b[0] for a, b in itertools.pairwise(transitions)), transitions
            assert all(frm != to for frm, to in transitions), transitions
            order = journal.order(kind, order_id)
            assert order is not None and order.status == transitions[-1][1]


# --- the cases the fuzzing found, as plain examples -------------------------------------------


def test_a_provider_repeating_its_page_forever_does_not_hold_the_tracker(tmp_path: Path) -> None:
    calls = 0

    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        nonlocal calls
        calls += 1
        return 200, limit_page([record("0xo1")], total=10**9)

    tracker, journal = rig(tmp_path, handler)
    with journal:
        poll(tracker)
        assert journal.order("limit", "0xo1") is not None
    # Active: page 1, then page 2 is the same again (stop); completed: up to its bound.
    assert calls == 2 + MAX_COMPLETED_PAGES


def test_a_page_of_unreadable_records_does_not_end_the_scan(tmp_path: Path) -> None:
    pages = [[record("0xo1", fromTokenAmount="NaN")], [record("0xo2", "filled")]]

    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        number = body["pageNumber"]
        listed = pages[number - 1] if body["status"] == "completed" and number <= 2 else []
        return 200, limit_page(listed, total=2)

    tracker, journal = rig(tmp_path, handler)
    with journal:
        run = poll(tracker)
        assert journal.order("limit", "0xo2") is not None
    assert run.report.rejected_records == 1
    [skipped] = run.logged("api.record_rejected")
    assert skipped["record_id"] == "0xo1" and "fromTokenAmount" in skipped["error"]


def test_an_order_in_both_lists_is_taken_as_first_seen_so_a_replay_adds_nothing(
    tmp_path: Path,
) -> None:
    completed = [[record("0xo2", "filled")], [record("0xo1", "filled")]]

    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        if body["status"] == "active":
            return 200, limit_page([record("0xo1")])
        number = body["pageNumber"]
        return 200, limit_page(completed[number - 1] if number <= 2 else [], total=2)

    tracker, journal = rig(tmp_path, handler)
    with journal:
        poll(tracker)
        assert [(t.from_status, t.to_status) for t in journal.transitions("limit", "0xo1")] == [
            (None, "active")
        ]
        again = poll(tracker)  # page 2 of the completed list is not read again
        assert again.report.transitions == 0
        assert len(journal.transitions("limit", "0xo1")) == 1


def test_an_answer_about_another_order_is_no_answer(tmp_path: Path) -> None:
    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        listed = [record("0xother")] if body["status"] == "active" else []
        return 200, limit_page(listed)  # whatever id is asked for

    tracker, journal = rig(tmp_path, handler)
    with journal:
        journal.upsert_order(
            snapshot("0xgone"), observed_at=datetime(2025, 12, 31, tzinfo=UTC), source="poll"
        )
        poll(tracker)
        gone = journal.order("limit", "0xgone")
        assert gone is not None and gone.status == "missing"


def test_a_value_the_database_cannot_hold_is_a_journal_refusal(tmp_path: Path) -> None:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        with pytest.raises(JournalError, match="OverflowError"):
            journal.upsert_order(
                snapshot("0xo1", orders_completed=2**64),
                observed_at=datetime(2026, 1, 1, tzinfo=UTC),
                source="poll",
            )
        assert journal.orders() == []
