"""Wiring: the client, the node, the journal, the signer and the executor for one config.

In live mode the client and the node are the real services of `[api]` and `[chain]`. In
paper mode they are one paper world's two faces: a served one (`[paper].url`) or one
embedded in this process, shared by both clients so a swap quoted by one is executed by
the other. The signer exists when a key is configured, and only for the chain id the
config names (`[chain].chain_id` live, `[paper.node].chain_id` paper).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.api.tokens import fetch_token_book
from bot.aptos.tokens import TokenBook, TokenLookupError
from bot.chain import NodeClient, Signer, SignerPolicy, account_address, load_private_key
from bot.chain.outcome import InMemoryRecorder
from bot.chain.settings import SignerSettings
from bot.cli.common import EXIT_USAGE, fail, open_journal
from bot.clock import Clock, RealClock
from bot.config import ChainSettings, Settings
from bot.engine.executor import Executor
from bot.engine.reference import build_reference
from bot.engine.swap_bounds import SwapLimits
from bot.journal import Journal
from bot.paper.core.modules import order_function
from bot.paper.world import PaperWorld, build_world
from bot.secrets import resolve_api_key

__all__ = ["EMBEDDED_URL", "Connection", "Runtime", "chain_settings", "connect"]

EMBEDDED_URL = "http://paper.embedded"


def chain_settings(settings: Settings) -> ChainSettings:
    """`[chain]` as this mode means it: the paper node's URL and chain id in paper mode."""
    if settings.mode == "live":
        return settings.chain
    base = settings.paper.url.rstrip("/") if settings.paper.url else EMBEDDED_URL
    functions = [
        *settings.chain.allowed_functions,
        *(order_function(k, f) for k in ("dca", "limit") for f in ("deposit", "withdraw")),
    ]
    return settings.chain.model_copy(
        update={
            "node_url": base + "/v1",
            "chain_id": settings.paper.node.chain_id,
            "allowed_functions": list(dict.fromkeys(functions)),
        }
    )


@dataclass
class Connection:
    """The provider client and the node client of one config (and the paper world, if embedded)."""

    client: PanoraClient
    node: NodeClient
    clock: Clock
    world: PaperWorld | None


def connect(settings: Settings) -> Connection:
    """Clients for `settings`: live services, a served paper world, or an embedded one.

    Raises:
        SecretFileError: the API key file is missing or too open.
    """
    key = resolve_api_key(settings.api.api_key, settings.api.api_key_file)
    transport: httpx.AsyncBaseTransport | None = None
    world = None
    clock: Clock = RealClock()
    api = settings.api
    if settings.mode == "paper":
        if key is None and settings.paper.api_keys:
            key = SecretStr(settings.paper.api_keys[0])
        # The paper world is ours: pace the client by its limit, not the real provider's.
        api = api.model_copy(
            update={
                "base_url": settings.paper.url or EMBEDDED_URL,
                "rate_limit_per_second": settings.paper.rate_limit_per_second,
                "rate_limit_burst": settings.paper.rate_limit_burst,
            }
        )
        if not settings.paper.url:
            world = build_world(settings.paper, prefix=api.provider_prefix)
            transport = httpx.ASGITransport(app=world.app)
            clock = world.market.clock
    client = PanoraClient.from_settings(api, api_key=key, transport=transport)
    node = NodeClient.from_settings(chain_settings(settings), transport=transport)
    return Connection(client, node, clock, world)


@dataclass
class Runtime:
    """Everything a verb (or the daemon) needs, opened together and closed together."""

    settings: Settings
    clock: Clock
    client: PanoraClient
    node: NodeClient
    journal: Journal
    tokens: TokenBook
    wallet: str | None
    signer: Signer | None
    executor: Executor | None
    world: PaperWorld | None = None

    @classmethod
    async def open(
        cls, settings: Settings, *, readonly: bool = False, with_signer: bool = True
    ) -> Runtime:
        """Open the runtime of `settings` (journal read-only when asked).

        The journal first: one that cannot be used ends the verb with one line, exit 2
        (`open_journal`), before any client is made.
        """
        journal = open_journal(settings.journal.url, readonly=readonly)
        connection = connect(settings)
        client, node, clock, world = (
            connection.client,
            connection.node,
            connection.clock,
            connection.world,
        )
        chain = chain_settings(settings)
        tokens = world.market.tokens.book if world else await fetch_token_book(client)
        signer = None
        wallet = settings.wallet.address
        if settings.wallet.key_file or settings.wallet.private_key:
            private = load_private_key(settings.wallet.key_file, settings.wallet.private_key)
            wallet = str(account_address(private))  # the key's address is public
            if with_signer:
                policy = SignerPolicy.from_settings(chain, settings.risk, tokens)
                signer = Signer(
                    node,
                    private,
                    policy,
                    InMemoryRecorder(),
                    settings=SignerSettings.from_chain(chain),
                )
        executor = None
        if wallet is not None and not readonly:
            try:
                reference = build_reference(settings.risk, tokens, client, node)
            except TokenLookupError as exc:
                fail(f"[risk].pyth_feeds: {exc}", EXIT_USAGE)
            executor = Executor(
                journal=journal,
                client=client,
                clock=clock,
                wallet=wallet,
                tokens=tokens,
                signer=signer,
                reference=reference,
                limits=SwapLimits(
                    settings.risk.max_reference_deviation_percent,
                    settings.risk.max_slippage_percent,
                ),
            )
        return cls(settings, clock, client, node, journal, tokens, wallet, signer, executor, world)

    async def aclose(self) -> None:
        """Close the clients and the journal."""
        await self.client.aclose()
        await self.node.aclose()
        self.journal.close()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
