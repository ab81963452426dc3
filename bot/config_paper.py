"""`[paper]`: the paper world's settings (market, faults, node, funding, clock).

Part of the configuration (`bot.config` re-exports every name here); kept apart because
the paper world has many knobs and the rest of the config should read on one screen.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Final, Literal

from pydantic import Field, field_validator

from bot.config_base import Section as _Section

__all__ = [
    "STEPPED_START",
    "PaperFaultSettings",
    "PaperFunding",
    "PaperNodeSettings",
    "PaperSettings",
    "paper_start",
]

STEPPED_START: Final = "2026-01-01T00:00:00Z"


class PaperFaultSettings(_Section):
    """Faults the paper world injects, per request, seeded (all off by default)."""

    seed: int = 7
    latency_ms: int = Field(default=0, ge=0)
    rate_limited: Decimal = Field(default=Decimal(0), ge=0, le=1)
    server_error: Decimal = Field(default=Decimal(0), ge=0, le=1)
    timeout: Decimal = Field(default=Decimal(0), ge=0, le=1)
    timeout_seconds: float = Field(default=30.0, gt=0)
    drop_after_apply: Decimal = Field(default=Decimal(0), ge=0, le=1)
    malformed_body: Decimal = Field(default=Decimal(0), ge=0, le=1)
    endpoints: list[str] = Field(default_factory=list)
    """Paths the faults apply to (empty: every endpoint)."""


class PaperNodeSettings(_Section):
    """`[paper.node]`: the simulated Aptos node and its seeded faults (off by default)."""

    chain_id: int = Field(default=4, ge=0, le=255)
    gas_unit_price: int = Field(default=100, ge=1)
    commit_delay_seconds: float = Field(default=0.0, ge=0)
    mempool_capacity: int = Field(default=1000, ge=1)
    vm_error_sequence: bool = False
    """Report a too-old sequence number in the `vm_error` form some nodes use."""
    seed: int = 11
    mempool_full: float = Field(default=0.0, ge=0, le=1)
    lost: float = Field(default=0.0, ge=0, le=1)
    slow_commit: float = Field(default=0.0, ge=0, le=1)
    slow_commit_seconds: float = Field(default=30.0, ge=0)
    consume_sequence: float = Field(default=0.0, ge=0, le=1)
    lose_first: int = Field(default=0, ge=0)
    """Tests: lose the first N accepted transactions (202, never committed)."""
    drop_first_answers: int = Field(default=0, ge=0)
    """Tests: close the connection instead of answering the first N accepted submissions."""
    foreign_first: int = Field(default=0, ge=0)
    """Tests: another signer of the wallet takes the number of the first N accepted ones."""
    by_hash_404: float = Field(default=0.0, ge=0, le=1)
    """Read fault: `by_hash` answers 404 for a transaction the node holds (pruned, balanced)."""
    stale_account: float = Field(default=0.0, ge=0, le=1)
    """Read fault: an account read or listing answers from an older ledger state."""
    stale_seconds: float = Field(default=30.0, ge=0)
    """How much ledger time a stale read lags."""

    @field_validator("chain_id")
    @classmethod
    def _not_a_public_network(cls, value: int) -> int:
        if value in (1, 2):
            raise ValueError("the paper chain must not use mainnet (1) or testnet (2) ids")
        return value


class PaperFunding(_Section):
    """A wallet funded by the paper faucet at start-up."""

    wallet: str
    token: str
    amount: Decimal = Field(gt=0)


class PaperSettings(_Section):
    """`[paper]`: the simulated market (and, from #5, the simulated node)."""

    url: str = ""
    """A served paper world (`bot paper serve`); empty: embedded in this process."""
    seed: int = 42
    start: str | None = None
    """Where accelerated and stepped clocks begin: an ISO-8601 time or `now`. Unset: `now`
    for accelerated and real clocks (live-like), 2026-01-01 for stepped ones (reproducible)."""
    clock: Literal["real", "accelerated", "stepped"] = "accelerated"
    speed: float = Field(default=60.0, gt=0)
    api_keys: list[str] = Field(default_factory=lambda: ["paper-demo-key"])
    rate_limit_per_second: float = Field(default=50.0, gt=0)
    rate_limit_burst: int = Field(default=50, ge=1)
    price_step_seconds: int = Field(default=60, ge=1)
    prices_file: Path | None = None
    start_prices: dict[str, Decimal] = Field(default_factory=dict)
    pool_depth_usd: Decimal = Field(default=Decimal("2000000"), gt=0)
    pool_fee_bps: int = Field(default=25, ge=0, lt=10_000)
    platform_fee_bps: int = Field(default=10, ge=0, lt=10_000)
    keeper_fee_bps: int = Field(default=5, ge=0, lt=10_000)
    order_amount_units: Literal["human", "base"] = "human"
    order_style: Literal["onchain", "escrow"] = "onchain"
    """`onchain`: createOrder/cancelOrder answer with a txData the owner signs (deposit,
    withdraw); `escrow`: funds move at once (simpler, for tests)."""
    pending_grace_seconds: int = Field(default=600, ge=1)
    """An on-chain-style order whose deposit has not landed by then is dropped."""
    test_pay_to: str | None = None
    """Test only: swap txData pays this address instead of the caller (a hostile route)."""
    snapshot_file: Path | None = None
    """Where the world is saved (`bot paper serve`; an embedded world: unset means beside
    the SQLite journal, `<journal>.paper-world.pickle`)."""
    snapshot_seconds: float = Field(default=10.0, gt=0)
    """A daemon with an embedded world also saves it this often (real seconds): a kill -9
    loses at most this much of the world."""
    funding: list[PaperFunding] = Field(default_factory=list)
    faults: PaperFaultSettings = Field(default_factory=PaperFaultSettings)
    node: PaperNodeSettings = Field(default_factory=PaperNodeSettings)

    @field_validator("start")
    @classmethod
    def _aware_time(cls, value: str | None) -> str | None:
        from bot.clock import parse_utc

        if value is None:
            return None
        if value.strip().lower() == "now":
            return "now"
        try:
            parse_utc(value)
        except ValueError:
            raise ValueError("must be an ISO-8601 time, e.g. 2026-01-01T00:00:00Z") from None
        return value


def paper_start(settings: PaperSettings) -> datetime:
    """The paper world's start time: the configured one, or the current time for `now`."""
    from bot.clock import parse_utc

    start = settings.start
    if start is None:
        start = "now" if settings.clock != "stepped" else STEPPED_START
    if start == "now":
        return datetime.now(UTC)
    return parse_utc(start)
