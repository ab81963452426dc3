"""The order tracker: polls getOrders, records every status transition and fill, emits events.

Each poll, for each order kind:
1. the `active` list, every page (live orders are few; bounded by `max_active_pages`, and
   a page that brings only orders already seen ends it: a provider repeating its pages);
2. the `completed` list, newest first, page by page until a whole page holds only orders the
   journal already knows as final with the same record hash — then older pages cannot have
   changed (bounded by `max_completed_pages`); a page with records set aside as malformed
   does not count as unchanged;
3. orders the journal holds as live but that neither list showed: asked for by id; if the
   provider no longer knows one, it is recorded with our status `missing` (still live: a
   provider may forget an order that still trades) and reported once as `OrderDisappeared`
   (never deleted); seen again, it moves back (`OrderReappeared`). A provider that is
   authoritative about its orders (`close_unknown`: the embedded paper world, which *is*
   the market) closes such an order instead: status `lost`, final, with the reason. Either
   is recorded at the poll's time, or just after the order's last sighting when the clock
   stands behind it (a journal's times never go back), and reported once per order: one
   log line, one event, whatever the journal says.

A record listed for another wallet (`observe.foreign_wallet`: the page or the record names
another address) is ignored: never recorded, counted in `PollReport.foreign_orders`, logged
and reported (`ForeignOrder`, for the alerts) once per order id, not at every poll. Such a
record still counts as listed for the paging rules, so a page of strangers cannot make the
tracker stop paging before our own orders.

An order listed twice in one poll (both lists, or two pages) is taken as first seen, so the
same pages polled again record nothing new. Observations are written in one journal
transaction per poll; if the batch is refused, they are written one by one so a single bad
record is isolated (logged, counted), never fatal. The list filters `active`/`completed`
are `OrderFilter`s, not statuses.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Final

from bot.api import OrderFilter, PanoraClient
from bot.api.models import DcaOrder, LimitOrder
from bot.api.paging import OrderPages, Page, iter_orders
from bot.clock import MICROSECOND, Clock
from bot.domain import CLOSED_STATUSES as CLOSED
from bot.domain import DCA_STATUSES, FINAL_STATUSES, LIMIT_STATUSES, OrderKind, OrderStatus
from bot.engine.events import (
    ForeignOrder,
    OrderDisappeared,
    event_for_change,
)
from bot.engine.journal_roles import OrderBook
from bot.engine.observe import ForeignOrders, foreign_wallet, observation_of, record_hash
from bot.engine.ports import PollReport, Subscriber
from bot.journal import JournalError, OrderChange, OrderObservation, OrderSnapshot
from bot.logging import get_logger

__all__ = ["CLOSED", "LOST", "MISSING", "OrderTracker", "PollReport"]

Order = DcaOrder | LimitOrder
Seen = dict[str, tuple[DcaOrder | LimitOrder, str]]
"""Order id → (record, record hash), as first seen in this poll."""
MISSING: Final = OrderStatus.MISSING
LOST: Final = OrderStatus.LOST
KNOWN: Final = {
    "dca": DCA_STATUSES | {MISSING, LOST},
    "limit": LIMIT_STATUSES | {MISSING, LOST},
}


class OrderTracker:
    """Keeps the journal's orders in step with the provider's, for one wallet."""

    def __init__(
        self,
        client: PanoraClient,
        journal: OrderBook,
        clock: Clock,
        wallet: str,
        *,
        kinds: Iterable[OrderKind] = tuple(OrderKind),
        page_size: int = 50,
        max_completed_pages: int = 20,
        max_active_pages: int = 100,
    ) -> None:
        self.client = client
        self.journal = journal
        self.clock = clock
        self.wallet = wallet
        self.kinds = tuple(kinds)
        self.page_size = page_size
        self.max_completed_pages = max_completed_pages
        self.max_active_pages = max_active_pages
        self._subscribers: list[Subscriber] = []
        self.foreign = ForeignOrders()
        """Records of other wallets ignored so far (`ignored`, `distinct`)."""
        self.close_unknown: str | None = None
        """Set (to the reason) when the provider is authoritative about its orders: one it
        does not know, even by id, is closed (`lost`) instead of kept live as `missing`."""
        self._gone: set[tuple[str, str]] = set()
        """(kind, order id) of the orders reported gone by this tracker: reported once."""
        self._log = get_logger("tracker", wallet=wallet)

    def subscribe(self, subscriber: Subscriber) -> None:
        """Call `subscriber(event)` for every event (sync or async callables)."""
        self._subscribers.append(subscriber)

    async def poll(self) -> PollReport:
        """One poll of every kind; returns the report (events already delivered)."""
        report = PollReport()
        for kind in self.kinds:
            await self._poll_kind(kind, report)
        for event in report.events:
            for subscriber in self._subscribers:
                # The transitions are journaled already: one listener that fails must not
                # keep the event from the others, nor the poll's later events from anyone.
                try:
                    result = subscriber(event)
                    if inspect.isawaitable(result):
                        await result
                except Exception as exc:
                    self._log.error(
                        "tracker.subscriber_failed",
                        order_event=type(event).__name__,
                        order_id=event.order_id,
                        error=f"{type(exc).__name__}: {exc}",
                    )
        return report

    def _list(
        self,
        kind: OrderKind,
        status: OrderFilter,
        *,
        max_pages: int,
        order_id: str | None = None,
        repeats_end: bool = False,
    ) -> OrderPages:
        return iter_orders(
            self.client,
            kind,
            self.wallet,
            status,
            max_pages=max_pages,
            page_size=self.page_size,
            order_id=order_id,
            stop_when_repeated=repeats_end,
        )

    async def _by_id(
        self, kind: OrderKind, status: OrderFilter, order_id: str, report: PollReport
    ) -> Page:
        result = await anext(aiter(self._list(kind, status, max_pages=1, order_id=order_id)))
        _count(result, report)
        return result

    def _ours(self, kind: OrderKind, result: Page, report: PollReport) -> list[Order]:
        """The page's records of our wallet; the others are counted and reported once."""
        ours: list[Order] = []
        for order in result.orders:
            claim = foreign_wallet(order, self.wallet, result.wallet)
            if claim is None:
                ours.append(order)
                continue
            report.foreign_orders += 1
            if self.foreign.first_sighting(kind, order.order_id):
                report.events.append(ForeignOrder(kind, order.order_id, claim))
                self._log.warning(
                    "tracker.foreign_order", kind=kind, order_id=order.order_id, listed_for=claim
                )
        return ours

    async def _poll_kind(self, kind: OrderKind, report: PollReport) -> None:
        index = self.journal.order_index(kind, self.wallet)  # id → (status, last hash)
        gone: list[tuple[str, str]] = []  # (order id, missing or lost)
        seen: Seen = {}
        # Active: every page (a page listing only orders already listed ends it).
        active = self._list(
            kind, OrderFilter.ACTIVE, max_pages=self.max_active_pages, repeats_end=True
        )
        async for result in active:
            _count(result, report)
            _take([(o, record_hash(o)) for o in self._ours(kind, result, report)], seen)
        if active.cut_off:
            self._log.warning("tracker.page_limit", kind=kind, pages=self.max_active_pages)
        completed = self._list(kind, OrderFilter.COMPLETED, max_pages=self.max_completed_pages)
        async for result in completed:  # completed: until a page says nothing new
            _count(result, report)
            ours = self._ours(kind, result, report)
            hashed = [(o, record_hash(o)) for o in ours]
            fresh = [
                o
                for o, digest in hashed
                if index.get(o.order_id) != (o.status, digest) or o.status not in FINAL_STATUSES
            ]
            _take(hashed, seen)
            strangers = len(ours) < len(result.orders)  # say nothing of ours: keep paging
            if not (fresh or strangers or result.rejected):
                break
        for order_id, (status, _raw) in index.items():
            if order_id in seen or status in CLOSED:
                continue
            clean = True  # no record of the answers was set aside as malformed
            for list_filter in (OrderFilter.ACTIVE, OrderFilter.COMPLETED):
                result = await self._by_id(kind, list_filter, order_id, report)
                clean = clean and not result.rejected
                # An answer about another order (a provider ignoring the filter), or one
                # listed for another wallet, is none.
                found = [o for o in self._ours(kind, result, report) if o.order_id == order_id]
                if found:
                    seen[order_id] = (found[0], record_hash(found[0]))
                    break
            else:
                # Closed only on a clean answer: a malformed record might have been it.
                target = LOST if self.close_unknown is not None and clean else MISSING
                if status != target:  # recorded once, not every poll
                    gone.append((order_id, target))
                    self._report_gone(kind, order_id, status, target, report)
        report.orders_seen += len(seen)
        if self._gone:  # listed again: a later disappearance is news again
            self._gone.difference_update((kind, order_id) for order_id in seen)
        # Only new or changed records reach the journal: an unchanged one has nothing to say.
        changed = [
            observation_of(kind, order, self.wallet, digest)
            for order_id, (order, digest) in seen.items()
            if index.get(order_id) != (order.status, digest)
        ]
        if changed:
            self._record(kind, changed, report)
        for order_id, status in gone:
            self._mark_gone(kind, order_id, status, report)

    def _report_gone(
        self, kind: OrderKind, order_id: str, last: str, status: str, report: PollReport
    ) -> None:
        """One log line and one `OrderDisappeared` per order, ever in this tracker."""
        if (kind, order_id) in self._gone:
            return
        self._gone.add((kind, order_id))
        reason = self.close_unknown if status == LOST else None
        report.events.append(OrderDisappeared(kind, order_id, last, status=status, reason=reason))
        self._log.warning(
            "tracker.order_disappeared",
            kind=kind,
            order_id=order_id,
            last_status=last,
            status=status,
            reason=reason or "the provider no longer lists it, even by id; kept as live",
        )

    def _mark_gone(self, kind: OrderKind, order_id: str, status: str, report: PollReport) -> None:
        """Record that the provider no longer knows a live order (`missing` or `lost`).

        At the poll's time, or a microsecond after the order's last sighting when the clock
        stands behind it (a restarted world): the journal sets older observations aside,
        and the order would stay live there, asked for again at every poll.
        """
        stored = self.journal.order(kind, order_id)
        if stored is None:
            return
        snapshot = OrderSnapshot(
            kind=kind,
            order_id=order_id,
            wallet=stored.wallet,
            from_token=stored.from_token,
            to_token=stored.to_token,
            status=status,
            amount_total=stored.amount_total,
        )
        at = max(self.clock.now(), stored.last_seen_at + MICROSECOND)
        change = self.journal.upsert_order(snapshot, observed_at=at, source="poll")
        report.transitions += int(change.transition_recorded)

    def _record(
        self, kind: OrderKind, observations: list[OrderObservation], report: PollReport
    ) -> None:
        now = self.clock.now()
        try:
            changes = self.journal.observe_orders(observations, observed_at=now, source="poll")
        except JournalError:
            changes = []
            for observation in observations:  # isolate the record the journal refuses
                try:
                    changes += self.journal.observe_orders(
                        [observation], observed_at=now, source="poll"
                    )
                except JournalError as exc:
                    report.refused_observations += 1
                    self._log.warning(
                        "tracker.observation_refused",
                        kind=kind,
                        order_id=observation.snapshot.order_id,
                        error=str(exc),
                    )
        for change in changes:
            self._account(kind, change, report)

    def _account(self, kind: OrderKind, change: OrderChange, report: PollReport) -> None:
        report.fills += change.fills_added
        if change.transition_recorded:
            report.transitions += 1
        if change.transition_recorded and change.to_status not in KNOWN[kind]:
            report.unknown_statuses += 1
            self._log.warning(
                "tracker.unknown_status",
                kind=kind,
                order_id=change.order_id,
                status=change.to_status,
            )
        report.events.extend(event_for_change(kind, change))


def _count(result: Page, report: PollReport) -> None:
    """Count one page read (and the records it set aside as malformed)."""
    report.pages += 1
    report.rejected_records += len(result.rejected)


def _take(hashed: Iterable[tuple[DcaOrder | LimitOrder, str]], seen: Seen) -> int:
    """Add the (order, hash) pairs not yet seen in this poll (first seen wins); how many."""
    new = 0
    for order, digest in hashed:
        if order.order_id not in seen:
            seen[order.order_id] = (order, digest)
            new += 1
    return new
