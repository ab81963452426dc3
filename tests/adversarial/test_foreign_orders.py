"""Orders that are not ours are not ours: a provider listing strangers' orders as ours.

The paper world answers honestly; a tampering proxy in front of it adds to our getOrders
answers an order of another wallet with exactly our terms (the record naming its wallet,
or the page naming another wallet), or with nothing saying whose it is. The tracker and
reconciliation must ignore the first two (counted, reported once), and never link any
of them to an intent: an order is an intent's only on evidence the bot produced itself
(the createOrder answer's id, a deposit it signed). Nothing is signed for a stranger's
order and money is conserved (the paper ledger is the truth).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.clock import SteppedClock
from bot.engine.actions import CreateLimit
from bot.engine.events import ForeignOrder
from bot.engine.reconcile import Reconciler
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from tests.support.tampering import WALLET, HostileRig, hostile_rig

OTHER = "0x" + "5a" * 32
FOREIGN_ID = "0x" + "f0" * 32
GRACE = timedelta(minutes=10)


def limit(key: str = "l-1") -> CreateLimit:
    return CreateLimit(key=key, sell="APT", buy="USDC", amount=Decimal(1), rate=Decimal(1000))


def clock_of(r: HostileRig) -> SteppedClock:
    clock = r.world.market.clock
    assert isinstance(clock, SteppedClock)
    return clock


def look_alike(r: HostileRig, claim: str) -> dict[str, Any]:
    """A limit order record with `limit()`'s terms, created now, of another wallet."""
    tokens = r.world.market.tokens
    record: dict[str, Any] = {
        "panoraTxId": FOREIGN_ID,
        "fromToken": {"address": tokens.find("APT").address, "symbol": "APT", "decimals": 8},
        "toToken": {"address": tokens.find("USDC").address, "symbol": "USDC", "decimals": 6},
        "status": "active",
        "createdAtTime": clock_of(r).now().isoformat().replace("+00:00", "Z"),
        "fromTokenAmount": "1",
        "rateToTokenPerFromToken": "1000",
    }
    if claim == "record":
        record["toWalletAddress"] = OTHER
    return record


def listing_with(record: dict[str, Any], claim: str) -> Callable[[Any], Any]:
    """A getOrders edit: our page plus `record`, or (claim "page") another wallet's page."""

    def edit(body: dict[str, Any]) -> dict[str, Any]:
        if claim == "page":
            return {**body, "toWalletAddress": OTHER, "orders": [record]}
        return {**body, "orders": [*body["orders"], record]}

    return edit


def reconciler(r: HostileRig) -> Reconciler:
    return Reconciler(
        journal=r.journal,
        client=r.client,
        clock=clock_of(r),
        wallet=WALLET,
        tokens=r.world.market.tokens.book,
        node=r.node,
        grace=GRACE,
    )


def assert_conserved(r: HostileRig) -> None:
    for account, before in r.start_balances.items():
        assert r.balances(account) == before, account


@pytest.mark.parametrize("claim", ["record", "page"])
async def test_the_tracker_ignores_a_strangers_order_and_reports_it_once(
    tmp_path: Path, claim: str
) -> None:
    async with hostile_rig(tmp_path) as r:
        ours = await r.executor.execute("s1", limit())
        assert ours.state == "confirmed" and ours.order_id is not None
        r.snapshot(WALLET, OTHER)
        signed = len(r.journal.transactions())
        stranger = look_alike(r, claim)
        edit = listing_with(stranger, claim)
        # "page": a second, empty list (completed) comes back as another wallet's page.
        r.proxy.edits["/limit/v1/getOrders"] = (
            edit if claim == "record" else lambda b: b if b["orders"] else edit(b)
        )
        tracker = OrderTracker(r.client, r.journal, clock_of(r), WALLET)

        first = await tracker.poll()
        second = await tracker.poll()

        assert [(o.order_id, o.intent_id) for o in r.journal.orders()] == [
            (ours.order_id, ours.intent_id)
        ]
        assert r.journal.order("limit", FOREIGN_ID) is None
        assert first.foreign_orders >= 1 and second.foreign_orders >= 1  # counted every time
        assert [e for e in first.events if isinstance(e, ForeignOrder)] == [
            ForeignOrder("limit", FOREIGN_ID, OTHER)
        ]
        assert not [e for e in second.events if isinstance(e, ForeignOrder)]  # reported once
        assert tracker.foreign.distinct == 1
        assert first.refused_observations == second.refused_observations == 0
        assert len(r.journal.transactions()) == signed
        assert_conserved(r)


@pytest.mark.parametrize("claim", ["record", "page", "silent"])
async def test_a_lost_create_answer_is_never_linked_to_a_look_alike(
    tmp_path: Path, claim: str
) -> None:
    async with hostile_rig(tmp_path) as r:
        r.snapshot(WALLET, OTHER)
        r.proxy.edits["/limit/v1/createOrder"] = lambda body: ["the answer is lost"]
        lost = await r.executor.execute("s1", limit())
        assert lost.state == "unknown"  # the provider may have it: never resent
        r.proxy.edits["/limit/v1/getOrders"] = listing_with(look_alike(r, claim), claim)
        settle = reconciler(r)

        [early] = await settle.run()
        clock_of(r).advance(GRACE + timedelta(minutes=1))
        [late] = await settle.run()

        assert (early.state, early.order_id) == ("unknown", None)
        intent = r.journal.intent(lost.intent_id)
        assert intent is not None and intent.order_id is None and late.order_id is None
        if claim == "silent":
            # Nothing says whose it is: it may be ours, its answer lost. Not linked on its
            # looks, not failed into a second order: held for a person.
            assert late.state == intent.state == "unknown"
            assert late.detail.startswith("held: ") and FOREIGN_ID in late.detail
        else:
            # Another wallet's: not a candidate at all. Nothing of ours: failed, per the
            # journal's rule for an unknown create nothing matched within the grace.
            assert late.state == intent.state == "failed"
            assert late.detail == "nothing matched within the grace period"
            assert settle.foreign.ignored >= 1 and settle.foreign.distinct == 1
        assert r.journal.orders() == []
        assert r.journal.transactions() == []  # no deposit was ever signed
        assert r.world.chain.submitted == 0
        assert_conserved(r)


@contextmanager
def killed_before_the_order_is_journaled(journal: Journal) -> Iterator[type[BaseException]]:
    """The executor dies after its deposit committed, before it journals the order."""

    class Killed(BaseException):
        pass

    original = journal.upsert_order

    def upsert(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("source") == "create":
            raise Killed
        return original(*args, **kwargs)

    journal.upsert_order = upsert  # type: ignore[method-assign]
    try:
        yield Killed
    finally:
        journal.upsert_order = original  # type: ignore[method-assign]


async def test_a_provider_hiding_our_funded_order_cannot_make_the_intent_fail(
    tmp_path: Path,
) -> None:
    async with hostile_rig(tmp_path) as r:
        with killed_before_the_order_is_journaled(r.journal) as killed, pytest.raises(killed):
            await r.executor.execute("s1", limit())
        [intent] = r.journal.intents()
        [deposit] = r.journal.transactions(intent_id=intent.id)
        [funded] = r.world.market.limit.orders_of(WALLET)
        assert (intent.state, deposit.state) == ("sent", "committed")
        # The provider now lists a stranger's look-alike instead of our order.
        r.proxy.edits["/limit/v1/getOrders"] = lambda body: {
            **body,
            "orders": [look_alike(r, "silent")],
        }
        clock_of(r).advance(GRACE + timedelta(minutes=1))

        [resolution] = await reconciler(r).run()

        # The deposit the bot signed names its order: confirmed with it, journaled from the
        # intent's own terms; the look-alike is not linked.
        assert (resolution.state, resolution.order_id) == ("confirmed", funded.order_id)
        stored = r.journal.order("limit", funded.order_id)
        assert stored is not None and (stored.intent_id, stored.strategy) == (intent.id, "s1")
        assert stored.amount_total == Decimal(1) and stored.status == "active"
        assert r.journal.order("limit", FOREIGN_ID) is None
