"""`bot doctor` in paper mode checks the paper world the daemon uses, and never changes it.

As a user types it, in a temporary folder: a key from `bot keys new`, a paper config with
an embedded world and a `recurring_dca`. Before any run doctor says there is no snapshot
yet and checks a new world; after `bot once` (which places a DCA and saves the world
beside the journal) it reports that world's balances and order, and leaves the snapshot
exactly as it was; a snapshot that cannot be read is a configuration failure (exit 2),
as it is for `bot run`.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_bot
from tests.support.user_folder import new_user_folder

CHECK_LINE = re.compile(r"^(PASS|FAIL|WARN|SKIP)  (\S.*?\S) {2,}(.*)$")


def checks(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, str]]:
    """Each check line of doctor's output: name → (outcome, detail)."""
    found = {}
    for line in result.stdout.splitlines():
        match = CHECK_LINE.match(line)
        if match:
            found[match[2]] = (match[1], match[3])
    return found


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    new_user_folder(tmp_path, paper='clock = "stepped"\nstart = "2026-03-01T00:00:00Z"')
    return tmp_path


def doctor(folder: Path) -> subprocess.CompletedProcess[str]:
    return run_bot("-c", "config.toml", "doctor", cwd=folder, timeout=60)


def digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_doctor_checks_the_daemons_world_read_only(folder: Path) -> None:
    snapshot = folder / "data" / "journal.paper-world.pickle"
    before = doctor(folder)
    assert before.returncode == 0, before.stdout + before.stderr
    found = checks(before)
    assert found["paper world"] == (
        "PASS",
        f"no snapshot yet at {Path('data/journal.paper-world.pickle')}: checking a new world, "
        "as the first `bot run` makes it from [paper].funding",
    )
    assert "10000 USDC" in found["token balances"][1]
    assert found["order lists"][1].endswith(": 0 DCA, 0 limit")
    assert not snapshot.exists()  # doctor never writes a world

    once = run_bot("-c", "config.toml", "once", cwd=folder, timeout=60)
    assert once.returncode == 0, once.stdout + once.stderr
    assert "create DCA" in once.stdout
    assert snapshot.exists()  # the trading process saved its world
    saved = digest(snapshot)

    after = doctor(folder)
    assert after.returncode == 0, after.stdout + after.stderr
    found = checks(after)
    outcome, detail = found["paper world"]
    assert outcome == "PASS"
    assert detail.startswith(
        f"the daemon's, restored read-only from {snapshot.relative_to(folder)}"
    )
    assert detail.endswith("([paper].funding applies to a new world only)")
    # The DCA `bot once` placed holds 2 × 25 USDC: the world the daemon trades on.
    assert "9950 USDC" in found["token balances"][1]
    assert found["order lists"][1].endswith(": 1 DCA, 0 limit")
    assert digest(snapshot) == saved  # not saved again, not touched


def test_an_unreadable_snapshot_fails_the_check_with_exit_2(folder: Path) -> None:
    snapshot = folder / "data" / "journal.paper-world.pickle"
    snapshot.parent.mkdir()
    snapshot.write_bytes(b"not a world")
    result = doctor(folder)
    assert result.returncode == 2, result.stdout + result.stderr
    found = checks(result)
    outcome, detail = found["paper world"]
    assert outcome == "FAIL"
    assert detail.startswith(f"{snapshot.relative_to(folder)} is not a paper-world snapshot;")
    assert "move the file away" in detail
    # What needs no world is still checked; nothing that would need one is.
    assert found["key file permissions"][0] == "PASS"
    assert found["journal"][0] == "PASS"
    assert "token balances" not in found
    assert result.stderr.strip().splitlines()[-1] == "bot: error: doctor: failed: paper world"
    assert snapshot.read_bytes() == b"not a world"
