"""A journal no bot can use: every verb says so in one line and exits 2, no traceback.

Three journals: garbage bytes, a real journal damaged in the middle (a table page
overwritten: the header and the schema still read), and a real one whose alembic
revision is newer than this code's head. `bot doctor` reports it as its own FAIL line
(exit 1, doctor's convention).
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.chain import new_key_file
from bot.journal import Journal
from bot.journal.migrate import head_revision
from tests.support.cli import run_bot

VERBS = [
    ("orders",),
    ("status",),
    ("once",),
    ("reconcile",),
    ("run", "--paper"),
    ("journal", "export", "--format", "json"),
    ("journal", "migrate"),
]
PAGE = 4096
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def garbage(path: Path) -> str:
    path.write_bytes(bytes(range(256)) * 40)
    return "not a SQLite database file (file is not a database)"


def damaged(path: Path) -> str:
    with Journal.open(f"sqlite:///{path}") as journal:
        for n in range(200):  # a few pages of intents, so a table page can be hit
            journal.record_intent("s", "0x1", "swap", f"key-{n}", {"n": "x" * 200}, at=T0)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (pages,) = db.execute("PRAGMA page_count").fetchone()
    assert pages > 8
    with path.open("r+b") as handle:
        handle.seek(PAGE * (pages - 3))
        handle.write(b"\xa5" * PAGE)
    return "the database file is damaged (database disk image is malformed)"


def newer(path: Path) -> str:
    Journal.open(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE alembic_version SET version_num = '9999_from_a_newer_bot'")
    with sqlite3.connect(path) as db:  # into the file itself: compared byte for byte below
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return (
        f"schema revision '9999_from_a_newer_bot' is not one this bot knows (its newest "
        f"is {head_revision()})"
    )


def config_for(folder: Path, journal: Path) -> Path:
    wallet = new_key_file(folder / "wallet.key")
    config = folder / "bot.toml"
    config.write_text(
        f'[journal]\nurl = "sqlite:///{journal}"\n'
        f'[wallet]\nkey_file = "{folder / "wallet.key"}"\n'
        f'[daemon]\nlock_dir = "{folder / "locks"}"\n'
        '[paper]\nclock = "accelerated"\napi_keys = ["k"]\n'
        f'funding = [{{ wallet = "{wallet}", token = "APT", amount = "3" }}]\n'
        '\n[[strategies]]\nname = "dca"\nplugin = "recurring_dca"\n'
        "schedule = { interval_seconds = 3600 }\n"
        'params = { from_token = "APT", to_token = "USDC", amount_per_order = "0.1", '
        'interval = "1 day", orders = 7 }\n'
    )
    return config


@pytest.mark.parametrize("make", [garbage, damaged, newer], ids=lambda f: f.__name__)
def test_every_verb_names_the_journal_and_its_problem_in_one_line(
    tmp_path: Path, make: Callable[[Path], str]
) -> None:
    journal = tmp_path / "bot.db"
    problem = make(journal)
    before = journal.read_bytes()
    config = config_for(tmp_path, journal)

    def run(verb: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
        return run_bot("-c", str(config), *verb, timeout=90)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(zip(VERBS, pool.map(run, VERBS), strict=True))
    expected = f"bot: error: journal at {journal}: {problem}"
    for verb, result in results.items():
        shown = f"{' '.join(verb)}: {result.stdout}{result.stderr}"
        assert result.returncode == 2, shown
        assert "Traceback" not in result.stderr, shown
        [line] = result.stderr.splitlines()
        assert line.startswith(expected), shown
        assert line.endswith("restore a backup" if make is newer else "from a backup"), shown

    doctor = run(("doctor",))
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr
    [fail] = [ln for ln in doctor.stdout.splitlines() if ln.startswith("FAIL  journal ")]
    assert f"journal at {journal}: {problem}" in fail
    assert journal.read_bytes() == before  # nothing wrote to it, not even a migration
