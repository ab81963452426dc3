"""The engine: ticks strategies, checks and carries out their actions, polls orders.

One engine serves every way of running the bot — the real-time daemon, `bot once`, the
stepped driver of tests, demos and backtests — only the clock and the broker differ. A
tick: one `/prices` call (shared by every strategy ticking at that moment) → a frozen
`Context` → `on_tick` under a timeout → each returned action validated, risk-checked and
handed to the broker → the strategy's saved state stored (`state_store`: the journal, or a
dry run's in-memory overlay on it). A strategy that raises, times out or returns something
that is not a list of actions is isolated: logged, counted, skipped; the others go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final

from bot.api import ApiError, PanoraClient, SwapRequest
from bot.api.models import SwapResponseExactIn
from bot.aptos.address import Address
from bot.aptos.tokens import TokenBook, TokenLookupError
from bot.chain import NodeClient
from bot.clock import Clock
from bot.config import param_strings
from bot.engine.actions import Action, Swap, check_actions
from bot.engine.brokers import ActionOutcome, Broker, describe
from bot.engine.events import OrderEvent
from bot.engine.progress import ProgressTracker
from bot.engine.risk import RiskChecker, RiskRefusal
from bot.engine.state_store import JournalStateStore, StateStore
from bot.engine.strategy import Context, FillInfo, OrderInfo, PriceInfo, Strategy
from bot.engine.swap_bounds import SwapLimits, bounds_exact_out, usd_ratio
from bot.engine.tracker import OrderTracker, PollReport
from bot.journal import Journal
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
    """Strategies, their context, and what happens to their decisions."""

    def __init__(
        self,
        *,
        client: PanoraClient,
        journal: Journal,
        clock: Clock,
        wallet: str,
        tokens: TokenBook,
        broker: Broker,
        risk: RiskChecker,
        strategies: Iterable[Strategy],
        node: NodeClient | None = None,
        tracker: OrderTracker | None = None,
        timeout_seconds: float = 30.0,
        state_store: StateStore | None = None,
        stuck_after: int = 3,
        paused: Iterable[str] = (),
        convention: PriceConvention | None = None,
    ) -> None:
        self.client = client
        self.journal = journal
        self.clock = clock
        self.wallet = wallet
        self.tokens = tokens
        self.broker = broker
        self.risk = risk
        self.node = node
        self.tracker = tracker
        self.timeout = timeout_seconds
        self.state_store: StateStore = state_store or JournalStateStore(journal)
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
        self._prices: tuple[datetime, dict[str, PriceInfo]] | None = None
        self.last_poll_at: datetime | None = None
        """When the last order poll began (the heartbeat and alerts read it)."""
        self.last_poll_ok_at: datetime | None = None
        """When the last order poll that succeeded began."""
        self.report_listeners: list[Callable[[TickReport], None]] = []
        """Called with the report of every reaction to an order event and every failed
        start/stop hook (a tick's report goes to whoever called `tick`)."""
        self._log = get_logger("engine")
        if tracker is not None:
            tracker.subscribe(self._on_order_event)

    # --- context ----------------------------------------------------------------------

    async def _prices_now(self) -> dict[str, PriceInfo]:
        now = self.clock.now()
        if self._prices is not None and timedelta(0) <= now - self._prices[0] < _PRICES_SHARED:
            # One /prices call per tick moment, shared by the strategies ticking then and
            # the order events of the same poll (on a real clock no two reads are equal).
            return self._prices[1]
        listing = await self.client.get_prices(self._price_tokens())
        prices = {}
        for r in listing.records:
            key = r.token_address or r.fa_address
            if key:
                info = PriceInfo(key, r.symbol or "?", r.usd_price, r.price_change_24h)
                for name in {r.token_address, r.fa_address} - {None}:
                    prices[str(name)] = info
        self._prices = (now, prices)
        return prices

    def _price_tokens(self) -> list[str]:
        """The tokens a tick may price: those the strategies' parameters name, and APT.

        Only these are asked for, so a tick's `/prices` answer does not grow with the
        provider's whole token list.
        """
        names = [n for s in self.strategies.values() for n in param_strings(s.params.model_dump())]
        found = self.tokens.tokens_named([*names, "APT"])
        return sorted(found)

    async def _balances(self, names: Iterable[str]) -> dict[str, Decimal]:
        balances: dict[str, Decimal] = {}
        if self.node is None:
            return balances
        for token in self.tokens.tokens_named(names).values():
            try:
                units = await self.node.balance(Address.parse(self.wallet), token.address)
            except Exception as exc:  # a balance is informative, never fatal
                self._log.debug("balance.unavailable", token=token.symbol, error=str(exc))
                continue
            balances[token.address] = Decimal(units).scaleb(-token.decimals)
        return balances

    def _orders(self, strategies: list[str]) -> list[OrderInfo]:
        infos = []
        for name in dict.fromkeys(strategies):
            fills = self.journal.fills_by_order(name)  # one query, not one per order
            for o in self.journal.orders(strategy=name):
                records = fills.get((o.kind, o.order_id), [])
                infos.append(
                    OrderInfo(
                        o.kind,
                        o.order_id,
                        o.status,
                        o.from_token,
                        o.to_token,
                        o.amount_total,
                        o.amount_spent,
                        o.to_amount_received,
                        o.rate,
                        o.created_at,
                        o.strategy,
                        tuple(
                            FillInfo(
                                f.tx_id, f.type, f.from_amount, f.to_amount, f.fee_amount, f.time
                            )
                            for f in records
                        ),
                    )
                )
        return sorted(infos, key=lambda o: o.created_at, reverse=True)

    async def _quote(self, sell: str, buy: str, amount: Decimal) -> Decimal | None:
        try:
            response = await self.client.quote(
                SwapRequest(
                    self.tokens.find(sell).address,
                    self.tokens.find(buy).address,
                    from_amount=amount,
                )
            )
        except (ApiError, TokenLookupError, ValueError):
            return None
        return response.best.to_token_amount if isinstance(response, SwapResponseExactIn) else None

    async def context(self, strategy: Strategy) -> Context:
        """The frozen snapshot `strategy` sees now."""
        name = strategy.instance
        state = self.state_store.load(name)
        referenced = param_strings(strategy.params.model_dump())
        intents = self.journal.intent_states(name)
        # A dry run's shown actions count as its intents (never the journal's): a strategy
        # asking again for what it did not get sees them as asked, as it would live.
        intents |= self._shown.get(name, {})
        return Context(
            strategy=name,
            now=self.clock.now(),
            prices=await self._prices_now(),
            balances=await self._balances({"APT", *referenced}),
            orders=self._orders(strategy.order_sources()),
            state=state,
            log=get_logger("strategy", strategy=name),
            quote=self._quote,
            intents=intents,
        )

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
            actions = await asyncio.wait_for(strategy.on_tick(ctx), self.timeout)
            check_actions(actions)
        except Exception as exc:
            report = self._failed(name, exc)
        else:
            report = TickReport(name, ok=True)
            await self._act(name, actions, report)
            self.state_store.save(name, ctx.saved, at=self.clock.now())
        self.progress.record(report)
        return report

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
                "reference price", f"no price to bound an ExactOut swap of {buy.symbol}"
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
        """Poll the provider's orders (events go to the strategies owning them)."""
        if self.tracker is None:
            return None
        began = self.clock.now()
        self.last_poll_at = began
        report = await self.tracker.poll()
        self.last_poll_ok_at = began
        return report

    async def _on_order_event(self, event: OrderEvent) -> None:
        order = self.journal.order(event.kind, event.order_id)
        strategy = self.strategies.get(order.strategy or "") if order is not None else None
        if strategy is None or strategy.instance in self.paused:
            return
        try:
            ctx = await self.context(strategy)
            actions = await asyncio.wait_for(strategy.on_order_event(ctx, event), self.timeout)
            check_actions(actions)
        except Exception as exc:
            self._report(self._failed(strategy.instance, exc))
            return
        report = TickReport(strategy.instance, ok=True)
        await self._act(strategy.instance, actions, report)
        self._report(report)
        self.state_store.save(strategy.instance, ctx.saved, at=self.clock.now())

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
            await asyncio.wait_for(getattr(strategy, hook)(ctx), self.timeout)
        except Exception as exc:
            self._report(self._failed(strategy.instance, exc))
