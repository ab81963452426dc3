"""Many wallets, one PostgreSQL journal, short: 2 daemons × 2 strategies for a simulated day.

The same code as `bench/many_wallets.py` (harness/many_wallets.py), over ~20 real seconds
instead of ~4 minutes: two wallets, each with its own key and config naming the same
journal (a fresh database of the session's throwaway cluster; skipped, one line, where
PostgreSQL cannot run) and the same two strategy names, each traded by its own `bot run`
process against one served paper world. No lock errors, every row its own wallet's, no
duplicate intents, nothing lost, and `bot status --all` lists both daemons.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.many_wallets import LOCK_ERRORS, ManyOptions, run_many


@pytest.mark.chaos
def test_two_daemons_share_one_postgresql_journal_without_mixing_rows(
    tmp_path: Path, pg_database_url: str
) -> None:
    report = run_many(
        ManyOptions(
            folder=tmp_path, journal_url=pg_database_url, wallets=2, strategies=2, sim_days=1.0
        )
    )
    assert report.exits == [] and report.stop_exits == [0, 0], report.summary()
    assert report.lock_errors == [], report.lock_errors[:5]
    assert (report.status_listed, report.status_fresh) == (2, 2), report.status_problems
    assert report.reconcile_exits == [0, 0] and report.stuck_tx == 0
    assert report.foreign_rows == [] and report.duplicate_intents == 0
    for table in ("orders", "intents", "strategy_state", "daemons"):
        assert set(report.rows[table]) == set(report.wallets), (table, report.rows[table])
    for wallet, found in report.audits.items():
        assert sum(found.intents.values()) > 0 and found.world_orders > 0, (wallet, found)
        assert (found.missing, found.lost_fills, found.lost_transitions) == (0, 0, 0), (
            found.problems
        )
        assert (found.duplicates, found.double_tx, found.unsettled) == (0, 0, 0), found.problems
        assert found.clean, found.problems
    assert report.ok, report.summary()


def test_the_lock_error_pattern_catches_the_refusal_and_spares_routine_lines() -> None:
    refused = "bot: error: another process trades 0xab (advisory lock 'wallet:0xab' in pg)"
    assert LOCK_ERRORS.search(refused)
    assert LOCK_ERRORS.search("sqlalchemy.exc.OperationalError: database is locked")
    assert LOCK_ERRORS.search("psycopg.errors.DeadlockDetected: deadlock detected")
    assert not LOCK_ERRORS.search('STAMP stats {"py_blocks": 585311, "requests": 8}')
