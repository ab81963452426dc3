"""`run_backtest(spec) -> BacktestResult`: one strategy replayed over recorded prices.

The run is the paper world without its HTTP faces, driven by the bot's own engine: a
`PaperMarket` on a `SteppedClock` whose prices are the series (`ArrayPath`s), and the
live `Engine` with the backtest's ports (`bot.backtest.ports`) in place of the client,
node and journal. At each fire time of the strategy's trigger (`make_trigger`) the run
does what the daemon's jobs due then do — the order poll, then the strategy's tick —
under the daemon's simulated-time `Driver`, which jumps the clock from fire time to fire
time. On each jump the market is advanced to it (`PaperMarket.advance_to`: DCA slices —
an order's slices between two jumps run in one go, `bot.paper.core.dca_run` —, limit
crossings found by a vectorised search over the price arrays, expiries — event to
event, never tick by tick); the poll delivers the order events since the previous one
(`on_order_event`, as the tracker delivers them live), then `on_tick` sees the engine's
`Context`. Actions are bounded, risk-checked (`RiskChecker`) and handed to the broker by
the engine, as live; `CoreBroker` carries them out on the core. The spec's companions
(the configured strategies whose orders the strategy reads) run in the same engine on
the same market and wallet, each on its own trigger, ticking before it at a shared time.
Fills come only from the core's DCA and limit engines, pools and swaps — the code the
paper world runs — so a parity test can compare the two to the base unit.

Assumptions and limits: docs/backtesting.md.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from functools import cache
from pathlib import Path
from typing import Any, Final

import numpy as np

from bot.aptos.tokens import Token, TokenLookupError
from bot.backtest.broker import CoreBroker, RiskView
from bot.backtest.context import RunBook, gas_token, named_tokens
from bot.backtest.coverage import data_warnings
from bot.backtest.feed import Feed, TokenSeries, load_feed, load_journal_feed
from bot.backtest.outcome import Tally, build_result
from bot.backtest.ports import CoreEvents, CoreMarket, CoreOrders, CoreState
from bot.backtest.result import BacktestResult, CompanionRun
from bot.backtest.spec import AUTO_FUNDING_USD, JOURNAL, BacktestSpec
from bot.clock import MICROSECOND, SteppedClock, to_micros
from bot.config import PRICE_CREDIT, StrategyEntry
from bot.engine.actions import describe
from bot.engine.engine import Engine, TickReport
from bot.engine.plugins import PluginError, build_strategy
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.engine.strategy import Strategy
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
            spec.journal_url, wanted, until=spec.end + MICROSECOND, start=spec.start
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
    start_us = to_micros(spec.start)
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


class _Run:
    """One run's parts and counters."""

    def __init__(self, spec: BacktestSpec, progress: Progress | None) -> None:
        self.spec = spec
        self.progress = progress
        self.tally = Tally(errors=[])
        self.main = spec.strategy.name
        self.tallies = {entry.name: Tally(errors=[]) for entry in spec.companions}
        """The companions' own counts, by name."""
        self.log = get_logger("backtest", strategy=spec.strategy.name)

    @classmethod
    async def start(cls, spec: BacktestSpec, progress: Progress | None, feed: Feed | None) -> _Run:
        """Build the strategy, load prices, make the market and fund the wallet."""
        run = cls(spec, progress)
        tokens = _registry()
        book = RunBook(tokens.book)
        entries = [*spec.companions, spec.strategy]
        strategies = [_built(entry, spec) for entry in entries]
        strategy = strategies[-1]
        named = named_tokens(strategy, book)
        traded = set(named_tokens(strategy, book, with_gas=False))
        for companion in strategies[:-1]:
            for key, token in named_tokens(companion, book, with_gas=False).items():
                named.setdefault(key, token)
                traded.add(key)
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
        run.broker = CoreBroker(market, spec.wallet, book, series)
        budgets = {entry.name: entry.budget for entry in entries if entry.budget}
        # The checker asks its ledger two questions (open orders, the day's spend):
        # RiskView answers them from the run, so the live rules apply unchanged.
        risk = RiskChecker(spec.risk, RiskView(run.broker), book, budgets=budgets)
        run.orders = CoreOrders(market, run.broker)
        run.engine = Engine(
            market=CoreMarket(market, run.broker, priced, gas_token(book)),
            orders=run.orders,
            state_store=CoreState(),
            tracker=CoreEvents(market, run.broker),
            clock=clock,
            wallet=spec.wallet,
            tokens=book,
            broker=run.broker,
            risk=risk,
            strategies=strategies,
            timeout_seconds=spec.timeout_seconds,
        )
        # Reactions to order events and failed hooks; a tick's report comes from `tick`.
        run.engine.report_listeners.append(run._count)
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
    orders: CoreOrders
    engine: Engine
    credit: str | None
    origin: str | None
    warnings: list[str]

    async def drive(self) -> None:
        """`on_start`, every poll and tick to the window's end, `on_stop`."""
        spec, engine, name = self.spec, self.engine, self.strategy.instance
        await engine.start()
        jobs = [self._companion_job(entry) for entry in spec.companions]
        trigger = make_trigger(spec.strategy.schedule, spec.start)
        jobs.append(Job(f"strategy:{name}", trigger, self._poll_and_tick))
        driver = Driver(self.clock, jobs, on_time=self._reach)
        await driver.run_until(spec.end)
        self._reach(self.clock.now())
        await engine.stop()

    def _reach(self, now: datetime) -> None:
        """The driver moved the clock: bring the market to the same moment."""
        self.tally.events += self.market.advance_to(now)
        if self.progress is not None:
            self.progress(now)

    async def _poll_and_tick(self) -> None:
        """The order poll, then the tick: the daemon's two jobs due at one moment.

        One job here, in their order: the trigger is asked for its next time once.
        """
        await self.engine.poll_orders()
        self.tally.ticks += 1
        self._count(await self.engine.tick(self.strategy.instance))

    def _companion_job(self, entry: StrategyEntry) -> Job:
        """A companion's job: the order poll, then its tick, on its own schedule."""
        name = entry.name

        async def poll_and_tick() -> None:
            await self.engine.poll_orders()
            self.tallies[name].ticks += 1
            self._count(await self.engine.tick(name))

        return Job(f"strategy:{name}", make_trigger(entry.schedule, self.spec.start), poll_and_tick)

    def _count(self, report: TickReport) -> None:
        """Count what one decision did: actions carried out, refused or failed, errors.

        A companion's counts go to its own tally; its errors are also the result's, named.
        """
        tally = self.tally
        if report.strategy != self.main:
            tally = self.tallies[report.strategy]
            if not report.ok and self.tally.errors is not None:
                line = f"{self.market.now.isoformat()} {report.strategy}: {report.error}"
                self.tally.errors.append(line.splitlines()[0])
        tally.refused += len(report.refusals)
        for action, outcome in report.outcomes:
            if outcome.duplicate:
                continue
            if outcome.state == "confirmed":
                tally.actions += 1
            else:
                tally.refused += 1
                self.log.warning(
                    "action.failed",
                    action=describe(action),
                    reason=outcome.detail,
                    at=self.market.now,
                )
        if not report.ok:
            line = f"{self.market.now.isoformat()} {report.error}".splitlines()[0]
            if tally.errors is None:
                tally.errors = []
            tally.errors.append(line)

    def result(self, wall_seconds: float) -> BacktestResult:
        """The finished run's result."""
        # The strategy's views of its orders are not needed any more: freed first, so
        # they and the result's own records are never held at once.
        self.orders.release()
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
        if self.spec.companions:
            result.companions = [
                CompanionRun(e.name, e.plugin, t.ticks, t.actions, t.refused, len(t.errors or []))
                for e in self.spec.companions
                for t in [self.tallies[e.name]]
            ]
            result.owners = self._owners()
        return result

    def _owners(self) -> dict[str, str]:
        """The companions' orders and swaps, as the fills name them → who made them."""
        broker, main = self.broker, self.main
        owners = {order_id: who for (_, order_id), who in broker.owners.items() if who != main}
        swapped = {
            key: who
            for (who, key), outcome in broker.outcomes.items()
            if who != main and outcome.state == "confirmed" and outcome.order_id is None
        }
        for swap in broker.swaps:
            if swap.key in swapped:
                owners[f"swap:{swap.key}"] = swapped[swap.key]
        return owners


def _built(entry: StrategyEntry, spec: BacktestSpec) -> Strategy:
    """The entry's strategy; a plugin refusing it is a `BacktestError`."""
    try:
        return build_strategy(entry, spec.strategy_dirs)
    except PluginError as exc:
        raise BacktestError("; ".join(exc.problems)) from None
