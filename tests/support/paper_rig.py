"""One in-process trading rig: a stepped paper world and the bot's parts wired to it.

The paper world's two faces over `httpx.ASGITransport` (no sockets), a real journal file,
the provider client, the node client, a signer allowed to call the router and the paper
order modules, and an executor — what the engine, executor and strategy tests share.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from aptos_sdk import ed25519
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.aptos.address import FunctionId
from bot.chain import NodeClient, Signer, SignerPolicy
from bot.chain.policy import ROUTER_FUNCTION
from bot.chain.settings import SignerSettings
from bot.clock import SteppedClock
from bot.config import PaperFunding, PaperSettings
from bot.engine.executor import Executor
from bot.engine.recorder import JournalRecorder
from bot.journal import Journal
from bot.paper.core.modules import order_function
from bot.paper.world import PaperWorld, build_world
from harness.paper_signing import address_of


async def no_wait(seconds: float) -> None:
    """A sleep that returns at once (back-off and polls need no real waiting here)."""
    return None


@dataclass
class PaperRig:
    """The parts, ready to use."""

    world: PaperWorld
    journal: Journal
    client: PanoraClient
    node: NodeClient
    signer: Signer
    executor: Executor
    wallet: str

    @property
    def clock(self) -> SteppedClock:
        clock = self.world.market.clock
        assert isinstance(clock, SteppedClock)
        return clock


@asynccontextmanager
async def paper_rig(
    tmp_path: Path,
    key: ed25519.PrivateKey,
    *,
    funds: Mapping[str, Decimal] | None = None,
    client_attempts: int = 4,
    **paper: Any,
) -> AsyncIterator[PaperRig]:
    """A rig whose wallet (the key's address) holds `funds` (default 10,000 USDC, 100 APT)."""
    wallet = address_of(key)
    amounts = funds or {"USDC": Decimal(10_000), "APT": Decimal(100)}
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=[PaperFunding(wallet=wallet, token=t, amount=a) for t, a in amounts.items()],
            **paper,
        )
    )
    transport = httpx.ASGITransport(app=world.app)
    journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    client = PanoraClient(
        base_url="http://paper",
        api_key=SecretStr("k"),
        transport=transport,
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
        sleep=no_wait,
        max_attempts=client_attempts,
    )
    node = NodeClient("http://paper/v1", expected_chain_id=4, transport=transport, sleep=no_wait)
    functions = [order_function(k, f) for k in ("dca", "limit") for f in ("deposit", "withdraw")]
    policy = SignerPolicy(
        chain_id=4,
        allowed_functions=frozenset({ROUTER_FUNCTION, *map(FunctionId.parse, functions)}),
        max_slippage_percent=Decimal(5),
    )
    signer = Signer(
        node,
        key,
        policy,
        JournalRecorder(journal, world.market.clock),
        sleep=no_wait,
        settings=SignerSettings(poll_interval_seconds=0, first_poll_delay_seconds=0),
    )
    executor = Executor(
        journal=journal,
        client=client,
        clock=world.market.clock,
        wallet=wallet,
        tokens=world.market.tokens.book,
        signer=signer,
    )
    try:
        yield PaperRig(world, journal, client, node, signer, executor, wallet)
    finally:
        await client.aclose()
        await node.aclose()
        journal.close()
