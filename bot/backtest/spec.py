"""What a backtest is asked to do: `BacktestSpec`, the runner's one input.

Defaults are the paper world's (`bot.config.PaperSettings`): pool depth and fee, platform
and keeper fees, seed. Only the strategy, the window and the price source are required.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Final

from bot.clock import ensure_utc
from bot.config import PaperSettings, RiskSettings, Schedule, StrategyEntry
from bot.duration import parse_duration

__all__ = ["AUTO_FUNDING_USD", "JOURNAL", "BacktestSpec", "parse_funding", "parse_schedule"]

JOURNAL: Final = "journal"
"""`prices=JOURNAL`: read the journal's recorded `price_ticks` (`journal_url`)."""
AUTO_FUNDING_USD: Final = Decimal(1_000_000)
"""Without `funding`, the wallet starts with this much USD of each token the strategy's
parameters name, at the token's price at the start (see docs/backtesting.md)."""
BACKTEST_WALLET: Final = "0x" + "b7" * 32
_PAPER: Final = PaperSettings()


@dataclass(frozen=True)
class BacktestSpec:
    """One backtest: a strategy, a window, prices, money and market settings.

    Attributes:
        strategy: the `[[strategies]]` entry (name, plugin, schedule, params, budget).
        start, end: the window, aware UTC; the strategy's first tick is at `start`.
        prices: a series file (CSV or Parquet, `bot.paper.core.series` format) or
            `"journal"` for the journal's recorded prices (`journal_url`).
        journal_url: the journal (`[journal].url`) when `prices` is `"journal"`.
        strategy_dirs: folders of user strategy plugins.
        funding: start balances, token (symbol or address) → human amount; None: the
            automatic funding of `AUTO_FUNDING_USD` per named token.
        fee_bps: the pools' swap fee; depth_usd: their depth (USD per side at anchor).
        slippage: percent by which every execution is priced worse than its quote (an
            adverse move between decision and execution); 0 is the paper world.
        platform_fee_bps, keeper_fee_bps, seed: as `[paper]`.
        risk: the `[risk]` limits applied to the strategy's actions.
        peg_stables: price a token whose symbol contains "USD" and that has no series at
            exactly 1 USD (instead of refusing the run).
        timeout_seconds: a strategy hook taking longer (real time) fails that tick.
        companions: the configured strategies whose orders the strategy reads
            (`order_sources()`), run beside it in the same engine, on the same market and
            wallet, each on its own schedule (docs/backtesting.md, "Companions").
    """

    strategy: StrategyEntry
    start: datetime
    end: datetime
    prices: Path | str
    journal_url: str | None = None
    strategy_dirs: tuple[Path, ...] | list[Path] = ()
    funding: Mapping[str, Decimal] | None = None
    fee_bps: int = _PAPER.pool_fee_bps
    slippage: Decimal = Decimal(0)
    depth_usd: Decimal = _PAPER.pool_depth_usd
    platform_fee_bps: int = _PAPER.platform_fee_bps
    keeper_fee_bps: int = _PAPER.keeper_fee_bps
    seed: int = _PAPER.seed
    risk: RiskSettings = field(default_factory=RiskSettings)
    peg_stables: bool = True
    timeout_seconds: float = 30.0
    wallet: str = BACKTEST_WALLET
    companions: tuple[StrategyEntry, ...] | list[StrategyEntry] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", ensure_utc(self.start))
        object.__setattr__(self, "end", ensure_utc(self.end))
        object.__setattr__(self, "strategy_dirs", tuple(self.strategy_dirs))
        object.__setattr__(self, "companions", tuple(self.companions))
        names = [self.strategy.name, *(c.name for c in self.companions)]
        if len(set(names)) != len(names):
            raise ValueError(f"companions: each strategy once, got {', '.join(names)}")
        if self.end <= self.start:
            raise ValueError(
                f"the window ends ({self.end.isoformat()}) before it starts "
                f"({self.start.isoformat()})"
            )
        if not 0 <= self.fee_bps < 10_000:
            raise ValueError(f"fee_bps must be from 0 to 9999, got {self.fee_bps}")
        if not Decimal(0) <= self.slippage < Decimal(100):
            raise ValueError(f"slippage must be a percent from 0 to below 100, got {self.slippage}")
        if not self.depth_usd > 0:
            raise ValueError(f"depth_usd must be positive, got {self.depth_usd}")
        if isinstance(self.prices, str) and self.prices != JOURNAL:
            object.__setattr__(self, "prices", Path(self.prices))
        if self.prices == JOURNAL and not self.journal_url:
            raise ValueError("prices from the journal need journal_url ([journal].url)")

    @property
    def price_source(self) -> str:
        """The series file's path, or "journal"."""
        return str(self.prices)


def parse_funding(text: str) -> dict[str, Decimal]:
    """`"USDC=1000,APT=0"` → start balances by token (symbol or address), exact.

    Raises:
        ValueError: not `token=amount` pairs, or an amount that is not a number ≥ 0.
    """
    funding: dict[str, Decimal] = {}
    for part in text.split(","):
        token, sep, amount = part.partition("=")
        if not sep or not token.strip():
            raise ValueError("expected token=amount pairs, e.g. USDC=1000,APT=0")
        try:
            value = Decimal(amount.strip())
        except ArithmeticError:
            raise ValueError(f"{token.strip()}: {amount.strip()!r} is not a number") from None
        if not value.is_finite() or value < 0:
            raise ValueError(f"{token.strip()}: expected an amount ≥ 0, got {amount.strip()!r}")
        funding[token.strip()] = value
    return funding


def parse_schedule(text: str) -> Schedule:
    """A duration (`"1h"`, `"90s"`, `"1 day"`, `"3600"`: `bot.duration`) or a cron line.

    A cron line has 5 fields and is read in UTC.

    Raises:
        ValueError: anything else, or a cron line the scheduler does not accept.
    """
    stripped = text.strip()
    try:
        return Schedule(interval_seconds=parse_duration(stripped).seconds)
    except ValueError:
        pass  # not a duration: a cron line, or nothing
    if len(stripped.split()) == 5:
        from apscheduler.triggers.cron import CronTrigger

        try:
            CronTrigger.from_crontab(stripped)
        except ValueError as exc:
            raise ValueError(f"not a cron line: {exc}") from None
        return Schedule(cron=stripped)
    raise ValueError('expected an interval ("1h", "15m", "1 day") or a 5-field cron line')
