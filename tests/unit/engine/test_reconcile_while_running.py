"""`Reconciler.run(in_flight=False)`: what a running daemon may settle without racing itself.

Found by the fault soak (bench/soak.py): the daemon reconciles only at start-up, so one
`unknown` createOrder (a timeout, a dropped connection) blocked `recurring_dca` — whose
key stays the same until its order is settled — for the rest of the run. A periodic
reconcile must leave alone what its own executions still own (`planned`, `sent`), and
settle only `unknown` intents, whose executions are over.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from bot.config import PaperFaultSettings
from bot.engine.actions import CreateDca
from bot.engine.reconcile import Reconciler
from tests.support.paper_rig import paper_rig
from tests.support.paper_signing import address_of, fixed_key

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
    faults = PaperFaultSettings(malformed_body=Decimal(1), endpoints=["/dca/v1/createOrder"])
    async with paper_rig(
        tmp_path, KEY, client_attempts=1, order_style="escrow", faults=faults
    ) as rig:
        unknown = await rig.executor.execute("s1", dca("answered-badly"))
        assert unknown.state == "unknown"  # the provider created it; the answer was lost
        now = rig.clock.now()
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

        assert (settled.intent_id, settled.state) == (unknown.intent_id, "confirmed")
        untouched = rig.journal.intent(in_flight.id)
        assert untouched is not None and untouched.state == "sent"
