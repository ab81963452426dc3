"""Chaos, short: the daemon SIGKILLed ten times while it trades, then audited.

Also five kills on a PostgreSQL journal (a throwaway cluster the suite starts).

The same code as `bench/chaos_kill.py` (harness/chaos.py), with 10 kills instead of
200: a served paper world and `bot run` with all five built-in strategies as real
processes, killed at random moments, mid-request, mid-transaction and at failpoints,
restarted each time; then the journal is compared with the world. A second, in-process
test shows the audit does catch what it looks for.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from bot.engine.actions import CreateLimit
from bot.engine.tracker import OrderTracker
from bot.money import to_base_units
from harness.audit import audit
from harness.chaos import ChaosOptions, run_chaos
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_rig import paper_rig


@pytest.mark.chaos
def test_ten_kills_leave_every_intent_applied_exactly_once(tmp_path: Path) -> None:
    report = run_chaos(ChaosOptions(kills=10, seed=11, folder=tmp_path, read_faults=0.2))
    found = report.audit
    assert report.kills == 10
    assert len(report.modes) >= 3, report.modes  # not ten times the same kind of kill
    assert report.exits == [], report.exits  # the daemon never ended by itself
    assert found.committed_tx > 0 and found.world_orders > 0, report.summary()  # it traded
    assert (found.duplicates, found.double_tx, found.orphans) == (0, 0, 0), found.problems
    assert found.mislinked == 0, found.problems
    assert (found.missing, found.lost_transitions, found.lost_fills) == (0, 0, 0), found.problems
    assert (found.wrong_effects, found.unsettled, found.stale_tx) == (0, 0, 0), found.problems
    assert found.conserved, found.problems
    assert report.stuck_tx == 0 and report.reconcile_exit == 0
    assert report.ok


@pytest.mark.chaos
def test_five_kills_on_a_postgresql_journal_apply_every_intent_once(
    tmp_path: Path, pg_database_url: str
) -> None:
    options = ChaosOptions(kills=5, seed=7, folder=tmp_path, journal_url=pg_database_url)
    report = run_chaos(options)
    found = report.audit
    assert report.kills == 5 and report.exits == [], report.exits
    assert found.committed_tx > 0 and found.world_orders > 0, report.summary()  # it traded
    assert (found.duplicates, found.double_tx, found.orphans) == (0, 0, 0), found.problems
    assert (found.missing, found.lost_transitions, found.lost_fills) == (0, 0, 0), found.problems
    assert (found.wrong_effects, found.unsettled, found.stale_tx) == (0, 0, 0), found.problems
    assert found.conserved, found.problems
    assert report.stuck_tx == 0 and report.reconcile_exit == 0
    assert report.ok


KEY = fixed_key("audit-self-test")
FUNDS = {"USDC": Decimal(1000), "APT": Decimal(50)}


async def test_the_audit_catches_a_duplicate_a_missing_order_and_lost_tokens(
    tmp_path: Path,
) -> None:
    async with paper_rig(tmp_path, KEY, funds=FUNDS) as rig:
        tokens = rig.world.market.tokens
        funding = {
            tokens.find(s).address: to_base_units(a, tokens.find(s).decimals)
            for s, a in FUNDS.items()
        }
        far = {"sell": "APT", "buy": "USDC", "amount": Decimal(1), "rate": Decimal(1000)}
        first = await rig.executor.execute("s", CreateLimit(key="a", **far))
        second = await rig.executor.execute("s", CreateLimit(key="b", **far))
        assert (first.state, second.state) == ("confirmed", "confirmed")
        await OrderTracker(rig.client, rig.journal, rig.clock, rig.wallet).poll()
        clean = audit(rig.journal, rig.world, rig.wallet, funding)
        assert clean.clean and clean.applied_once == 2, clean.problems

        # Attribute the second deposit to the first intent: one intent applied twice.
        with sqlite3.connect(tmp_path / "bot.db") as db:
            db.execute(
                "UPDATE transactions SET intent_id = ? WHERE intent_id = ?",
                (first.intent_id, second.intent_id),
            )
        doubled = audit(rig.journal, rig.world, rig.wallet, funding)
        assert (doubled.duplicates, doubled.wrong_effects, doubled.mislinked) == (1, 1, 1)

        # Tokens leaving the wallet with no effect to explain them.
        stranger = address_of(fixed_key("someone else"))
        rig.world.market.ledger.transfer(tokens.find("USDC").address, rig.wallet, stranger, 7)
        drained = audit(rig.journal, rig.world, rig.wallet, funding)
        assert not drained.conserved and drained.duplicates == 1

        # An order the journal does not hold (its row, history and fills gone).
        other = await rig.executor.execute("other", CreateLimit(key="c", **far))
        with sqlite3.connect(tmp_path / "bot.db") as db:
            db.execute("DELETE FROM fills")
            db.execute("DELETE FROM order_transitions")
            db.execute("DELETE FROM orders WHERE order_id = ?", (other.order_id,))
        missing = audit(rig.journal, rig.world, rig.wallet, funding)
        assert missing.missing == 1 and missing.lost_transitions >= 1 and missing.lost_fills >= 1
