"""Fault soak, short: a simulated day and a half of heavy faults against the daemon.

The same code as `bench/soak.py --faults heavy` (harness/soak.py), over ~30 real
seconds instead of 10 minutes: 20% of provider requests fail (429, 500, timeouts, dropped
connections after the request was applied, malformed bodies) and 20% of transaction
submissions (mempool full, lost). The daemon must survive every one of them, and every
intent must end applied exactly once, or not at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.soak import SoakOptions, run_soak


@pytest.mark.chaos
def test_the_daemon_survives_heavy_faults_and_applies_each_intent_once(tmp_path: Path) -> None:
    report = run_soak(SoakOptions(sim_days=1.5, faults="heavy", folder=tmp_path, seed=3))
    found = report.audit
    assert report.restarts == 0, report.exits  # it never exited by itself
    assert report.stop_exit == 0  # and it stopped cleanly on SIGTERM
    errors = report.stats.get("errors", {})
    assert report.stats.get("retries", 0) > 0 and sum(errors.values()) > 0, report.stats
    assert sum(found.intents.values()) > 0 and found.committed_tx > 0, report.summary()
    assert (found.duplicates, found.double_tx, found.wrong_effects) == (0, 0, 0), found.problems
    assert (found.orphans, found.mislinked, found.missing) == (0, 0, 0), found.problems
    assert (found.lost_transitions, found.lost_fills, found.stale_tx) == (0, 0, 0), found.problems
    assert found.unsettled == 0 and found.conserved, found.problems
    assert report.stuck_tx == 0 and report.reconcile_exit == 0
