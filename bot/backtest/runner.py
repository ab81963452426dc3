"""`run_backtest(spec) -> BacktestResult`: one strategy replayed over recorded prices.

The run is the paper world without its HTTP faces: a `PaperMarket` on a `SteppedClock`
whose prices are the series (`ArrayPath`s), the strategy ticked by the daemon's own
trigger (`make_trigger`) through the daemon's simulated-time `Driver`, which jumps the
clock from fire time to fire time. Before each tick the market is advanced to it
(`PaperMarket.advance_to`: DCA slices, limit crossings found by a vectorised search over
the price arrays, expiries — event to event, never tick by tick), the order events since
the previous tick are delivered (`on_order_event`), then `on_tick` sees a `Context` built
from the core. Its actions are risk-checked (`RiskChecker`) and carried out on the core
by `CoreBroker`. Fills come only from the core's DCA and limit engines, pools and swaps —
the code the paper world runs — so a parity test can compare the two to the base unit.

Assumptions and limits: docs/backtesting.md.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from functools import cache, partial
from pathlib import Path
from typing import Any, Final, cast

import numpy as np

from bot.aptos.tokens import Token, TokenLookupError
from bot.backtest.broker import CoreBroker, RiskView
from bot.backtest.context import ContextBuilder, OrderWatcher, named_tokens
from bot.backtest.coverage import data_warnings
from bot.backtest.feed import Feed, TokenSeries, load_feed, load_journal_feed, to_us
from bot.backtest.outcome import Tally, build_result
from bot.backtest.result import BacktestResult
from bot.backtest.spec import AUTO_FUNDING_USD, JOURNAL, BacktestSpec
from bot.clock import SteppedClock
from bot.config import PRICE_CREDIT
from bot.engine.actions import check_actions, describe
from bot.engine.events import OrderEvent
from bot.engine.plugins import PluginError, build_strategy
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.engine.strategy import Context, Strategy
from bot.logging import get_logger
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.core.pools import PoolSettings
from bot.paper.core.prices import PricePath
from bot.paper.core.registry import PaperTokens
from bot.paper.core.swaps import FeeSettings

__all__ = ["PROVIDER_CREDIT", "BacktestError", "run_backtest", "run_backtest_async"]

PROVIDER_CREDIT: Final = PRICE_CREDIT
"""The credit line shown with results computed from prices recorded from the provider.

Only when every price used says so (`Feed.origin`, docs/backtesting.md); otherwise the
result says where its prices came from instead (`BacktestResult.price_origin`)."""
_MICRO: Final = timedelta(microseconds=1)
_GAP: Final = timedelta(hours=1)
"""A stretch without ticks longer than this is noted in the log (the price held)."""
_GAPS_LOGGED: Final = 10

Progress = Callable[[datetime], Any]


class BacktestError(ValueError):
    """The backtest cannot run as asked (strategy, prices or funding); one line."""


@cache
def _registry() -> PaperTokens:
    """The packaged token list, read once per process (the runner never changes it)."""
    return PaperTokens.from_token_list()


def run_backtest(
    spec: BacktestSpec, *, progress: Progress | None = None, feed: Feed | None = None
) -> BacktestResult:
    """Run one backtest to the end of its window (see the module docstring).

    Args:
        spec: what to run.
        progress: called with the simulated time as the run advances (a progress bar).
        feed: prices already loaded (a sweep, a benchmark); default: read `spec.prices`.

    Raises:
        BacktestError: the strategy cannot be built, a token it names has no prices at
            the window's start, or the funding names an unknown token.
        OSError: the series file cannot be read.
    """
    # A loop of our own, not `asyncio.run`: on exit that one restores the SIGINT handler,
    # and the standard library's check of the handler reprs the finished task — the
    # whole result, every fill — which costs more than building it.
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(run_backtest_async(spec, progress=progress, feed=feed))
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def run_backtest_async(
    spec: BacktestSpec, *, progress: Progress | None = None, feed: Feed | None = None
) -> BacktestResult:
    """`run_backtest` inside a running event loop.

    The cycle collector is off while the run builds its many small objects (they are
    freed by reference counting; a full collection scanning them all costs more than
    the run's own work) and back on afterwards if it was on.
    """
    began = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()
    try:
        run = await _Run.start(spec, progress, feed)
        await run.drive()
        return run.result(time.perf_counter() - began)
    finally:
        if collecting:
            gc.enable()


def _load(spec: BacktestSpec, tokens: PaperTokens, named: Mapping[str, Token]) -> Feed:
    if spec.prices == JOURNAL:
        if spec.journal_url is None:
            raise ValueError("--prices journal needs a journal URL")
        wanted = {key: token.keys for key, token in named.items()}
        return load_journal_feed(
            spec.journal_url, wanted, until=spec.end + _MICRO, start=spec.start
        )
    try:
        return load_feed(Path(spec.prices), key_of=tokens.key_of)
    except ValueError as exc:
        raise BacktestError(str(exc)) from None


def _pegged(token: Token) -> TokenSeries:
    """A stable coin without a series: 1 USD since the epoch."""
    return TokenSeries(token.address, np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64), 0)


def _priced(
    spec: BacktestSpec, feed: Feed, named: Mapping[str, Token], traded: set[str]
) -> dict[str, TokenSeries]:
    """Every series of the run by token key: the feed's, plus pegged stables it lacks.

    Args:
        spec: the run.
        feed: the loaded prices.
        named: every token the run knows of (the parameters' tokens, and APT for gas).
        traded: the keys the strategy's parameters name.

    Raises:
        BacktestError: a token the strategy trades has no price at the window's start.
    """
    series = dict(feed.series)
    start_us = to_us(spec.start)
    for key, token in named.items():
        if key not in series and spec.peg_stables and "USD" in token.symbol.upper():
            series[key] = _pegged(token)
    for key, token in named.items():
        found = series.get(key)
        if found is None:
            if key not in traded:
                continue  # APT named for its balance only (as the engine does): not traded
            raise BacktestError(f"no prices for {token.symbol} ({key}) in {spec.price_source}")
        if found.index_at(start_us) < 0:
            raise BacktestError(
                f"prices of {token.symbol} start at {found.time(0).isoformat()}, after "
                f"the window's start {spec.start.isoformat()}"
            )
    return series


def _funding(
    spec: BacktestSpec,
    tokens: PaperTokens,
    named: Mapping[str, Token],
    series: Mapping[str, TokenSeries],
) -> dict[str, tuple[Token, int]]:
    """Start balances (token, base units) by token key (see `BacktestSpec.funding`)."""
    amounts: dict[str, tuple[Token, int]] = {}
    if spec.funding is not None:
        for name, amount in spec.funding.items():
            try:
                token = tokens.book.find(name)
            except TokenLookupError as exc:
                raise BacktestError(f"funding: {exc}") from None
            if not isinstance(amount, Decimal) or not amount.is_finite() or amount < 0:
                raise BacktestError(f"funding of {name}: not an amount ≥ 0: {amount}")
            units = amount.scaleb(token.decimals).to_integral_value(rounding=ROUND_FLOOR)
            amounts[token.address] = (token, int(units))
        return amounts
    for key, token in named.items():
        found = series.get(key)
        price = found.at(spec.start) if found is not None else None
        if price is None:
            continue
        units = (AUTO_FUNDING_USD / price).scaleb(token.decimals)
        amounts[key] = (token, int(units.to_integral_value(rounding=ROUND_FLOOR)))
    return amounts


def _on_event(strategy: Strategy, event: OrderEvent, ctx: Context) -> Awaitable[Any]:
    return strategy.on_order_event(ctx, event)


class _Run:
    """One run's parts and counters."""

    def __init__(self, spec: BacktestSpec, progress: Progress | None) -> None:
        self.spec = spec
        self.progress = progress
        self.tally = Tally(errors=[])
        self.log = get_logger("backtest", strategy=spec.strategy.name)

    @classmethod
    async def start(cls, spec: BacktestSpec, progress: Progress | None, feed: Feed | None) -> _Run:
        """Build the strategy, load prices, make the market and fund the wallet."""
        run = cls(spec, progress)
        tokens = _registry()
        try:
            strategy = build_strategy(spec.strategy, spec.strategy_dirs)
        except PluginError as exc:
            raise BacktestError("; ".join(exc.problems)) from None
        named = named_tokens(strategy, tokens.book)
        traded = set(named_tokens(strategy, tokens.book, with_apt=False))
        feed = feed if feed is not None else _load(spec, tokens, named)
        series = _priced(spec, feed, named, traded)
        symbols = {key: token.symbol for key, token in named.items() if key in feed.series}
        run.warnings = data_warnings(feed, symbols, spec.start, spec.end)
        gaps = [g for g in feed.gaps(_GAP) if spec.start <= g.end and g.start <= spec.end]
        for gap in gaps[:_GAPS_LOGGED]:
            run.log.info("backtest.gap", token=gap.token, start=gap.start, end=gap.end)
        if len(gaps) > _GAPS_LOGGED:
            run.log.info("backtest.gaps", more=len(gaps) - _GAPS_LOGGED)
        paths: dict[str, PricePath] = {key: s.path() for key, s in series.items()}
        clock = SteppedClock(spec.start)
        market = PaperMarket(
            MarketConfig(
                seed=spec.seed,
                start=spec.start,
                pools=PoolSettings(depth_usd=spec.depth_usd, fee_bps=spec.fee_bps),
                fees=FeeSettings(platform_fee_bps=spec.platform_fee_bps),
                keeper_fee_bps=spec.keeper_fee_bps,
                execution_slippage_pct=spec.slippage,
            ),
            clock,
            tokens,
            replayed=paths,
        )
        priced = [t for t in tokens.tokens if t.address in series]
        run.funding = _funding(spec, tokens, named, series)
        for token, units in run.funding.values():
            market.fund(spec.wallet, token, units)
        run.clock, run.market, run.strategy, run.series = clock, market, strategy, series
        run.named = {k: t for k, t in named.items() if k in series}
        run.broker = CoreBroker(market, spec.wallet, tokens.book, series)
        budgets = {spec.strategy.name: spec.strategy.budget} if spec.strategy.budget else {}
        # The checker asks its journal two questions (open orders, the day's spend):
        # RiskView answers them from the run, so the live rules apply unchanged.
        run.risk = RiskChecker(
            spec.risk, cast(Any, RiskView(run.broker)), tokens.book, budgets=budgets
        )
        run.builder = ContextBuilder(
            market=market,
            broker=run.broker,
            strategy=strategy,
            priced=priced,
            named=named.values(),
            log=get_logger("strategy", strategy=strategy.instance, backtest=True),
        )
        run.watcher = OrderWatcher(market, run.broker)
        run.origin = feed.origin()
        run.credit = PROVIDER_CREDIT if run.origin is None else None
        return run

    # set in `start`
    funding: dict[str, tuple[Token, int]]
    clock: SteppedClock
    market: PaperMarket
    strategy: Strategy
    series: dict[str, TokenSeries]
    named: dict[str, Token]
    broker: CoreBroker
    risk: RiskChecker
    builder: ContextBuilder
    watcher: OrderWatcher
    credit: str | None
    origin: str | None
    warnings: list[str]

    async def drive(self) -> None:
        """`on_start`, every tick to the window's end, `on_stop`."""
        spec = self.spec
        await self._hook("on_start")
        trigger = make_trigger(spec.strategy.schedule, spec.start)
        job = Job(f"strategy:{self.strategy.instance}", trigger, self._tick)
        driver = Driver(self.clock, [job], on_time=self._reach)
        await driver.run_until(spec.end)
        self._reach(self.clock.now())
        await self._hook("on_stop")

    def _reach(self, now: datetime) -> None:
        """The driver moved the clock: bring the market to the same moment."""
        self.tally.events += self.market.advance_to(now)
        if self.progress is not None:
            self.progress(now)

    async def _tick(self) -> None:
        self.tally.ticks += 1
        for event in self.watcher.poll():
            await self._decide(partial(_on_event, self.strategy, event))
        await self._decide(self.strategy.on_tick)

    async def _decide(self, decide: Callable[[Context], Any]) -> None:
        """One decision: a fresh context, the hook under the timeout, its actions."""
        try:
            ctx = self.builder.build()
            async with asyncio.timeout(self.spec.timeout_seconds):  # no task per call
                actions = await decide(ctx)
            check_actions(actions)
        except Exception as exc:
            self._failed(exc)
            return
        name = self.strategy.instance
        for action in actions:
            refusal = self.risk.check(name, self.spec.wallet, action, self.market.now)
            if refusal is not None:
                self.tally.refused += 1
                self.log.warning(
                    "risk.refused", action=describe(action), reason=str(refusal), at=self.market.now
                )
                continue
            outcome = self.broker.carry_out(action)
            if outcome.duplicate:
                continue
            if outcome.state == "confirmed":
                self.tally.actions += 1
            else:
                self.tally.refused += 1
                self.log.warning(
                    "action.failed",
                    action=describe(action),
                    reason=outcome.detail,
                    at=self.market.now,
                )
        try:
            self.builder.save(ctx)
        except ValueError as exc:
            self._failed(exc)

    async def _hook(self, hook: str) -> None:
        try:
            ctx = self.builder.build()
            async with asyncio.timeout(self.spec.timeout_seconds):
                await getattr(self.strategy, hook)(ctx)
        except Exception as exc:
            self._failed(exc)

    def _failed(self, exc: BaseException) -> None:
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        line = f"{self.market.now.isoformat()} {reason}".splitlines()[0]
        if self.tally.errors is None:
            self.tally.errors = []
        self.tally.errors.append(line)

    def result(self, wall_seconds: float) -> BacktestResult:
        """The finished run's result."""
        # The strategy's views of its orders are not needed any more: freed first, so
        # they and the result's own records are never held at once.
        self.builder.release()
        result = build_result(
            spec=self.spec,
            market=self.market,
            broker=self.broker,
            tokens=self.named,
            series=self.series,
            funding=self.funding,
            tally=self.tally,
            credit=self.credit,
            wall_seconds=wall_seconds,
            warnings=self.warnings,
        )
        result.price_origin = self.origin
        return result
