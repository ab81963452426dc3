"""`PaperMarket`: the paper world's core in one object, with no HTTP in it.

It owns the token registry, the price book, the pools, the ledger (wallets, escrows, fee
accounts) and the DCA and limit order engines, all on one injected clock. Time moves only
through `advance_to`, which processes due events in time order — DCA slices, expiries and
the price points at which a live limit order becomes fillable — so a driver can jump
straight from event to event (`next_event_time`) and get the same result as stepping
minute by minute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Final, Literal

from bot.aptos.tokens import Token
from bot.clock import Clock, parse_utc
from bot.config import PaperSettings, paper_start
from bot.paper.core.dca import DCA_SLICE, DcaEngine
from bot.paper.core.events import EventQueue
from bot.paper.core.ledger import Ledger
from bot.paper.core.limit import LimitEngine
from bot.paper.core.orders import OrderIds
from bot.paper.core.pools import PoolBook, PoolSettings
from bot.paper.core.prices import PriceBook, PricePath, RandomWalkSpec, default_spec
from bot.paper.core.registry import PaperTokens, is_native_apt
from bot.paper.core.series import load_series
from bot.paper.core.swaps import FeeSettings, SwapTerms, quote_swap

__all__ = ["DEFAULT_HORIZON", "MarketConfig", "PaperMarket"]

PENDING_DROP: Final = "pending_drop"
DEFAULT_HORIZON: Final = timedelta(days=7)
"""How far `next_event_time()` looks when no bound is given (drivers pass their own)."""
BACKGROUND_STEP_SECONDS: Final = 3600
"""Price step of tokens nobody configured: walks are generated lazily, so a coarse grid
keeps listing all 209 tokens cheap after weeks of simulated time."""


@dataclass(frozen=True)
class SpecFactory:
    """Walks of unconfigured tokens: APT and USD stables on the configured step, others hourly.

    A class, not a closure, so a market pickles (snapshots).
    """

    step_seconds: int

    def __call__(self, token: Token, seed: int) -> RandomWalkSpec:
        """The default walk of `token`, on its grid."""
        spec = default_spec(token, seed)
        main = is_native_apt(token) or "USD" in token.symbol.upper()
        step = self.step_seconds if main else max(self.step_seconds, BACKGROUND_STEP_SECONDS)
        return RandomWalkSpec(spec.start_price, spec.drift_per_year, spec.volatility_per_year, step)


@dataclass(frozen=True)
class MarketConfig:
    """Everything the core needs, independent of the config file's layout.

    `start` is where stepped and accelerated clocks begin; the market itself starts at
    its clock's current time.
    """

    seed: int = 42
    start: datetime = field(default_factory=lambda: parse_utc("2026-01-01T00:00:00Z"))
    price_step_seconds: int = 60
    start_prices: dict[str, Decimal] = field(default_factory=dict)
    prices_file: str | None = None
    pools: PoolSettings = field(default_factory=PoolSettings)
    fees: FeeSettings = field(default_factory=FeeSettings)
    keeper_fee_bps: int = 5
    execution_slippage_pct: Decimal = Decimal(0)
    """Backtests only: executions priced this percent worse than their quotes."""

    @classmethod
    def from_settings(cls, settings: PaperSettings) -> MarketConfig:
        """Build from the `[paper]` section."""
        return cls(
            seed=settings.seed,
            start=paper_start(settings),
            price_step_seconds=settings.price_step_seconds,
            start_prices=dict(settings.start_prices),
            prices_file=str(settings.prices_file) if settings.prices_file else None,
            pools=PoolSettings(depth_usd=settings.pool_depth_usd, fee_bps=settings.pool_fee_bps),
            fees=FeeSettings(platform_fee_bps=settings.platform_fee_bps),
            keeper_fee_bps=settings.keeper_fee_bps,
        )


class PaperMarket:
    """The simulated market: tokens, prices, pools, wallets, order engines, one clock."""

    def __init__(
        self,
        config: MarketConfig,
        clock: Clock,
        tokens: PaperTokens | None = None,
        *,
        replayed: Mapping[str, PricePath] | None = None,
    ) -> None:
        """Build the market at the clock's time.

        `replayed`: price paths already built (a backtest's arrays), by token key; they
        take the place of `config.prices_file`.
        """
        self.config = config
        self.clock = clock
        self.tokens = tokens or PaperTokens.from_token_list()
        if replayed is None and config.prices_file:
            replayed, report = load_series(Path(config.prices_file), key_of=self.tokens.key_of)
            skipped = report.skipped_rows.line() if report.skipped_rows is not None else None
            if skipped is not None:  # the rows replayed lack these: said once, in one line
                from bot.logging import get_logger

                get_logger("paper").warning("paper.prices_rows_skipped", summary=skipped)
        specs = {
            self.tokens.find(name).address: RandomWalkSpec(
                start_price=price,
                drift_per_year=Decimal(0),
                volatility_per_year=Decimal("0.8"),
                step_seconds=config.price_step_seconds,
            )
            for name, price in config.start_prices.items()
        }
        self.prices = PriceBook(
            config.seed,
            self.tokens,
            clock.now(),
            replayed=replayed,
            specs=specs,
            spec_factory=SpecFactory(config.price_step_seconds),
        )
        self.pools = PoolBook(self.prices, config.pools)
        self.ledger = Ledger()
        self.events = EventQueue()
        ids = OrderIds(config.seed)
        self.dca = DcaEngine(
            self.ledger,
            self.pools,
            config.fees,
            self.events,
            self.prices,
            ids,
            keeper_fee_bps=config.keeper_fee_bps,
            adverse_pct=config.execution_slippage_pct,
        )
        self.limit = LimitEngine(
            self.ledger,
            self.pools,
            config.fees,
            self.events,
            self.prices,
            ids,
            keeper_fee_bps=config.keeper_fee_bps,
            adverse_pct=config.execution_slippage_pct,
        )
        self._now = clock.now()

    # --- time ---------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        """The time the market has been advanced to."""
        return self._now

    def sync(self) -> int:
        """Advance to the clock's current time (before serving a request)."""
        target = self.clock.now()
        return self.advance_to(target) if target > self._now else 0

    def next_event_time(self, until: datetime | None = None) -> datetime | None:
        """When the next event happens (slice, expiry, limit crossing), up to `until`."""
        horizon = until or self._now + DEFAULT_HORIZON
        candidates = [
            t
            for t in (self.events.peek_time(), self.limit.next_crossing(self._now, horizon))
            if t is not None and t <= horizon
        ]
        return min(candidates) if candidates else None

    def advance_to(self, target: datetime) -> int:
        """Process every event due up to `target`, in time order; returns how many."""
        if target < self._now:
            raise ValueError("the market does not move backwards")
        processed = 0
        events, limit = self.events, self.limit
        while True:
            if limit.idle:  # no limit order to cross: the queue alone says what is next
                due = events.peek_time()
                if due is not None and due > target:
                    due = None
            else:
                due = self.next_event_time(target)
            if due is None:
                break
            if due > self._now:
                self._now = due
            while (event := events.pop_due(self._now)) is not None:
                kind = event.kind
                if kind == DCA_SLICE:
                    # With no limit order to fill, only queued events happen until the
                    # target: the order's next slots up to the next of them run at once.
                    ran = self.dca.process(
                        event, self._now, run_until=target if limit.idle else None
                    )
                    processed += max(ran - 1, 0)  # each slice counts, as if one event each
                else:
                    engine = self.dca if kind.startswith("dca") else limit
                    if kind.endswith(PENDING_DROP):
                        if engine.get(event.key).status == "pending":
                            engine.drop_pending(event.key)
                    else:
                        engine.process(event, self._now)
                processed += 1
            if not limit.idle:
                processed += limit.fill_due(self._now)
        self._now = target
        if not limit.idle:
            limit.fill_due(self._now)
        return processed

    def schedule_pending_drop(self, kind: str, order_id: str, at: datetime) -> None:
        """Drop an on-chain-style order at `at` if its deposit has not landed by then."""
        self.events.push(at, f"{kind}_{PENDING_DROP}", order_id)

    # --- wallets and quotes ---------------------------------------------------------------

    def fund(self, wallet: str, token: Token, units: int) -> None:
        """The paper faucet: mint `units` of `token` into a wallet."""
        self.ledger.mint(wallet, token.address, units)

    def balance(self, wallet: str, token: Token) -> int:
        """A wallet's balance of a token, in base units."""
        return self.ledger.balance(wallet, token.address)

    def quote(
        self,
        sell: Token,
        buy: Token,
        *,
        amount_in: int | None = None,
        amount_out: int | None = None,
        slippage: Decimal | Literal["auto"] = "auto",
        integrator_fee_pct: Decimal = Decimal(0),
    ) -> SwapTerms:
        """Price a swap at the current time."""
        return quote_swap(
            self.pools,
            self.config.fees,
            sell,
            buy,
            at=self._now,
            amount_in=amount_in,
            amount_out=amount_out,
            slippage=slippage,
            integrator_fee_pct=integrator_fee_pct,
        )
