"""Assemble a paper world from the `[paper]` settings: clock, market, faucet, faces.

Used by `bot paper serve` (over loopback), by the bot's in-process paper mode
(`httpx.ASGITransport`, no sockets) and by tests. A snapshot file keeps the world across
restarts of `bot paper serve` and of a daemon whose world is embedded (by default beside
its journal, `bot.app.runtime.embedded_snapshot`).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final

from bot.aptos.address import Address
from bot.clock import AcceleratedClock, Clock, RealClock, SteppedClock
from bot.config import PaperSettings, paper_start
from bot.money import to_base_units
from bot.paper.core.chain import NodeSettings, PaperChain
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.faces.asgi import Receive, Scope, Send
from bot.paper.faces.node_api import NodeApi
from bot.paper.faces.provider_api import ProviderApi
from bot.paper.service import PaperService

__all__ = ["PaperWorld", "SnapshotError", "build_world", "make_clock", "write_snapshot"]

_SNAPSHOT_MAGIC: Final = b"bot-paper-world/1\n"


class SnapshotError(Exception):
    """A snapshot file that cannot be read back."""


def make_clock(
    settings: PaperSettings,
    *,
    resume_from: datetime | None = None,
    not_before: datetime | None = None,
) -> Clock:
    """The clock the settings ask for: real, accelerated from `start`, or stepped.

    `resume_from` (a restored market's time): accelerated and stepped clocks continue from
    there, so a restored world neither stalls nor jumps; only an explicit later `start`
    moves it forward. `not_before` (the latest time a journal holds): they never start
    earlier, so what the journal records of this world keeps going forward in time.
    """
    if settings.clock == "real":
        return RealClock()
    start = paper_start(settings)
    if resume_from is not None:
        explicit = settings.start not in (None, "now")
        start = max(start, resume_from) if explicit else resume_from
    if not_before is not None:
        start = max(start, not_before)
    if settings.clock == "accelerated":
        return AcceleratedClock(start, settings.speed)
    return SteppedClock(start)


@dataclass
class PaperWorld:
    """A running paper world: the core, its service and its HTTP face(s)."""

    settings: PaperSettings
    market: PaperMarket
    service: PaperService
    provider_api: ProviderApi
    chain: PaperChain
    node_api: NodeApi
    app: CombinedApp
    """Both faces in one app: what `bot paper serve` and in-process transports use."""

    def save(self, path: Path | None = None) -> Path:
        """Write a snapshot of the market and the chain (not the clock) to `path`.

        Default: `[paper].snapshot_file`. `dump()` then `write_snapshot`.
        """
        target = self.snapshot_path(path)
        write_snapshot(target, self.dump())
        return target

    def snapshot_path(self, path: Path | None = None) -> Path:
        """`path`, else `[paper].snapshot_file` (SnapshotError when neither is set)."""
        target = path or self.settings.snapshot_file
        if target is None:
            raise SnapshotError("no snapshot file configured ([paper].snapshot_file)")
        return target

    def dump(self) -> bytes:
        """The snapshot's bytes: the market and the chain as they are now (not the clock).

        Synchronous: call it between two steps of the event loop that changes the world.
        """
        clock = self.market.clock
        try:
            self.market.clock = RealClock()  # clocks are re-made on load, not stored
            return _SNAPSHOT_MAGIC + pickle.dumps((self.market, self.chain), protocol=5)
        finally:
            self.market.clock = clock


def write_snapshot(target: Path, payload: bytes) -> None:
    """Write `payload` to a temporary file of this process, flushed, then rename it.

    A reader (or a kill -9 at any moment) meets the previous snapshot or this one, never
    half of one. Touches no world: it may run in a worker thread.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as file:
        file.write(payload)
        file.flush()
        os.fsync(file.fileno())
    tmp.replace(target)


def _load(path: Path) -> tuple[PaperMarket, PaperChain]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot ({exc.strerror})") from None
    if not data.startswith(_SNAPSHOT_MAGIC):
        raise SnapshotError(f"{path} is not a paper-world snapshot")
    try:
        # Our own file, written by `PaperWorld.save`: never load one from elsewhere.
        state = pickle.loads(data[len(_SNAPSHOT_MAGIC) :])  # noqa: S301
    except Exception as exc:
        raise SnapshotError(f"{path}: cannot read snapshot ({type(exc).__name__})") from None
    if (
        not isinstance(state, tuple)
        or len(state) != 2
        or not isinstance(state[0], PaperMarket)
        or not isinstance(state[1], PaperChain)
    ):
        raise SnapshotError(f"{path} does not hold a paper world")
    return state[0], state[1]


def build_world(
    settings: PaperSettings,
    *,
    clock: Clock | None = None,
    prefix: str = "panora",
    escrow_style: str | None = None,
    not_before: datetime | None = None,
    taken_order_ids: Iterable[str] = (),
) -> PaperWorld:
    """Build (or restore from the snapshot file) a paper world and fund configured wallets.

    A restored world is funded as it was saved (`funding` applies to a new world only).
    A world that outlives its runs keeps one story with its journal: `not_before` (the
    journal's latest time), its clock starts no earlier (see `make_clock`);
    `taken_order_ids` (the journal's orders), it never issues one of them again (order ids
    are deterministic: a new world, or one restored from a snapshot older than the
    journal, would issue them anew).

    Raises:
        SnapshotError: the snapshot file exists but cannot be read back.
    """
    snapshot = settings.snapshot_file
    chain: PaperChain | None = None
    if snapshot is not None and snapshot.exists():
        market, chain = _load(snapshot)
        market.clock = clock or make_clock(settings, resume_from=market.now, not_before=not_before)
    else:
        market = PaperMarket(
            MarketConfig.from_settings(settings),
            clock or make_clock(settings, not_before=not_before),
        )
        for funding in settings.funding:
            token = market.tokens.find(funding.token)
            wallet = str(Address.parse(funding.wallet))
            market.fund(wallet, token, to_base_units(funding.amount, token.decimals))
    taken = list(taken_order_ids)
    for book in (market.dca, market.limit):
        book.ids.reserve(taken)
    style = escrow_style or settings.order_style
    service = PaperService(
        market,
        prefix=prefix,
        order_amount_units=settings.order_amount_units,
        escrow_style="onchain" if style == "onchain" else "escrow",
        pending_grace=timedelta(seconds=settings.pending_grace_seconds),
        pay_to=settings.test_pay_to,
    )
    chain = chain or PaperChain(market, _node_settings(settings))
    api = ProviderApi(service, settings, sync=market.sync)
    node = NodeApi(chain, sync=market.sync)
    return PaperWorld(settings, market, service, api, chain, node, CombinedApp(api, node))


def _node_settings(settings: PaperSettings) -> NodeSettings:
    node = settings.node
    return NodeSettings(
        chain_id=node.chain_id,
        gas_unit_price=node.gas_unit_price,
        commit_delay_seconds=node.commit_delay_seconds,
        mempool_capacity=node.mempool_capacity,
        vm_error_sequence=node.vm_error_sequence,
        seed=node.seed,
        mempool_full=node.mempool_full,
        lost=node.lost,
        slow_commit=node.slow_commit,
        slow_commit_seconds=node.slow_commit_seconds,
        consume_sequence=node.consume_sequence,
        lose_first=node.lose_first,
        drop_first_answers=node.drop_first_answers,
        foreign_first=node.foreign_first,
        by_hash_404=node.by_hash_404,
        stale_account=node.stale_account,
        stale_seconds=node.stale_seconds,
    )


class CombinedApp:
    """One ASGI app for both faces: node paths under `/v1`, the provider's everywhere else."""

    def __init__(self, provider: ProviderApi, node: NodeApi) -> None:
        self.provider = provider
        self.node = node

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Dispatch by path."""
        path = str(scope.get("path", ""))
        if scope["type"] == "http" and (path == "/v1" or path.startswith("/v1/")):
            await self.node(scope, receive, send)
        else:
            await self.provider(scope, receive, send)
