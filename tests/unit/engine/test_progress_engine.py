"""A key held by an unknown outcome, seen by the real engine: stuck at once, free once settled.

Real engine, executor, signer and journal on a stepped paper world whose createOrder
answers 5xx: the DCA's outcome is unknown, so the next ticks propose the same
key for nothing (it is never blindly resent). The engine names the strategy stuck with the
reason; once a person fails the intent (`bot reconcile --fail`), the key runs again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest

from bot.config import PaperFaultSettings, RiskSettings, StrategyEntry
from bot.engine.brokers import LiveBroker
from bot.engine.live_ports import live_engine
from bot.engine.plugins import build_strategy
from bot.engine.reconcile import Reconciler
from bot.engine.risk import RiskChecker
from harness.paper_signing import fixed_key
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("progress-engine")
# A 5xx before anything is applied: the outcome is unknown to the bot (a server may fail
# after writing), though no order exists.
FAULTS = PaperFaultSettings(server_error=Decimal(1), endpoints=["/dca/v1/createOrder"])


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PaperRig]:
    async with paper_rig(
        tmp_path, KEY, funds={"USDC": Decimal(500)}, order_style="escrow", faults=FAULTS
    ) as r:
        yield r


async def test_a_key_held_by_an_unknown_outcome_is_stuck_until_settled(rig: PaperRig) -> None:
    params: dict[str, object] = {"from_token": "USDC", "to_token": "APT", "orders": 2}
    params |= {"amount_per_order": "10", "interval": "1 day"}
    entry = StrategyEntry(
        name="dca", plugin="recurring_dca", schedule={"interval_seconds": 3600}, params=params
    )
    book = rig.world.market.tokens.book
    engine = live_engine(
        client=rig.client,
        journal=rig.journal,
        clock=rig.clock,
        wallet=rig.wallet,
        tokens=book,
        broker=LiveBroker(rig.executor),
        risk=RiskChecker(RiskSettings(), rig.journal, book),
        strategies=[build_strategy(entry)],
        stuck_after=5,
    )
    [first] = await engine.tick_all()
    assert [o.state for _, o in first.outcomes] == ["unknown"]
    assert engine.progress.stuck() == {}  # one unknown outcome is not yet a blocked key
    [second] = await engine.tick_all()
    [(_, held)] = second.outcomes
    assert (held.state, held.duplicate) == ("unknown", True)
    assert engine.progress.stuck() == {
        "dca": "key 'dca:dca:0' held by an intent still unknown (create DCA: 10 USDC per "
        "order → APT, 2 orders every 1 day); settle it with bot reconcile"
    }

    [intent] = rig.journal.intents()
    reconciler = Reconciler(
        journal=rig.journal, client=rig.client, clock=rig.clock, wallet=rig.wallet, tokens=book
    )
    await reconciler.settle_by_hand(intent.id, order_id=None, reason="no order was placed")
    [third] = await engine.tick_all()
    [(_, again)] = third.outcomes
    assert not again.duplicate  # a fresh attempt under the freed key
    assert "held by" not in engine.progress.stuck().get("dca", "")
