"""`bot doctor` in paper mode: which paper world the checks look at.

The daemon's embedded paper world lives in a snapshot beside its journal
(`<journal>.paper-world.pickle`, or `[paper].snapshot_file`). Doctor checks that world,
restored read-only (never saved, so nothing it does changes it), so the balances, orders
and gas it reports are the daemon's; without a snapshot yet it checks a new world, as the
first `bot run` makes it. A served world (`[paper].url`) is the one the daemon talks to.
One line says which.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from bot.config import Settings
from bot.ops.doctor import FAIL, PASS, CheckResult, public_url

__all__ = ["PAPER_WORLD", "check_paper_world"]

PAPER_WORLD: Final = "paper world"
"""The check's name."""


def check_paper_world(
    settings: Settings, snapshot: Path | None, *, restored: bool, problem: str | None = None
) -> CheckResult | None:
    """Which paper world doctor checks (None outside paper mode).

    Args:
        settings: the configuration as checked.
        snapshot: the embedded world's snapshot file (`runtime.embedded_snapshot`), None
            for a served world or a journal kept in memory.
        restored: the world was restored from `snapshot`.
        problem: why the snapshot could not be read (a FAIL, exit 2: the daemon refuses
            to start on it too).
    """
    if settings.mode != "paper":
        return None
    if settings.paper.url:
        return CheckResult(
            PAPER_WORLD,
            PASS,
            f"served at {public_url(settings.paper.url)} (`bot paper serve`): the world a "
            "daemon with this [paper].url trades on",
        )
    if problem is not None:
        return CheckResult(
            PAPER_WORLD,
            FAIL,
            f"{problem}; `bot run` refuses it too: move the file away to start a new paper "
            "world (the journal's open paper orders are then closed as lost)",
            config_error=True,
        )
    if snapshot is None:
        return CheckResult(
            PAPER_WORLD,
            PASS,
            "embedded, in memory (the journal is no file): every run starts a new world "
            "from [paper].funding",
        )
    if not restored:
        return CheckResult(
            PAPER_WORLD,
            PASS,
            f"no snapshot yet at {snapshot}: checking a new world, as the first `bot run` "
            "makes it from [paper].funding",
        )
    funding = " ([paper].funding applies to a new world only)" if settings.paper.funding else ""
    detail = f"the daemon's, restored read-only from {snapshot} (saved {_saved_at(snapshot)})"
    return CheckResult(PAPER_WORLD, PASS, detail + funding)


def _saved_at(snapshot: Path) -> str:
    """The snapshot file's modification time, UTC (the daemon saves it as it runs)."""
    try:
        at = datetime.fromtimestamp(snapshot.stat().st_mtime, UTC)
    except OSError:
        return "at an unknown time"
    return at.replace(microsecond=0).isoformat().replace("+00:00", "Z")
