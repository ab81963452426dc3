"""The engine: ticks strategies, checks and carries out their actions, polls orders.

One engine serves every way of running the bot — the real-time daemon, `bot once`, the
stepped driver of tests, demos and backtests — only the clock and the ports differ
(`bot.engine.ports`: market data, order view, state store, broker, order events; the live
ones in `bot.engine.live_ports`, a backtest's in `bot.backtest.ports`). The engine imports
no HTTP client, node client or journal. A tick: one price look-up (shared by every strategy
ticking at that moment) → a frozen `Context` → `on_tick` under a timeout → each returned
action validated, risk-checked and handed to the broker → the strategy's saved state stored
(`state_store`: the journal, a dry run's in-memory overlay on it, a backtest's memory). A
strategy that raises, times out or returns something that is not a list of actions is
isolated: logged, counted, skipped; the others go on. Order events from the tracker (or a
backtest's watcher) reach the strategy owning the order the same way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from bot.aptos.tokens import TokenBook, TokenLookupError
from bot.clock import Clock
from bot.domain import RiskRule
from bot.engine.actions import Action, Swap, check_actions, describe
from bot.engine.events import OrderEvent
from bot.engine.ports import (
    ActionOutcome,
    Broker,
    MarketData,
    OrderEvents,
    OrderView,
    PollReport,
    StateStore,
)
from bot.engine.progress import ProgressTracker
from bot.engine.risk import RiskChecker, RiskRefusal
from bot.engine.strategy import Context, PriceInfo, Strategy, needed_tokens
from bot.engine.swap_bounds import SwapLimits, bounds_exact_out, usd_ratio
from bot.logging import get_logger, redact
from bot.money import from_base_units, to_base_units_down
from bot.price_view import PriceConvention

__all__ = ["Engine", "StrategyStats", "TickReport"]

_PRICES_SHARED: Final = timedelta(seconds=1)
"""How long one `/prices` answer serves the contexts built after it."""


@dataclass
class StrategyStats:
    """Counters for `bot status` and the heartbeat."""

    ticks: int = 0
    errors: int = 0
    refused: int = 0
    actions: int = 0
    last_tick: datetime | None = None
    last_error: str | None = None


@dataclass
class TickReport:
    """What one tick of one strategy did."""

    strategy: str
    ok: bool
    error: str | None = None
    outcomes: list[tuple[Action, ActionOutcome]] = field(default_factory=list)
    refusals: list[tuple[Action, RiskRefusal]] = field(default_factory=list)
    paused: bool = False
    """The strategy is paused (`bot strategies pause`): it was not asked to act."""


class Engine:
    """Strategies, their context, and what happens to their decisions.

    The world comes in through the ports (`bot.engine.ports`): `market`, `orders`,
    `state_store`, `broker`, `tracker` (the order events; None: none, a dry run) and the
    risk checker's ledger. A live or paper engine is built by `live_ports.live_engine`
    (the adapters over the client, node and journal), a backtest's by `bot.backtest.runner`.
    """

    def __init__(
        self,
        *,
        clock: Clock,
        wallet: str,
        tokens: TokenBook,
        broker: Broker,
        risk: RiskChecker,
        strategies: Iterable[Strategy],
        market: MarketData,
        orders: OrderView,
        state_store: StateStore,
        tracker: OrderEvents | None = None,
        timeout_seconds: float = 30.0,
        stuck_after: int = 3,
        paused: Iterable[str] = (),
        convention: PriceConvention | None = None,
    ) -> None:
        self.market: MarketData = market
        """Prices, balances and quotes."""
        self.orders: OrderView = orders
        """The strategies' orders and intents."""
        self.clock = clock
        self.wallet = wallet
        self.tokens = tokens
        self.broker = broker
        self.risk = risk
        self.tracker = tracker
        """Where order events come from (the order tracker; None: no events, a dry run)."""
        self.timeout = timeout_seconds
        self.state_store: StateStore = state_store
        """Where the strategies' saved state is read and written (a dry run's overlay keeps
        the journal's untouched)."""
        self.strategies = {s.instance: s for s in strategies}
        self.stats = {name: StrategyStats() for name in self.strategies}
        self.convention = convention or PriceConvention(book=tokens)
        """How prices are shown in logs and reports (`[display].price_quote`)."""
        self.progress = ProgressTracker(stuck_after, self.convention)
        """Which strategies tick without getting anywhere (the daemon's `degraded`)."""
        self.paused: set[str] = set(paused)
        self._shown: dict[str, dict[str, str]] = {}
        """Strategies the user paused: their ticks and reactions ask them nothing."""
        self._prices: tuple[datetime, Mapping[str, PriceInfo]] | None = None
        self.last_poll_at: datetime | None = None
        """When the last order poll began (the heartbeat and alerts read it)."""
        self.last_poll_ok_at: datetime | None = None
        """When the last order poll that succeeded began."""
        self.report_listeners: list[Callable[[TickReport], None]] = []
        """Called with the report of every reaction to an order event and every failed
        start/stop hook (a tick's report goes to whoever called `tick`)."""
        self._log = get_logger("engine")
        self._logs: dict[str, Any] = {}
        self._needed: dict[str, tuple[Strategy, list[str]]] = {}
        if tracker is not None:
            tracker.subscribe(self._on_order_event)

    # --- context ----------------------------------------------------------------------

    async def _prices_now(self) -> Mapping[str, PriceInfo]:
        now = self.clock.now()
        cached = self._prices
        if cached is not None and (
            cached[0] == now or timedelta(0) <= now - cached[0] < _PRICES_SHARED
        ):
            # One price look-up per tick moment, shared by the strategies ticking then and
            # the order events of the same poll (on a real clock no two reads are equal).
            return cached[1]
        prices = await self.market.prices(self._price_tokens())
        self._prices = (now, prices)
        return prices

    def _price_tokens(self) -> list[str]:
        """The tokens a tick may price: those the strategies declare (`tokens()`), by name.

        The market data adds the gas token. Only these are asked for, so a tick's `/prices`
        answer does not grow with the provider's whole token list.
        """
        return list(dict.fromkeys(n for s in self.strategies.values() for n in self._needs(s)))

    def _needs(self, strategy: Strategy) -> list[str]:
        """`needed_tokens(strategy)`, worked out once per strategy object.

        Its parameters are frozen, and `tokens()` depends on nothing else.
        """
        known = self._needed.get(strategy.instance)
        if known is None or known[0] is not strategy:
            try:
                needs = needed_tokens(strategy)
            except Exception as exc:  # checked at load; one strategy never fails the others
                self._strategy_log(strategy.instance).error(
                    "strategy.tokens_failed", error=str(exc)
                )
                needs = []
            known = self._needed[strategy.instance] = (strategy, needs)
        return known[1]

    async def context(self, strategy: Strategy) -> Context:
        """The frozen snapshot `strategy` sees now."""
        name = strategy.instance
        state = self.state_store.load(name)
        intents = self.orders.intent_states(name)
        shown = self._shown.get(name)
        if shown:
            # A dry run's shown actions count as its intents (never the journal's): a
            # strategy asking again for what it did not get sees them as asked, as live.
            intents = {**intents, **shown}
        return Context(
            strategy=name,
            now=self.clock.now(),
            prices=await self._prices_now(),
            balances=await self.market.balances(self._needs(strategy)),
            orders=self.orders.orders_of(strategy.order_sources()),
            state=state,
            log=self._strategy_log(name),
            quote=self.market.quote,
            intents=intents,
        )

    def _strategy_log(self, name: str) -> Any:
        """The logger bound to a strategy's name (one per strategy the engine runs)."""
        log = self._logs.get(name)
        if log is None:
            log = self._logs[name] = get_logger("strategy", strategy=name)
        return log

    # --- ticks ------------------------------------------------------------------------

    async def tick(self, name: str) -> TickReport:
        """Tick one strategy (a paused one is not asked); never raises."""
        if name in self.paused:
            return TickReport(name, ok=True, paused=True)
        strategy = self.strategies[name]
        stats = self.stats[name]
        stats.ticks += 1
        stats.last_tick = self.clock.now()
        try:
            ctx = await self.context(strategy)
            async with asyncio.timeout(self.timeout):  # in this task: no task per call
                actions = await strategy.on_tick(ctx)
            check_actions(actions)
        except Exception as exc:
            report = self._failed(name, exc)
        else:
            report = TickReport(name, ok=True)
            await self._act(name, actions, report)
            self._save(name, ctx, report)
        self.progress.record(report)
        return report

    def _save(self, name: str, ctx: Context, report: TickReport) -> None:
        """Store what the strategy saved; a value the store refuses fails the report.

        The actions were carried out already: the report keeps their outcomes.
        """
        try:
            self.state_store.save(name, ctx.saved, at=self.clock.now())
        except Exception as exc:  # a float, an object; a journal that cannot write
            failed = self._failed(name, exc)
            report.ok, report.error = False, failed.error

    def _failed(self, name: str, exc: BaseException) -> TickReport:
        stats = self.stats[name]
        stats.errors += 1
        # An exception message may quote a secret (a URL with a token, a key).
        reason = (
            "timed out" if isinstance(exc, TimeoutError) else redact(f"{type(exc).__name__}: {exc}")
        )
        stats.last_error = reason
        self._log.error("strategy.failed", strategy=name, error=reason)
        return TickReport(name, ok=False, error=reason)

    async def _act(self, name: str, actions: Sequence[Action], report: TickReport) -> None:
        stats = self.stats[name]
        for proposed in actions:
            action, refusal = await self._bounded(proposed)
            if refusal is None:
                refusal = self.risk.check(name, self.wallet, action, self.clock.now())
            if refusal is not None:
                stats.refused += 1
                report.refusals.append((action, refusal))
                self._log.warning(
                    "risk.refused",
                    strategy=name,
                    action=describe(action, self.convention),
                    reason=str(refusal),
                )
                continue
            try:
                outcome = await self.broker.carry_out(name, action)
            except (TokenLookupError, ValueError) as exc:
                outcome = ActionOutcome("failed", detail=str(exc))
            stats.actions += 1
            report.outcomes.append((action, outcome))
            if outcome.state == "dry-run":
                self._shown.setdefault(name, {})[action.key] = outcome.state
            if not self._log.is_enabled_for(logging.INFO):
                continue  # the description costs more than the rest (a backtest's many)
            self._log.info(
                "action",
                strategy=name,
                action=describe(action, self.convention),
                state=outcome.state,
                order_id=outcome.order_id,
                detail=outcome.detail or None,
            )

    async def _bounded(self, action: Action) -> tuple[Action, RiskRefusal | None]:
        """An ExactOut swap with its most-sold amount set from the tick's prices.

        The caps and budgets then count what may be signed; the executor never signs more.
        """
        if not isinstance(action, Swap) or action.buy_amount is None:
            return action, None
        if action.max_sell_amount is not None:
            return action, None
        try:
            sell, buy = self.tokens.find(action.sell), self.tokens.find(action.buy)
        except TokenLookupError:
            return action, None  # the risk check names the unknown token
        prices = await self._prices_now()
        sell_usd, buy_usd = (
            next((p.usd for k in t.keys if (p := prices.get(k)) is not None), None)
            for t in (sell, buy)
        )
        if sell_usd is None or buy_usd is None or not (sell_usd > 0 and buy_usd > 0):
            return action, RiskRefusal(
                RiskRule.REFERENCE_PRICE, f"no price to bound an ExactOut swap of {buy.symbol}"
            )
        rate = usd_ratio(sell_usd, buy_usd)
        risk = self.risk.risk
        limits = SwapLimits(risk.max_reference_deviation_percent, risk.max_slippage_percent)
        slippage = action.slippage if isinstance(action.slippage, Decimal) else None
        units = to_base_units_down(action.buy_amount, buy.decimals)
        bounds = bounds_exact_out(units, rate, sell, buy, limits.tolerance(slippage))
        most = from_base_units(bounds.sell_amount, sell.decimals)
        return replace(action, max_sell_amount=most), None

    async def tick_all(self, names: Iterable[str] | None = None) -> list[TickReport]:
        """Tick the named strategies (default: all), one after another."""
        return [await self.tick(n) for n in (names or list(self.strategies))]

    # --- orders and lifecycle -----------------------------------------------------------

    async def poll_orders(self) -> PollReport | None:
        """Poll the orders (the events go to the strategies owning them)."""
        if self.tracker is None:
            return None
        began = self.clock.now()
        self.last_poll_at = began
        report = await self.tracker.poll()
        self.last_poll_ok_at = began
        return report

    async def _on_order_event(self, event: OrderEvent) -> None:
        strategy = self.strategies.get(self.orders.owner_of(event.kind, event.order_id) or "")
        if strategy is None or strategy.instance in self.paused:
            return
        if type(strategy).on_order_event is Strategy.on_order_event:
            return  # the default reacts to nothing: no context to build, nothing to report
        try:
            ctx = await self.context(strategy)
            async with asyncio.timeout(self.timeout):
                actions = await strategy.on_order_event(ctx, event)
            check_actions(actions)
        except Exception as exc:
            self._report(self._failed(strategy.instance, exc))
            return
        report = TickReport(strategy.instance, ok=True)
        await self._act(strategy.instance, actions, report)
        self._save(strategy.instance, ctx, report)
        self._report(report)

    def _report(self, report: TickReport) -> None:
        for listener in self.report_listeners:
            try:
                listener(report)
            except Exception as exc:  # a listener (alerts, display) never stops trading
                self._log.error("report_listener.failed", error=f"{type(exc).__name__}: {exc}")

    async def start(self) -> None:
        """Call every strategy's `on_start` (a failure is isolated)."""
        for strategy in self.strategies.values():
            await self._hook(strategy, "on_start")

    async def stop(self) -> None:
        """Call every strategy's `on_stop` (a failure is isolated)."""
        for strategy in self.strategies.values():
            await self._hook(strategy, "on_stop")

    def reconfigure(
        self,
        *,
        risk: RiskChecker | None = None,
        broker: Broker | None = None,
        timeout_seconds: float | None = None,
        stuck_after: int | None = None,
        paused: Iterable[str] | None = None,
    ) -> None:
        """Change what a running engine works with; what is not given stays.

        The daemon's SIGHUP reload (risk, timeout, stuck ticks), its pause on a foreign
        signer (a broker that sends nothing), the paused strategies read under the lock.
        Synchronous: the changes land together, between two steps of the event loop.
        """
        if risk is not None:
            self.risk = risk
        if broker is not None:
            self.broker = broker
        if timeout_seconds is not None:
            self.timeout = timeout_seconds
        if stuck_after is not None:
            self.progress.stuck_after = stuck_after
        if paused is not None:
            self.paused = set(paused)

    async def add_strategy(self, strategy: Strategy) -> None:
        """Run one more strategy (fresh counters) and call its `on_start`."""
        self.strategies[strategy.instance] = strategy
        self.stats[strategy.instance] = StrategyStats()
        self.progress.forget(strategy.instance)
        await self._hook(strategy, "on_start")

    async def remove_strategy(self, name: str) -> None:
        """Call the strategy's `on_stop` and stop running it (its journal state stays)."""
        strategy = self.strategies.get(name)
        if strategy is None:
            return
        await self._hook(strategy, "on_stop")
        del self.strategies[name]
        self.stats.pop(name, None)
        self.progress.forget(name)

    async def _hook(self, strategy: Strategy, hook: str) -> None:
        try:
            ctx = await self.context(strategy)
            async with asyncio.timeout(self.timeout):
                await getattr(strategy, hook)(ctx)
        except Exception as exc:
            self._report(self._failed(strategy.instance, exc))
