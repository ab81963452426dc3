"""The command kinds Telegram and the console add to the queue: stopentry, reconcile, reload.

Run by `bot.engine.commands.process_commands` on a real journal file, as the daemon's
command job runs them; the payload's `by` (who asked) stays in the journal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.clock import SteppedClock
from bot.engine.commands import process_commands, reconcile_line
from bot.engine.pauses import paused_strategies
from bot.engine.reconcile import Resolution
from bot.journal import Journal

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
BY = {"via": "telegram", "chat_id": "1001", "user_id": 7, "username": "bob"}


class Engine:
    """What pauses touch of the engine: its strategies and paused set."""

    def __init__(self, *names: str) -> None:
        self.strategies: dict[str, Any] = {n: object() for n in names}
        self.paused: set[str] = set()

    def reconfigure(self, *, paused: Iterable[str]) -> None:
        self.paused = set(paused)


class NoExecutor:
    async def execute(self, strategy: str, action: Any) -> Any:
        raise AssertionError("nothing is sent by these commands")


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    opened = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        yield opened
    finally:
        opened.close()


async def run(
    journal: Journal, engine: Engine | None, reconcile: Any = None, reload: Any = None
) -> int:
    clock = SteppedClock(NOW)
    return await process_commands(
        journal,
        NoExecutor(),  # type: ignore[arg-type]
        clock,
        engine,  # type: ignore[arg-type]
        reconcile=reconcile,
        reload=reload,
    )


async def test_stopentry_pauses_every_strategy_in_the_journal_too(journal: Journal) -> None:
    engine = Engine("dca-a", "dca-b", "ladder")
    engine.paused = {"ladder"}
    command_id = journal.enqueue_command("stopentry", {"by": BY}, at=NOW)
    assert await run(journal, engine) == 1
    done = journal.command(command_id)
    assert done is not None and done.state == "done"
    assert done.result == (
        "entries stopped: paused dca-a, dca-b (already paused: ladder); "
        "placed orders stay open; resume each strategy to trade again"
    )
    assert engine.paused == {"dca-a", "dca-b", "ladder"}
    assert set(paused_strategies(journal)) == {"dca-a", "dca-b", "ladder"}
    assert done.payload["by"] == BY

    again = journal.enqueue_command("stopentry", {}, at=NOW)
    await run(journal, engine)
    second = journal.command(again)
    assert second is not None and second.result is not None
    assert second.result.startswith("entries stopped: all were paused")


async def test_stopentry_with_no_strategy_and_without_an_engine(journal: Journal) -> None:
    first = journal.enqueue_command("stopentry", {}, at=NOW)
    await run(journal, Engine())
    done = journal.command(first)
    assert done is not None and (done.state, done.result) == (
        "done",
        "no strategy runs: nothing to stop",
    )
    refused = journal.enqueue_command("stopentry", {}, at=NOW)
    await run(journal, None)
    view = journal.command(refused)
    assert view is not None and (view.state, view.result) == (
        "failed",
        "unknown command 'stopentry'",
    )


async def test_reconcile_runs_the_daemons_reconciler_and_says_what_it_settled(
    journal: Journal,
) -> None:
    runs: list[int] = []

    async def reconcile() -> Sequence[Resolution]:
        runs.append(1)
        return [Resolution(1, "confirmed"), Resolution(2, "failed"), Resolution(3, "confirmed")]

    command_id = journal.enqueue_command("reconcile", {"by": BY}, at=NOW)
    await run(journal, Engine("a"), reconcile)
    done = journal.command(command_id)
    assert runs == [1]
    assert done is not None and done.state == "done"
    assert done.result == "reconciled 3 intents: 2 confirmed, 1 failed"
    assert reconcile_line([]) == "reconciled: nothing to settle"

    refused = journal.enqueue_command("reconcile", {}, at=NOW)
    await run(journal, Engine("a"))  # a daemon without a reconciler (none given)
    view = journal.command(refused)
    assert view is not None and view.state == "failed"


async def test_a_command_that_raises_is_failed_not_left_taken(journal: Journal) -> None:
    async def broken() -> Sequence[Resolution]:
        raise RuntimeError("node down\nsecond line")

    first = journal.enqueue_command("reconcile", {}, at=NOW)
    after = journal.enqueue_command("pause", {"strategy": "a"}, at=NOW)
    engine = Engine("a")
    assert await run(journal, engine, broken) == 2
    failed = journal.command(first)
    assert failed is not None and (failed.state, failed.result) == (
        "failed",
        "RuntimeError: node down",
    )
    paused = journal.command(after)
    assert paused is not None and paused.state == "done" and engine.paused == {"a"}


async def test_reload_asks_the_daemon_and_records_its_answer(journal: Journal) -> None:
    asked: list[int] = []

    def reload() -> str:
        asked.append(1)
        return "reload requested (as SIGHUP); its outcome is in the log"

    command_id = journal.enqueue_command("reload", {"source": "console"}, at=NOW)
    await run(journal, Engine("a"), reload=reload)
    done = journal.command(command_id)
    assert asked == [1]
    assert done is not None and (done.state, done.result) == (
        "done",
        "reload requested (as SIGHUP); its outcome is in the log",
    )

    refused = journal.enqueue_command("reload", {}, at=NOW)
    await run(journal, Engine("a"))  # a daemon that cannot reload (none given)
    view = journal.command(refused)
    assert view is not None and (view.state, view.result) == ("failed", "unknown command 'reload'")
