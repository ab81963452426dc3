"""The crash windows of `test_crash_windows` with the journal on PostgreSQL.

The same rig (a served paper world, a runner process killed at each failpoint, then
restarted to reconcile) and the same checks, one case per failpoint; only the journal
lives in a fresh database of the session's throwaway cluster (`tests/support/postgres.py`;
skipped, one line, where PostgreSQL cannot run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bot.journal import Journal
from tests.integration import test_crash_windows as crash

CASES = [
    ("onchain", "create_dca", "after_intent", ""),
    ("onchain", "create_dca", "after_send", "--warm-up"),
    ("escrow", "create_dca", "after_response", ""),
    ("onchain", "swap", "before_submit", ""),
    ("onchain", "create_dca", "after_order", ""),
]


@pytest.mark.parametrize(
    ("style", "action", "failpoint", "switch"),
    CASES,
    ids=["-".join(c[:3]) + c[3].replace("--", "-") for c in CASES],
)
def test_a_crash_window_on_postgresql_reconciles_to_one_effect(
    tmp_path: Path,
    pg_database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    style: str,
    action: str,
    failpoint: str,
    switch: str,
) -> None:
    served = crash.served

    @contextmanager
    def served_on_postgresql(path: Path, order_style: str) -> Iterator[crash.Rig]:
        with served(path, order_style) as rig:
            yield dataclasses.replace(rig, journal_url=pg_database_url)

    monkeypatch.setattr(crash, "served", served_on_postgresql)
    crash.test_a_crash_window_reconciles_to_one_effect(tmp_path, style, action, failpoint, switch)
    with Journal.open(pg_database_url, readonly=True) as journal:
        assert journal.intents()  # the runner's journal was this database
    assert not list(tmp_path.glob("*.db"))  # and no SQLite file
