"""`bot journal copy`: SQLite → PostgreSQL → SQLite, exact, verified, resumable."""

from __future__ import annotations

import io
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from bot.cli.journal_cmd import app
from bot.journal import Journal
from bot.journal.copy import CopyMismatch, copy_journal
from bot.journal.models import journal_metadata
from bot.journal.views import DaemonView, SwapFillRecord
from tests.support.console_rig import APT, T0, USDC, WALLET, fill_journal

runner = CliRunner()
SWAP_TX = "0x" + "5b" * 32


def full_journal(path: Path) -> str:
    """A SQLite journal holding a row in every table, with values that test exactness."""
    fill_journal(path)
    url = f"sqlite:///{path}"
    with Journal.open(url) as journal:
        swap = journal.record_intent(
            "swapper", WALLET, "swap", "swap:1", {"amount": Decimal("0.000000000000000001")}, at=T0
        )
        journal.set_intent_state(swap.id, "sent", at=T0)
        journal.record_transaction(SWAP_TX, WALLET, 2**64 - 1, "swap", at=T0, intent_id=swap.id)
        journal.update_transaction(
            SWAP_TX,
            "committed",
            at=T0 + timedelta(seconds=1),
            gas_used=2**200,
            gas_unit_price=100,
            balance_changes={APT: -(2**128 - 1), USDC: 5},
            committed_at=T0 + timedelta(seconds=1),
        )
        journal.set_intent_state(swap.id, "confirmed", at=T0 + timedelta(seconds=1))
        journal.record_swap_fill(
            SwapFillRecord(
                swap.id,
                SWAP_TX,
                APT,
                Decimal("1.5"),
                USDC,
                Decimal("7.123456789012345678"),
                "chain",
                T0,
            ),
            at=T0,
        )
        journal.set_state("swapper", "note", {"ünïcode": "✓", "d": Decimal("1E-30")}, at=T0)
        journal.enqueue_command("cancel", {"order": "x"}, at=T0)
        journal.record_daemon(
            DaemonView(WALLET, "höst-1", 4242, "live", "running", "ok", "1.0", 2, 60, T0, T0)
        )
    return url


def counts(url: str) -> dict[str, int]:
    with Journal.open(url, readonly=True) as journal, journal.engine.connect() as conn:
        return {
            t.name: int(conn.execute(text(f"SELECT COUNT(*) FROM {t.name}")).scalar_one())
            for t in journal_metadata.sorted_tables
        }


def exported(url: str) -> str:
    out = io.StringIO()
    with Journal.open(url, readonly=True) as journal:
        journal.export("json", out)
    return out.getvalue()


def copy(source: str, destination: str, **kwargs: object) -> list[tuple[str, int, str]]:
    with Journal.open(source, readonly=True) as src, Journal.open(destination) as dst:
        done = copy_journal(src.engine, dst.engine, **kwargs)  # type: ignore[arg-type]
    return [(t.table, t.rows, t.digest) for t in done]


def test_a_full_journal_goes_to_postgresql_and_back_exactly(
    tmp_path: Path, pg_database_url: str
) -> None:
    sqlite = full_journal(tmp_path / "a.db")
    assert all(counts(sqlite).values()), counts(sqlite)  # every kind of row is there
    there = copy(sqlite, pg_database_url, size=2)
    back_url = f"sqlite:///{tmp_path / 'b.db'}"
    back = copy(pg_database_url, back_url, size=3)
    assert there == back
    assert exported(sqlite) == exported(pg_database_url) == exported(back_url)
    with Journal.open(pg_database_url, readonly=True) as pg:
        tx = pg.transaction(SWAP_TX)
        assert tx is not None and tx.gas_used == 2**200 and tx.sequence_number == 2**64 - 1
    # The id sequences moved past the copied ids: the next write gets a fresh id.
    with Journal.open(pg_database_url) as pg:
        fresh = pg.record_intent("s", WALLET, "swap", "after-copy", {}, at=T0)
        assert fresh.id == max(i.id for i in pg.intents() if i.id != fresh.id) + 1
    # A second run copies nothing and verifies again.
    assert copy(sqlite, back_url) == there


def test_an_interrupted_copy_continues_where_it_stopped(
    tmp_path: Path, pg_database_url: str
) -> None:
    sqlite = full_journal(tmp_path / "a.db")
    batches: list[str] = []

    def stop_after_three(table: str, rows: int) -> None:
        batches.append(table)
        if len(batches) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copy(sqlite, pg_database_url, size=2, progress=stop_after_three)
    partial = counts(pg_database_url)
    assert 0 < sum(partial.values()) < sum(counts(sqlite).values())
    done = copy(sqlite, pg_database_url, size=2)
    assert counts(pg_database_url) == counts(sqlite)
    assert exported(pg_database_url) == exported(sqlite)
    assert [rows for _, rows, _ in done] == list(counts(sqlite).values())


def test_a_destination_holding_other_rows_fails_verification(
    tmp_path: Path, pg_database_url: str
) -> None:
    sqlite = full_journal(tmp_path / "a.db")
    with Journal.open(pg_database_url) as other:
        other.set_state("zz-other", "k", 1, at=T0)
    with pytest.raises(CopyMismatch, match="strategy_state: the destination holds a row"):
        copy(sqlite, pg_database_url)


def test_the_command_copies_and_refuses_bad_urls_in_one_line(
    tmp_path: Path, pg_database_url: str
) -> None:
    sqlite = full_journal(tmp_path / "a.db")
    result = runner.invoke(app, ["copy", sqlite, pg_database_url, "--batch", "4"])
    assert result.exit_code == 0, result.output
    assert "verified, row by row" in result.output and "intents: 2 rows" in result.output
    for bad, says in [
        (["copy", sqlite, "mysql://u:pw@h/db"], "is not supported"),
        (["copy", sqlite, sqlite], "the same journal"),
        (["copy", f"sqlite:///{tmp_path / 'none.db'}", pg_database_url], "no journal at"),
    ]:
        refused = runner.invoke(app, bad)
        assert refused.exit_code == 2, refused.output
        assert says in refused.output and len(refused.output.strip().splitlines()) == 1
