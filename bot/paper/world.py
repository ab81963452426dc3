"""Assemble a paper world from the `[paper]` settings: clock, market, faucet, faces.

Used by `bot paper serve` (over loopback), by the bot's in-process paper mode
(`httpx.ASGITransport`, no sockets) and by tests. A snapshot file keeps the world across
restarts of `bot paper serve`.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bot.aptos.address import Address
from bot.clock import AcceleratedClock, Clock, RealClock, SteppedClock, parse_utc
from bot.config import PaperSettings
from bot.money import to_base_units
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.faces.provider_api import ProviderApi
from bot.paper.service import PaperService

__all__ = ["PaperWorld", "SnapshotError", "build_world", "make_clock"]

_SNAPSHOT_MAGIC: Final = b"bot-paper-world/1\n"


class SnapshotError(Exception):
    """A snapshot file that cannot be read back."""


def make_clock(settings: PaperSettings) -> Clock:
    """The clock the settings ask for: real, accelerated from `start`, or stepped."""
    if settings.clock == "real":
        return RealClock()
    if settings.clock == "accelerated":
        return AcceleratedClock(parse_utc(settings.start), settings.speed)
    return SteppedClock(parse_utc(settings.start))


@dataclass
class PaperWorld:
    """A running paper world: the core, its service and its HTTP face(s)."""

    settings: PaperSettings
    market: PaperMarket
    service: PaperService
    provider_api: ProviderApi

    def save(self, path: Path | None = None) -> Path:
        """Write a snapshot of the market (not the clock) to `path` or the configured file."""
        target = path or self.settings.snapshot_file
        if target is None:
            raise SnapshotError("no snapshot file configured ([paper].snapshot_file)")
        clock = self.market.clock
        try:
            self.market.clock = RealClock()  # clocks are re-made on load, not stored
            payload = _SNAPSHOT_MAGIC + pickle.dumps(self.market, protocol=5)
        finally:
            self.market.clock = clock
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_bytes(payload)
        tmp.replace(target)
        return target


def _load_market(path: Path, clock: Clock) -> PaperMarket:
    data = path.read_bytes()
    if not data.startswith(_SNAPSHOT_MAGIC):
        raise SnapshotError(f"{path} is not a paper-world snapshot")
    try:
        # Our own file, written by `PaperWorld.save`: never load one from elsewhere.
        market = pickle.loads(data[len(_SNAPSHOT_MAGIC) :])  # noqa: S301
    except Exception as exc:
        raise SnapshotError(f"{path}: cannot read snapshot ({type(exc).__name__})") from None
    if not isinstance(market, PaperMarket):
        raise SnapshotError(f"{path} does not hold a paper market")
    market.clock = clock
    return market


def build_world(
    settings: PaperSettings,
    *,
    clock: Clock | None = None,
    prefix: str = "panora",
    escrow_style: str | None = None,
) -> PaperWorld:
    """Build (or restore from the snapshot file) a paper world and fund configured wallets."""
    clock = clock or make_clock(settings)
    snapshot = settings.snapshot_file
    if snapshot is not None and snapshot.exists():
        market = _load_market(snapshot, clock)
    else:
        market = PaperMarket(MarketConfig.from_settings(settings), clock)
        for funding in settings.funding:
            token = market.tokens.find(funding.token)
            wallet = str(Address.parse(funding.wallet))
            market.fund(wallet, token, to_base_units(funding.amount, token.decimals))
    service = PaperService(
        market,
        prefix=prefix,
        order_amount_units=settings.order_amount_units,
        escrow_style="onchain" if escrow_style == "onchain" else "escrow",
    )
    api = ProviderApi(service, settings, sync=market.sync)
    return PaperWorld(settings, market, service, api)
