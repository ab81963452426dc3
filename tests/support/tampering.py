"""A hostile provider: the paper world behind a proxy that rewrites its JSON answers.

`TamperingProxy` is ASGI middleware: every request reaches the paper world untouched; the
answer of a path with an edit set is parsed (numbers kept as sent), handed to the edit and
written back. So a test plays a provider that lies in any field of any answer while the
paper world underneath stays honest: its ledger is the truth the test checks money
against.

`hostile_rig` runs the bot's real parts against it over loopback: client, executor, signer
with the policy built from `[chain]` and `[risk]`, journal on a real SQLite file.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.api import PanoraClient
from bot.chain import NodeClient, Signer, SignerPolicy
from bot.chain.policy import ROUTER_FUNCTION
from bot.chain.settings import SignerSettings
from bot.config import ChainSettings, PaperFunding, PaperSettings, RiskSettings
from bot.engine.executor import Executor
from bot.engine.recorder import JournalRecorder
from bot.engine.reference import build_reference
from bot.engine.swap_bounds import SwapLimits
from bot.journal import Journal
from bot.paper.core.modules import order_function
from bot.paper.world import PaperWorld, build_world
from harness.paper_signing import address_of, fixed_key
from tests.support.json_strategies import RawJson, dumps
from tests.support.loopback import serve

BodyEdit = Callable[[Any], Any]

KEY = fixed_key("hostile-provider")
WALLET = address_of(KEY)
THIEF = "0x" + "7e" * 32
API_KEY = "paper-key-hostile-00001"


class TamperingProxy:
    """Passes every request through; rewrites the JSON answers of the paths in `edits`."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.edits: dict[str, BodyEdit] = {}
        self.seen: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.seen.append(f"{scope['method']} {scope['path']}")
        edit = self.edits.get(scope["path"])
        if edit is None:
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def rewrite(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            data = b"".join(chunks)
            if start["status"] == 200:
                data = dumps(edit(json.loads(data, parse_float=RawJson))).encode()
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(data)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": data})

        await self.app(scope, receive, rewrite)


@dataclass
class HostileRig:
    """The bot's parts against a lying provider; the paper world's ledger is the truth."""

    world: PaperWorld
    proxy: TamperingProxy
    journal: Journal
    executor: Executor
    client: PanoraClient
    node: NodeClient
    start_balances: dict[str, dict[str, int]] = field(default_factory=dict)

    def balances(self, account: str) -> dict[str, int]:
        """An account's balances in the paper ledger (base units, zero balances left out)."""
        return {t: v for t, v in self.world.market.ledger.balances(account).items() if v}

    def snapshot(self, *accounts: str) -> None:
        """Remember balances to compare with later."""
        self.start_balances = {a: self.balances(a) for a in accounts}

    def units(self, symbol: str) -> int:
        """10 ** decimals of a token."""
        return int(10 ** self.world.market.tokens.find(symbol).decimals)


@asynccontextmanager
async def hostile_rig(
    tmp_path: Path,
    *,
    risk: RiskSettings | None = None,
    funding: dict[str, Decimal] | None = None,
    also_allowed: tuple[str, ...] = (),
) -> AsyncIterator[HostileRig]:
    """A served paper world behind a `TamperingProxy`, and the bot's real parts before it.

    The signer's policy comes from `[chain]` (the router, the paper order modules and
    `also_allowed`) and `risk`; the wallet holds `funding` (default 100 APT, 1000 USDC).
    """
    amounts = funding or {"APT": Decimal(100), "USDC": Decimal(1000)}
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=[API_KEY],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=[PaperFunding(wallet=WALLET, token=t, amount=a) for t, a in amounts.items()],
        )
    )
    proxy = TamperingProxy(world.app)
    orders = [order_function(k, f) for k in ("dca", "limit") for f in ("deposit", "withdraw")]
    chain = ChainSettings(
        chain_id=4, allowed_functions=[str(ROUTER_FUNCTION), *orders, *also_allowed]
    )
    risk = risk or RiskSettings(max_slippage_percent=Decimal(1))
    policy = SignerPolicy.from_settings(chain, risk, world.market.tokens.book)
    with serve(proxy) as url:
        client = PanoraClient(
            base_url=url,
            api_key=SecretStr(API_KEY),
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            max_attempts=1,
        )
        node = NodeClient(url + "/v1", expected_chain_id=4)
        journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
        signer = Signer(
            node,
            KEY,
            policy,
            JournalRecorder(journal, world.market.clock),
            settings=SignerSettings(poll_interval_seconds=0.01, first_poll_delay_seconds=0),
        )
        executor = Executor(
            journal=journal,
            client=client,
            clock=world.market.clock,
            wallet=WALLET,
            tokens=world.market.tokens.book,
            signer=signer,
            reference=build_reference(risk, world.market.tokens.book, client, node),
            limits=SwapLimits(risk.max_reference_deviation_percent, risk.max_slippage_percent),
        )
        try:
            yield HostileRig(world, proxy, journal, executor, client, node)
        finally:
            await client.aclose()
            await node.aclose()
            journal.close()
