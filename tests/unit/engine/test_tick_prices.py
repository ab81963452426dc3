"""A tick asks `/prices` for the tokens its strategies name (and APT), not the whole list.

Issue #16: the per-tick cost must not grow with the provider's token list. Real engine on
a paper world; the client's `get_prices` is wrapped only to see what it was asked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.config import RiskSettings, StrategyEntry
from bot.engine.brokers import LiveBroker
from bot.engine.live_ports import live_engine
from bot.engine.plugins import build_strategy
from bot.engine.risk import RiskChecker
from harness.paper_signing import fixed_key
from tests.support.paper_rig import PaperRig, paper_rig

KEY = fixed_key("tick-prices")


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PaperRig]:
    async with paper_rig(tmp_path, KEY, funds={"USDC": Decimal(500)}) as r:
        yield r


async def test_a_tick_prices_only_the_tokens_its_strategies_name(rig: PaperRig) -> None:
    params = {"sell_token": "USDC", "buy_token": "APT", "rungs": 1}
    params |= {"spacing_percent": "2", "amount_per_rung": "10", "redrift_percent": "5"}
    entry = StrategyEntry(
        name="ladder", plugin="limit_ladder", schedule={"interval_seconds": 60}, params=params
    )
    book = rig.world.market.tokens.book
    asked: list[Sequence[str] | None] = []
    real = rig.client.get_prices

    async def spy(tokens: Sequence[str] | None = None, **kwargs: Any) -> Any:
        asked.append(tokens)
        return await real(tokens, **kwargs)

    rig.client.get_prices = spy  # type: ignore[method-assign]
    engine = live_engine(
        client=rig.client,
        journal=rig.journal,
        clock=rig.clock,
        wallet=rig.wallet,
        tokens=book,
        broker=LiveBroker(rig.executor),
        risk=RiskChecker(RiskSettings(), rig.journal, book),
        strategies=[build_strategy(entry)],
    )
    strategy = engine.strategies["ladder"]
    ctx = await engine.context(strategy)
    wanted = sorted({book.find("USDC").address, book.find("APT").address})
    assert asked == [wanted]
    assert {info.token for info in ctx.prices.values()} == set(wanted)
    assert len(book) > 2  # the world knows more tokens than were asked for


async def test_one_strategy_whose_tokens_fail_leaves_the_others_their_prices(
    rig: PaperRig,
) -> None:
    params = {"sell_token": "USDC", "buy_token": "APT", "rungs": 1}
    params |= {"spacing_percent": "2", "amount_per_rung": "10", "redrift_percent": "5"}
    book = rig.world.market.tokens.book
    good, bad = (
        build_strategy(
            StrategyEntry(
                name=name, plugin="limit_ladder", schedule={"interval_seconds": 60}, params=params
            )
        )
        for name in ("good", "bad")
    )

    def broken() -> list[str]:
        raise RuntimeError("tokens() broke after load")

    bad.tokens = broken  # type: ignore[method-assign]
    engine = live_engine(
        client=rig.client,
        journal=rig.journal,
        clock=rig.clock,
        wallet=rig.wallet,
        tokens=book,
        broker=LiveBroker(rig.executor),
        risk=RiskChecker(RiskSettings(), rig.journal, book),
        strategies=[good, bad],
    )
    ctx = await engine.context(engine.strategies["good"])
    assert {info.symbol for info in ctx.prices.values()} >= {"USDC", "APT"}
    assert (await engine.context(engine.strategies["bad"])).prices  # APT for gas at least
