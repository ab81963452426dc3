"""Issue 22, item 3, as a user types it: restarting a paper daemon must not freeze it.

A temporary folder, a key from `bot keys new`, a config with a `recurring_dca` in paper
mode (embedded world, accelerated clock, funding through `[[paper.funding]]`); `bot run`
for a while, SIGTERM, `bot run` again. The second run used to log `OrderDisappeared`
five times a second, keep the old order `active` in `bot orders`, act no more, and say
`health ok`. Now the embedded world is kept beside the journal (saved at stop and every
`[paper].snapshot_seconds`) and restored; a world that lost the journal's orders (its
snapshot deleted) closes them once as `lost`, the strategy goes on, and `bot status` says
`degraded` with the reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.journal import Journal
from bot.journal.views import OrderView
from tests.support.cli import clean_env, run_bot
from tests.support.user_folder import HOURLY_DCA, new_user_folder, wait_for

SPEED = 600  # an hour of market every 6 s: a two-slice hourly DCA ends in about 6 s
DISAPPEARED = " disappeared (was "


@dataclass
class Folder:
    """The user's folder: config, key, `data/` (journal, world snapshot, status file)."""

    path: Path
    outputs: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def snapshot(self) -> Path:
        return self.path / "data" / "journal.paper-world.pickle"

    def bot(self, *args: str) -> str:
        result = run_bot("-c", "config.toml", *args, cwd=self.path)
        assert result.returncode in (0, 1), result.stdout + result.stderr  # status: 1 unhealthy
        return result.stdout

    def orders(self) -> list[OrderView]:
        url = f"sqlite:///{self.path / 'data' / 'journal.db'}"
        with Journal.open(url, readonly=True) as journal:
            return journal.orders(kind="dca")

    def start(self) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "bot", "-c", "config.toml", "run"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),
            cwd=self.path,
        )

    def stop(self, process: subprocess.Popen[str], name: str) -> tuple[str, str]:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert out.strip().splitlines()[-1] == "bot stopped"
        self.outputs[name] = (out, err)
        return out, err

    def status(self) -> dict[str, object]:
        result = run_bot("-c", "config.toml", "status", "--json", cwd=self.path)
        data: dict[str, object] = json.loads(result.stdout)
        return data


def active(folder: Folder) -> list[str]:
    try:
        return [o.order_id for o in folder.orders() if o.status == "active"]
    except Exception:  # the daemon may still be creating the journal
        return []


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    paper = f'clock = "accelerated"\nspeed = {SPEED}\nsnapshot_seconds = 1'
    new_user_folder(tmp_path, paper=paper, strategies=HOURLY_DCA.replace("3600", "600"))
    yield Folder(tmp_path)


def test_a_restarted_paper_daemon_goes_on_trading(folder: Folder) -> None:
    first = folder.start()
    wait_for(lambda: bool(active(folder)), "a first DCA")
    out1, _ = folder.stop(first, "first")
    assert "dca: create DCA" in out1 and "→ confirmed order" in out1
    assert folder.snapshot.exists()  # the world is kept beside the journal
    [left_active] = active(folder)
    known = {o.order_id for o in folder.orders()}

    second = folder.start()
    # The strategy goes on: the order left active fills in the restored world and a new
    # DCA replaces it.
    wait_for(lambda: bool(set(active(folder)) - known), "a DCA made by the second run")
    out2, err2 = folder.stop(second, "second")
    assert DISAPPEARED not in out2 and "order_disappeared" not in err2
    assert f"dca: DCA order {left_active[:10]}… filled: " in out2
    assert "dca: create DCA" in out2

    listed = folder.bot("orders")
    statuses = {o.order_id: o.status for o in folder.orders()}
    assert set(statuses.values()) <= {"active", "filled"}
    assert list(statuses.values()).count("active") == 1  # never two live DCAs
    for order_id, status in statuses.items():
        [row] = [line for line in listed.splitlines() if line.startswith(order_id[:12])]
        assert status in row.split()


def test_a_world_that_lost_the_journals_orders_closes_them_once(folder: Folder) -> None:
    first = folder.start()
    wait_for(lambda: bool(active(folder)), "a first DCA")
    folder.stop(first, "first")
    [gone] = active(folder)
    folder.snapshot.unlink()  # the user deletes the world (or a new machine, a lost file)

    second = folder.start()
    wait_for(lambda: bool(set(active(folder)) - {gone}), "a DCA made in the new world")
    status = folder.status()
    assert status["healthy"] is False
    problem = str(status["problem"])
    assert problem.startswith("degraded: 1 order disappeared"), problem
    assert f"dca {gone[:12]} → lost" in problem
    human = folder.bot("status")
    assert "health      degraded: 1 order disappeared" in human and "health      ok" not in human
    time.sleep(3)  # many polls later: still one line, one event
    out, err = folder.stop(second, "second")

    lines = [line for line in out.splitlines() if DISAPPEARED in line]
    assert lines == [
        f"dca: DCA order {gone[:10]}… disappeared (was active, now lost: unknown to the "
        "embedded paper world (its snapshot was deleted or replaced, or saved before the "
        "order was made))"
    ]
    assert err.count("tracker.order_disappeared") == 1
    orders = {o.order_id: o for o in folder.orders()}
    assert orders[gone].status == "lost"
    # The new world's orders are its own: none lost (on a loaded machine the first may
    # already have filled and been replaced before the stop).
    made = [o.status for oid, o in orders.items() if oid != gone]
    assert made and set(made) <= {"active", "filled"}, made
    listed = folder.bot("orders", "--status", "active").splitlines()
    assert not any(line.startswith(gone[:12]) for line in listed)  # not active any more
    shown = folder.bot("orders", "show", gone)
    assert "active → lost  (poll)" in shown


def test_a_kill_9_loses_at_most_the_last_save_window(folder: Folder) -> None:
    first = folder.start()
    wait_for(lambda: bool(active(folder)), "a first DCA")
    [order_id] = active(folder)[:1]
    saved = folder.snapshot.stat().st_mtime if folder.snapshot.exists() else 0.0
    # A save after the order was made (every second here), then kill -9 mid-run.
    wait_for(
        lambda: folder.snapshot.exists() and folder.snapshot.stat().st_mtime > saved + 1.5,
        "a periodic save",
        timeout=10,
    )
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    known = {o.order_id: o.status for o in folder.orders()}

    second = folder.start()
    wait_for(lambda: bool(set(active(folder)) - set(known)), "a DCA made by the second run")
    out, _err = folder.stop(second, "second")
    statuses = {o.order_id: o.status for o in folder.orders()}
    assert statuses[order_id] in ("active", "filled")  # kept by the world: never lost
    assert f"DCA order {order_id[:10]}…{DISAPPEARED}" not in out
    # Only an order made in the last second before the kill can be unknown to the world,
    # and it is reported once.
    reported = [line for line in out.splitlines() if DISAPPEARED in line]
    assert len(reported) == len(set(reported)) <= 1
    assert list(statuses.values()).count("active") == 1
    assert os.path.getsize(folder.snapshot) > 0
