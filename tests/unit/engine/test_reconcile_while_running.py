"""`Reconciler.run(in_flight=False)`: what a running daemon may settle without racing itself.

Found by the fault soak (bench/soak.py): the daemon reconciles only at start-up, so one
`unknown` createOrder (a timeout, a dropped connection) blocked `recurring_dca` — whose
key stays the same until its order is settled — for the rest of the run. A periodic
reconcile must leave alone what its own executions still own (`planned`, `sent`), and
settle only `unknown` intents, whose executions are over (by evidence the bot produced:
here the order journaled with the intent).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from bot.engine.actions import CreateDca
from bot.engine.reconcile import STALE_SENT, Reconciler
from bot.journal import OrderSnapshot
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_rig import paper_rig

KEY = fixed_key("reconcile-while-running")
WALLET = address_of(KEY)


def dca(key: str) -> CreateDca:
    return CreateDca(
        key=key,
        sell="USDC",
        buy="APT",
        amount=Decimal(30),
        orders=3,
        interval_value=1,
        interval_period="hour",
    )


async def test_only_unknown_intents_are_settled_while_running(tmp_path: Path) -> None:
    async with paper_rig(tmp_path, KEY, client_attempts=1, order_style="escrow") as rig:
        done = await rig.executor.execute("s1", dca("answered"))
        assert done.state == "confirmed" and done.order_id is not None
        # Its order journaled, the intent not yet confirmed (an answer or a write lost on
        # the way, the execution over): `unknown`, with the evidence the bot wrote itself.
        now = rig.clock.now()
        unknown = rig.journal.record_intent(
            "s1", WALLET, "create_dca", "answered-then-lost", {"type": "create_dca"}, at=now
        )
        rig.journal.set_intent_state(unknown.id, "sent", at=now)
        rig.journal.set_intent_state(unknown.id, "unknown", at=now, detail="lost")
        stored = rig.journal.order("dca", done.order_id)
        assert stored is not None
        rig.journal.upsert_order(
            OrderSnapshot(
                kind="dca",
                order_id="0xanswered",
                wallet=WALLET,
                from_token=stored.from_token,
                to_token=stored.to_token,
                status="active",
                amount_total=Decimal(30),
                strategy="s1",
                intent_id=unknown.id,
            ),
            observed_at=now,
            source="create",
        )
        in_flight = rig.journal.record_intent(
            "s1", WALLET, "create_dca", "in-flight", {"type": "create_dca"}, at=now
        )
        rig.journal.set_intent_state(in_flight.id, "sent", at=now)  # another task's request
        reconciler = Reconciler(
            journal=rig.journal,
            client=rig.client,
            clock=rig.clock,
            wallet=WALLET,
            tokens=rig.world.market.tokens.book,
            node=rig.node,
        )

        [settled] = await reconciler.run(in_flight=False)

        assert (settled.intent_id, settled.state) == (unknown.id, "confirmed")
        assert settled.order_id == "0xanswered"
        untouched = rig.journal.intent(in_flight.id)
        assert untouched is not None and untouched.state == "sent"


async def test_a_sent_intent_long_past_any_execution_is_settled_while_running(
    tmp_path: Path,
) -> None:
    """An execution cancelled mid-way leaves its intent `sent`: not forever."""
    async with paper_rig(tmp_path, KEY, client_attempts=1, order_style="escrow") as rig:
        start = rig.clock.now()
        old = rig.journal.record_intent(
            "s1", WALLET, "create_dca", "cancelled-mid-way", {"type": "create_dca"}, at=start
        )
        rig.journal.set_intent_state(old.id, "sent", at=start)
        rig.clock.advance(STALE_SENT + timedelta(minutes=1))
        now = rig.clock.now()
        fresh = rig.journal.record_intent(
            "s1", WALLET, "create_dca", "in-flight", {"type": "create_dca"}, at=now
        )
        rig.journal.set_intent_state(fresh.id, "sent", at=now)
        reconciler = Reconciler(
            journal=rig.journal,
            client=rig.client,
            clock=rig.clock,
            wallet=WALLET,
            tokens=rig.world.market.tokens.book,
            node=rig.node,
            grace=timedelta(minutes=15),
        )

        [settled] = await reconciler.run(in_flight=False)

        assert settled.intent_id == old.id  # the fresh one still belongs to its execution
        history = [t.state for t in rig.journal.intent_history(old.id)]
        assert history[:3] == ["planned", "sent", "unknown"]
        after = rig.journal.intent(fresh.id)
        assert after is not None and after.state == "sent"
