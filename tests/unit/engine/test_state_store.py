"""A dry run keeps the strategies' saved state in memory, never in the journal (issue 22).

"Dry run, then go live": a ladder a dry run "placed" must still be placed by the live run
that follows, while a dry-run daemon keeps its own continuity from tick to tick.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest

from bot.app.build import build_engine
from bot.app.runtime import Runtime
from bot.config import load_settings
from bot.engine.brokers import DryRunBroker, LiveBroker
from bot.engine.engine import Engine, TickReport
from bot.engine.live_ports import live_engine
from bot.engine.risk import RiskChecker
from bot.engine.state_store import JournalStateStore, OverlayStateStore
from bot.engine.strategy import Strategy
from bot.journal import Journal, JournalError
from harness.paper_signing import address_of, fixed_key
from strategies.limit_ladder import LimitLadder, LimitLadderParams
from strategies.recurring_dca import RecurringDca, RecurringDcaParams
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("state-store-tests")
WALLET = address_of(KEY)


def strategies() -> list[Strategy]:
    ladder = LimitLadderParams(
        sell_token="USDC",
        buy_token="APT",
        rungs=4,
        spacing_percent=Decimal(2),
        amount_per_rung=Decimal(40),
        redrift_percent=Decimal(5),
        expiry="1 day",
    )
    dca = RecurringDcaParams(
        from_token="USDC",
        to_token="APT",
        amount_per_order=Decimal(25),
        orders=7,
        interval="1 day",
    )
    return [RecurringDca("weekly-apt", dca), LimitLadder("ladder", ladder)]


def engine_of(rig: PaperRig, *, dry_run: bool) -> Engine:
    tokens = rig.world.market.tokens.book
    journal_state = JournalStateStore(rig.journal)
    return live_engine(
        client=rig.client,
        journal=rig.journal,
        clock=rig.clock,
        wallet=WALLET,
        tokens=tokens,
        broker=DryRunBroker(rig.client, tokens, WALLET) if dry_run else LiveBroker(rig.executor),
        risk=RiskChecker(load_settings(None).risk, rig.journal, tokens),
        strategies=strategies(),
        node=rig.node,
        state_store=OverlayStateStore(journal_state) if dry_run else journal_state,
    )


def actions(reports: list[TickReport]) -> dict[str, list[str]]:
    return {r.strategy: [o.state for _, o in r.outcomes] for r in reports}


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PaperRig]:
    async with paper_rig(tmp_path, KEY) as opened:
        yield opened


def test_the_overlay_reads_through_and_writes_only_to_memory(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    at = datetime(2026, 1, 1, tzinfo=UTC)
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        journal.set_states("s", {"a": Decimal("1.5"), "b": [1, 2]}, at=at)
        overlay = OverlayStateStore(JournalStateStore(journal))
        overlay.save("s", {"b": [3], "c": at}, at=at)
        assert overlay.load("s") == {"a": Decimal("1.5"), "b": [3], "c": at}
        assert overlay.load("other") == {}
        assert journal.states("s") == {"a": Decimal("1.5"), "b": [1, 2]}  # untouched
        # What a strategy does to what it read never changes what is kept.
        overlay.load("s")["b"].append(4)
        assert overlay.load("s")["b"] == [3]
        # Refused as the journal refuses it: a dry run shows the error the live run meets.
        with pytest.raises(JournalError, match=r"state s\.d: .*float 0\.5 refused"):
            overlay.save("s", {"d": 0.5}, at=at)
        with pytest.raises(JournalError, match=r"state s\.d: .*float 0\.5 refused"):
            journal.set_states("s", {"d": 0.5}, at=at)
        # The journal moving on underneath shows through where this run saved nothing.
        journal.set_states("s", {"a": Decimal(7), "b": [9]}, at=at)
        assert overlay.load("s") == {"a": Decimal(7), "b": [3], "c": at}


async def test_dry_runs_then_live_place_the_whole_ladder(rig: PaperRig) -> None:
    dry = engine_of(rig, dry_run=True)
    first = actions(await dry.tick_all())
    assert first == {"weekly-apt": ["dry-run"], "ladder": ["dry-run"] * 4}
    # The same dry-run process remembers its ladder (its own continuity)…
    assert actions(await dry.tick_all()) == {"weekly-apt": ["dry-run"], "ladder": []}
    # …and the journal never heard of it.
    assert rig.journal.states("ladder") == rig.journal.states("weekly-apt") == {}
    assert rig.journal.intents() == []
    # A second dry run (another process) shows the same as the first.
    assert actions(await engine_of(rig, dry_run=True).tick_all()) == first
    live = engine_of(rig, dry_run=False)
    assert actions(await live.tick_all()) == {
        "weekly-apt": ["confirmed"],
        "ladder": ["confirmed"] * 4,
    }
    assert len(rig.world.market.limit.orders_of(WALLET)) == 4
    assert rig.journal.states("ladder")["generation"] == 0
    assert actions(await live.tick_all()) == {"weekly-apt": [], "ladder": []}


async def test_build_engine_gives_a_dry_run_the_overlay(tmp_path: Path) -> None:
    from bot.chain import new_key_file

    new_key_file(tmp_path / "wallet.key")
    config = tmp_path / "bot.toml"
    config.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        f'[wallet]\nkey_file = "{tmp_path / "wallet.key"}"\n'
        '[paper]\nclock = "stepped"\n'
    )
    settings = load_settings(config)
    runtime = await Runtime.open(settings)
    async with runtime:
        dry = build_engine(runtime, settings, dry_run=True)
        assert isinstance(dry.state_store, OverlayStateStore)
        assert isinstance(dry.state_store.base, JournalStateStore)
        dry.state_store.save("s", {"k": 1}, at=runtime.clock.now())
        assert runtime.journal.states("s") == {}
        live_store = build_engine(runtime, settings, dry_run=False).state_store
        assert isinstance(live_store, JournalStateStore)
