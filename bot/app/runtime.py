"""Wiring: the client, the node, the journal, the signer and the executor for one config.

In live mode the client and the node are the real services of `[api]` and `[chain]`. In
paper mode they are one paper world's two faces: a served one (`[paper].url`) or one
embedded in this process, shared by both clients so a swap quoted by one is executed by
the other. An embedded world lives as long as its journal: it is restored from its
snapshot (`embedded_snapshot`: `[paper].snapshot_file`, else a file beside the SQLite
journal), its clock never starts behind the journal's latest record and it never issues an
order id the journal already holds: the journal's times keep going forward and its order
ids name one order each. The signer exists when a key is configured, and only for the
chain id the config names (`[chain].chain_id` live, `[paper.node].chain_id` paper);
paper mode with no wallet configured uses the demo's key (`bot.app.paper_key`).

A problem the user must fix (a journal that cannot be used, an unreadable key or paper
snapshot, a `[risk]` section naming an unknown token) is raised as `SetupError`: the
command line prints it as one line and exits 2.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import httpx
from aptos_sdk import ed25519
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.api.recording import recording_transport
from bot.api.tokens import fetch_token_book
from bot.app.errors import SetupError
from bot.app.opening import open_journal
from bot.app.paper_key import paper_key_file
from bot.aptos.tokens import TokenBook, TokenLookupError
from bot.chain import (
    ConfigurationError,
    KeyFileError,
    NodeClient,
    Signer,
    SignerPolicy,
    account_address,
    load_private_key,
)
from bot.chain.settings import SignerSettings
from bot.clock import Clock, RealClock
from bot.config import ChainSettings, Settings
from bot.engine.executor import Executor
from bot.engine.recorder import JournalRecorder
from bot.engine.reference import build_reference
from bot.engine.swap_bounds import SwapLimits
from bot.journal import Journal
from bot.journal.db import sqlite_file
from bot.logging import get_logger
from bot.paper.core.modules import order_function
from bot.paper.world import PaperWorld, SnapshotError, build_world
from bot.secrets import resolve_api_key

__all__ = [
    "EMBEDDED_URL",
    "LOST_REASON",
    "Connection",
    "Runtime",
    "chain_settings",
    "configured_wallet",
    "connect",
    "embedded_snapshot",
    "embedded_world",
]

EMBEDDED_URL = "http://paper.embedded"
SNAPSHOT_SUFFIX: Final = ".paper-world.pickle"
"""The embedded world's default snapshot: `data/journal.db` → `data/journal.paper-world.pickle`."""
LOST_REASON: Final = (
    "unknown to the embedded paper world (its snapshot was deleted or replaced, or saved "
    "before the order was made)"
)
"""Why an order of the journal that the embedded world does not know is closed (`lost`)."""


def embedded_snapshot(settings: Settings) -> Path | None:
    """Where an embedded paper world is kept: `[paper].snapshot_file`, else beside the journal.

    None outside embedded paper mode, and for a journal that is no file (in memory): then
    the world lives as long as the process, like the journal.
    """
    if settings.mode != "paper" or settings.paper.url:
        return None
    if settings.paper.snapshot_file is not None:
        return settings.paper.snapshot_file
    journal_file = sqlite_file(settings.journal.url)
    if journal_file is None:
        return None
    return journal_file.with_name(journal_file.stem + SNAPSHOT_SUFFIX)


def _world_bounds(journal: Journal) -> tuple[datetime | None, set[str]]:
    """What an embedded world must respect of its journal: the latest time, the order ids.

    The latest time a record holds (orders last seen, intents last changed): the world's
    clock starts no earlier, or a world made anew (its snapshot gone) or restored from an
    older snapshot (a kill -9 between two saves) would put the journal's next records
    before its last ones, which the journal sets aside as stale. The order ids: the world
    never issues one again (its ids are deterministic).
    """
    orders = journal.orders()
    times = [o.last_seen_at for o in orders] + [i.updated_at for i in journal.intents()]
    return max(times, default=None), {o.order_id for o in orders}


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


def embedded_world(settings: Settings, *, journal: Journal | None = None) -> PaperWorld:
    """The embedded paper world: restored from `embedded_snapshot(settings)`, else new.

    Reads the snapshot, never writes it (saving is `Runtime.save_world`'s, for the process
    that trades), so `bot doctor` can look at the daemon's world. Kept in step with
    `journal` when given (its clock, its order ids: `_world_bounds`).

    Raises:
        SnapshotError: the snapshot file exists but cannot be read back.
    """
    paper = settings.paper.model_copy(update={"snapshot_file": embedded_snapshot(settings)})
    latest, taken = _world_bounds(journal) if journal is not None else (None, set())
    return build_world(
        paper, prefix=settings.api.provider_prefix, not_before=latest, taken_order_ids=taken
    )


def connect(
    settings: Settings, *, journal: Journal | None = None, embedded: PaperWorld | None = None
) -> Connection:
    """Clients for `settings`: live services, a served paper world, or an embedded one.

    An embedded world is `embedded` when given, else `embedded_world(settings, journal=…)`.
    A snapshot that cannot be read is never replaced silently.

    Raises:
        SecretFileError: the API key file is missing or too open.
        SetupError: the embedded world's snapshot cannot be read.
    """
    live = settings.mode == "live"  # live: the SDK's public key when none is configured
    key = resolve_api_key(settings.api.api_key, settings.api.api_key_file, live=live)
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
            try:
                world = embedded or embedded_world(settings, journal=journal)
            except SnapshotError as exc:
                raise SetupError(
                    f"paper world: {exc}; move the file away to start a new paper world "
                    "(the journal's open paper orders are then closed as lost)"
                ) from exc
            transport = httpx.ASGITransport(app=world.app)
            clock = world.market.clock
    recorded = recording_transport(
        api,
        transport,
        now=clock.now,
        mode=settings.mode,
        wallets=_own_wallets(settings),
        api_key=key,
    )
    client = PanoraClient.from_settings(api, api_key=key, transport=recorded)
    node = NodeClient.from_settings(chain_settings(settings), transport=transport)
    return Connection(client, node, clock, world)


def _own_wallets(settings: Settings) -> list[str]:
    """The wallet addresses a recording of answers hides (`[api].record_answers_dir`)."""
    if settings.api.record_answers_dir is None:
        return []
    wallets = [settings.wallet.address] if settings.wallet.address else []
    if settings.wallet.key_file or settings.wallet.private_key:
        with contextlib.suppress(KeyFileError):  # the verbs that need the key say why
            key = load_private_key(settings.wallet.key_file, settings.wallet.private_key)
            wallets.append(str(account_address(key)))
    return wallets


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

        The journal first: one that cannot be used stops here (`open_journal`), before any
        client is made.

        Raises:
            SetupError: the journal, the key, the paper snapshot or `[risk]` is unusable.
        """
        journal = open_journal(settings.journal.url, readonly=readonly)
        connection = connect(settings, journal=journal)
        client, node, clock, world = (
            connection.client,
            connection.node,
            connection.clock,
            connection.world,
        )
        chain = chain_settings(settings)
        tokens = world.market.tokens.book if world else await fetch_token_book(client)
        signer = None
        private = _configured_key(settings, create=not readonly)
        wallet = _wallet_of(settings, private)
        if wallet is not None:
            journal.bind_wallet(wallet)  # its rows only, its writes stamped (docs/journal.md)
        if private is not None and with_signer:
            try:
                policy = SignerPolicy.from_settings(chain, settings.risk, tokens)
            except ConfigurationError as exc:  # e.g. a [risk] cap on an unknown token
                raise SetupError(str(exc)) from exc
            signer = Signer(
                node,
                private,
                policy,
                JournalRecorder(journal, clock),
                settings=SignerSettings.from_chain(chain),
            )
        executor = None
        if wallet is not None and not readonly:
            try:
                reference = build_reference(settings.risk, tokens, client, node)
            except TokenLookupError as exc:
                raise SetupError(f"[risk].pyth_feeds: {exc}") from exc
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

    def save_world(self) -> Path | None:
        """Save the embedded paper world to its snapshot file (where it has one); the path.

        For the process that trades the wallet (it holds the wallet lock): the daemon at
        stop and every `[paper].snapshot_seconds`, `bot cancel` when it cancels here. Never
        a dry run, which may run beside the daemon with a world of its own.
        """
        if self.world is None or self.world.settings.snapshot_file is None:
            return None
        return self.world.save()

    async def keep_world_saved(self, seconds: float) -> None:
        """Save the embedded world every `seconds` real seconds (until cancelled).

        Synchronous, between two steps of the event loop: the world is never pickled
        half-changed, and no save outlives the task to land after the final one. A large
        world is saved less often, so saving takes at most 5% of the loop's time. A failed
        save is logged; the next one tries again.
        """
        pause = seconds
        while True:
            await asyncio.sleep(pause)
            began = time.monotonic()
            try:
                self.save_world()
            except Exception as exc:  # a full disk must not end the daemon
                error = f"{type(exc).__name__}: {exc}"
                get_logger("paper").error("paper.snapshot_failed", error=error)
            pause = max(seconds, 20 * (time.monotonic() - began))

    async def aclose(self) -> None:
        """Close the clients and the journal."""
        await self.client.aclose()
        await self.node.aclose()
        self.journal.close()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def _configured_key(settings: Settings, *, create: bool = True) -> ed25519.PrivateKey | None:
    """The wallet's key, or None when none is configured.

    Paper mode with no wallet configured uses the demo's key (`paper_key_file`; made
    when `create`).

    Raises:
        SetupError: a configured key cannot be read (missing, too open, malformed).
    """
    key_file = settings.wallet.key_file or paper_key_file(settings, create=create)
    if not (key_file or settings.wallet.private_key):
        return None
    try:
        return load_private_key(key_file, settings.wallet.private_key)
    except KeyFileError as exc:  # missing, too open, malformed: fix the config
        raise SetupError(str(exc)) from exc


def _wallet_of(settings: Settings, key: ed25519.PrivateKey | None) -> str | None:
    """The key's (public) address, else `[wallet].address`."""
    return str(account_address(key)) if key is not None else settings.wallet.address


def configured_wallet(settings: Settings) -> str | None:
    """The wallet address the config names, or None.

    Its key's (public) address, else `[wallet].address`; in paper mode with neither, the
    demo key's when it exists (`paper_key_file`).

    Raises:
        SetupError: a configured key cannot be read.
    """
    return _wallet_of(settings, _configured_key(settings, create=False))
